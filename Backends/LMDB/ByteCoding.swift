import Foundation

/// Appends fixed-width big-endian integers and length-prefixed bytes to an array: the
/// building block of keys. Rows are encoded into ``RowBuffer``, which writes the same bytes.
struct ByteWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 64) { bytes.reserveCapacity(capacity) }

    mutating func u8(_ value: UInt8) { bytes.append(value) }

    // Whole integers are appended as their big-endian bytes in one copy: appending them a
    // byte at a time, each append checking capacity, was a fifth of encoding a row (perf).
    mutating func u16(_ value: UInt16) { withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) } }

    mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) } }

    mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) } }

    /// A signed integer whose big-endian bytes sort like the numbers (sign bit flipped).
    mutating func orderedInt64(_ value: Int64) { u64(UInt64(bitPattern: value) ^ (1 << 63)) }

    mutating func blob<C: Collection>(_ data: C) where C.Element == UInt8 {
        u32(UInt32(data.count))
        bytes.append(contentsOf: data)
    }

    /// A string as a blob of its UTF-8 bytes, copied from the string's own storage (not
    /// through an array made for the purpose).
    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            u32(UInt32(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }
}

/// Reads what ``ByteWriter`` wrote, from bytes in the map; every read is bounds-checked, so a
/// damaged value is a thrown error rather than a crash.
struct ByteReader {
    struct Truncated: Error {}
    /// A string's bytes are not UTF-8.
    struct NotUTF8: Error {}

    let buffer: UnsafeRawBufferPointer
    var offset = 0

    init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

    var isAtEnd: Bool { offset >= buffer.count }

    @inline(__always)
    mutating func u8() throws -> UInt8 {
        guard offset < buffer.count else { throw Truncated() }
        defer { offset += 1 }
        return buffer[offset]
    }

    // Whole integers are loaded at once (bounds checked first), not assembled byte by byte.
    @inline(__always)
    mutating func u16() throws -> UInt16 {
        guard offset + 2 <= buffer.count else { throw Truncated() }
        defer { offset += 2 }
        return UInt16(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    @inline(__always)
    mutating func u32() throws -> UInt32 {
        guard offset + 4 <= buffer.count else { throw Truncated() }
        defer { offset += 4 }
        return UInt32(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inline(__always)
    mutating func u64() throws -> UInt64 {
        guard offset + 8 <= buffer.count else { throw Truncated() }
        defer { offset += 8 }
        return UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inline(__always)
    mutating func orderedInt64() throws -> Int64 { Int64(bitPattern: try u64() ^ (1 << 63)) }

    @inline(__always)
    mutating func blob() throws -> UnsafeRawBufferPointer {
        let count = Int(try u32())
        guard offset + count <= buffer.count else { throw Truncated() }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count])
    }

    /// The next string; bytes that are not UTF-8 are damage (no save writes them), refused
    /// rather than repaired into other text.
    @inline(__always)
    mutating func string() throws -> String {
        guard let string = String(storedUTF8: try blob()) else { throw NotUTF8() }
        return string
    }
}

/// Big-endian keys of primary keys.
enum PrimaryKeyBytes {
    /// The 8-byte key of `pk` (sign bit flipped, so keys sort like the numbers).
    static func encode(_ pk: Int64) -> [UInt8] {
        var writer = ByteWriter(capacity: 8)
        writer.orderedInt64(pk)
        return writer.bytes
    }

    /// `body` given the 8-byte key of `pk` in memory on the stack: looking a row up by key
    /// then allocates nothing (``encode(_:)`` built an array per lookup, one per fault).
    @inline(__always)
    static func withKey<T>(_ pk: Int64, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let key = (UInt64(bitPattern: pk) ^ (1 << 63)).bigEndian
        return try withUnsafeBytes(of: key, body)
    }

    /// The primary key `bytes` hold: exactly 8 bytes, so a longer (damaged) key is refused
    /// rather than read as another row's.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> Int64 {
        guard bytes.count == 8 else { throw ByteReader.Truncated() }
        var reader = ByteReader(bytes)
        return try reader.orderedInt64()
    }
}
