import Foundation
import ObjectGraph

/// Decodes a binary store file (see ``BinaryFileFormat``) into
/// ``ObjectGraph/AtomicStoreContents``, trusting nothing in it.
///
/// The frame is checked first — magic, version, flags, length against the file's size, then
/// the CRC-32 — and only then the content, whose every count is bounded by the bytes left
/// (``ByteReader``) and whose every entity, attribute count, value kind and relationship is
/// checked against the model, so that the rows handed to the atomic-store base can be indexed
/// by slot without a check. Problems are ``BinaryFileFormatError``s.
struct BinaryFileDecoder {
    let model: ManagedObjectModel

    /// The content of a file whose frame and checksum are sound, and where it starts.
    struct Frame {
        let contentStart: Int
        let contentEnd: Int
    }

    /// Checks magic, version, flags, length and checksum.
    static func frame(_ file: UnsafeRawBufferPointer) throws -> Frame {
        let magic = BinaryFileFormat.magic
        let prefix = Array(file.prefix(magic.count))
        guard prefix == Array(magic.prefix(prefix.count)) else {
            let shown = prefix.map { String(format: "%02X", $0) }.joined(separator: " ")
            throw BinaryFileFormatError(.notABinaryStore, at: 0, "the file starts with \(shown), not the binary store's magic bytes 89 4F 47 42 0D 0A 1A 0A")
        }
        guard file.count >= BinaryFileFormat.minimumSize else {
            throw BinaryFileFormatError(.truncated, at: file.count, "the file has \(file.count) bytes; a binary store has at least \(BinaryFileFormat.minimumSize)")
        }
        var header = ByteReader(file, offset: magic.count)
        let version = try header.fixed32("the format version")
        guard version == BinaryFileFormat.version else {
            throw BinaryFileFormatError(.unsupportedVersion, at: 8, "format version \(version); this build reads version \(BinaryFileFormat.version)")
        }
        let flags = try header.fixed32("the flags")
        guard flags == 0 else {
            throw BinaryFileFormatError(.unsupportedVersion, at: 12, "flags 0x\(String(flags, radix: 16)) are set; version \(BinaryFileFormat.version) defines none")
        }
        let length = try header.fixed64("the content length")
        let available = UInt64(file.count - BinaryFileFormat.minimumSize)
        guard length <= available else {
            throw BinaryFileFormatError(.truncated, at: file.count, "the header promises \(length) bytes of content but the file holds \(available)")
        }
        guard length == available else {
            throw BinaryFileFormatError(.trailingBytes, at: BinaryFileFormat.headerSize + Int(length) + BinaryFileFormat.trailerSize, "\(available - length) bytes follow the checksum")
        }
        let end = BinaryFileFormat.headerSize + Int(length)
        var trailer = ByteReader(file, offset: end)
        let stored = try trailer.fixed32("the checksum")
        let computed = CRC32.checksum(UnsafeRawBufferPointer(rebasing: file[0..<end]))
        guard stored == computed else {
            throw BinaryFileFormatError(.checksumMismatch, at: end, String(format: "the stored CRC-32 is %08X but the header and content give %08X", stored, computed))
        }
        return Frame(contentStart: BinaryFileFormat.headerSize, contentEnd: end)
    }

    /// Reads the metadata at the start of the content.
    static func metadata(_ reader: inout ByteReader) throws -> StoreMetadata {
        let identifier = try reader.string("the store identifier")
        let hash = try reader.string("the model version hash")
        var user: [String: String] = [:]
        let count = try reader.count("the number of user metadata entries", minimumSize: 2)
        for _ in 0..<count {
            let start = reader.offset
            let key = try reader.string("a user metadata key")
            guard user.updateValue(try reader.string("the user metadata value of \(key)"), forKey: key) == nil else {
                throw reader.fail("the user metadata key \(key) appears twice", at: start)
            }
        }
        return StoreMetadata(storeIdentifier: identifier, modelVersionHash: hash, userInfo: user)
    }

    /// A content reader positioned after the frame's header (the buffer ends at the checksum).
    static func contentReader(_ file: UnsafeRawBufferPointer, _ frame: Frame) -> ByteReader {
        ByteReader(UnsafeRawBufferPointer(rebasing: file[0..<frame.contentEnd]), offset: frame.contentStart)
    }

    /// Decodes a whole file. `expectedModelHash` (when given) is checked right after the
    /// metadata: a store of another model cannot be decoded against this one.
    func decode(_ file: UnsafeRawBufferPointer, expectedModelHash: String?) throws -> AtomicStoreContents {
        let frame = try Self.frame(file)
        var reader = Self.contentReader(file, frame)
        let metadata = try Self.metadata(&reader)
        if let expectedModelHash, metadata.modelVersionHash != expectedModelHash {
            throw ModelMismatch(storedHash: metadata.modelVersionHash)
        }
        var contents = AtomicStoreContents(metadata: metadata)
        let counters = try reader.count("the number of key counters", minimumSize: 2)
        var counterOffsets: [String: Int] = [:]
        for _ in 0..<counters {
            let start = reader.offset
            let root = try reader.string("a key counter's entity")
            counterOffsets[root] = start
            guard contents.nextPrimaryKey.updateValue(try reader.signed("the key counter of \(root)"), forKey: root) == nil else {
                throw reader.fail("the key counter of \(root) appears twice", at: start)
            }
        }
        let entityNames = try Self.names(&reader, "entity names")
        let entities = entityNames.map { name -> EntityDescription? in model.entity(named: name) }
        let storeNames = [metadata.storeIdentifier] + (try Self.names(&reader, "store identifiers"))
        let references = References(entityNames: entityNames, entities: entities, storeNames: storeNames)

        let tableCount = try reader.count("the number of row tables", minimumSize: 3)
        for _ in 0..<tableCount {
            let start = reader.offset
            let rootIndex = try reader.index("a row table's entity", below: entityNames.count)
            guard let root = entities[rootIndex], root.parentName == nil else {
                throw reader.fail("row table of \(entityNames[rootIndex]), which is not a root entity of the model", at: start)
            }
            guard contents.tables[root.name] == nil else { throw reader.fail("two row tables for \(root.name)", at: start) }
            let table = try table(of: root, &reader, references)
            // A counter not past the table's last key hands out the keys of stored rows: every
            // insert failed with "a row with that key exists" until failed saves had
            // allocated past them. Every save writes counters past its keys.
            if let counter = contents.nextPrimaryKey[root.name], let last = table.keys.max(), counter <= last {
                throw reader.fail("the key counter of \(root.name) is \(counter), not past its last row's key \(last)", at: counterOffsets[root.name] ?? start)
            }
            contents.tables[root.name] = table
        }

        let relationshipCount = try reader.count("the number of relationship tables", minimumSize: 3)
        for _ in 0..<relationshipCount {
            try relationshipTable(&reader, references, into: &contents.tables)
        }
        guard reader.remaining == 0 else {
            throw reader.fail("\(reader.remaining) bytes follow the last relationship table")
        }
        return contents
    }

    /// The file's store has another model version hash.
    struct ModelMismatch: Error {
        let storedHash: String
    }

    private static func names(_ reader: inout ByteReader, _ what: String) throws -> [String] {
        let count = try reader.count("the number of \(what)")
        var names: [String] = []
        names.reserveCapacity(count)
        for _ in 0..<count { names.append(try reader.string("one of the \(what)")) }
        return names
    }
}
