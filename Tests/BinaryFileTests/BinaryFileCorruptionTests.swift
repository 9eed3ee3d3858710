import Foundation
import ObjectGraph
@testable import ObjectGraphBinaryFile
@testable import ObjectGraphBinaryFileFuzz
import Testing

/// Damaged, foreign and hostile files: each is refused with a typed error naming the problem.
@Suite("Binary store corruption")
struct BinaryFileCorruptionTests {
    typealias Support = BinaryFileTestSupport

    /// A small store of the fixture graph, as bytes.
    static func storeBytes(people: Int = 12) throws -> [UInt8] {
        let url = try Support.temporaryStore()
        defer { Support.remove(url) }
        let container = try Support.container(url, options: ["synchronous": "OFF"])
        let context = container.newBackgroundContext()
        try context.performAndWait { try FixtureGraph.populate(context, seed: 7, people: people) }
        container.close()
        return Array(try Data(contentsOf: url))
    }

    /// Opens `bytes` as a store file in a new coordinator and returns the error it gives.
    static func openError(_ bytes: [UInt8], model: ManagedObjectModel = FuzzInput.model) throws -> StoreError? {
        let url = try Support.temporaryStore()
        defer { Support.remove(url) }
        try Data(bytes).write(to: url)
        do {
            let container = try Support.container(url, model: model)
            container.close()
            return nil
        } catch let error as StoreError {
            return error
        }
    }

    static func problem(_ error: StoreError?) -> BinaryFileFormatError.Problem? {
        guard error?.code == .corrupt else { return nil }
        return (error?.underlying as? BinaryFileFormatError)?.problem
    }

    /// The error decoding `bytes` gives (nil if it decodes).
    static func decodeError(_ bytes: [UInt8]) -> StoreError? {
        do {
            _ = try BinaryFileStore.contents(ofFile: bytes, model: FuzzInput.model)
            return nil
        } catch {
            return error as? StoreError
        }
    }

    @Test("every byte of the file flipped, one at a time, is refused — the checksum covers all of it")
    func everyByteFlipped() throws {
        let bytes = try Self.storeBytes()
        #expect(bytes.count > 1000)
        var problems: [BinaryFileFormatError.Problem: Int] = [:]
        for position in bytes.indices {
            var damaged = bytes
            damaged[position] ^= UInt8(1 << (position % 8)) | 0x10
            // Every flip through the decoder; every 97th also through a real open.
            let error = try #require(position % 97 == 0 ? try Self.openError(damaged) : Self.decodeError(damaged), "a flip at byte \(position) went unnoticed")
            let problem = try #require(Self.problem(error), "a flip at byte \(position) gave \(error)")
            problems[problem, default: 0] += 1
        }
        #expect(problems[.notABinaryStore] == 8, "the magic bytes")
        #expect(problems[.unsupportedVersion] == 8, "version and flags")
        #expect((problems[.checksumMismatch] ?? 0) > bytes.count - 40, "everything else but the length field: \(problems)")
    }

    @Test("the file cut at many lengths, or lengthened, is refused as truncated or with trailing bytes")
    func truncatedAndExtended() throws {
        let bytes = try Self.storeBytes()
        for length in Array(0..<40) + Array(stride(from: 40, to: bytes.count, by: 7)) + [bytes.count - 1] {
            let cut = Array(bytes.prefix(length))
            let error = length % 10 == 0 ? try Self.openError(cut) : Self.decodeError(cut)
            #expect(Self.problem(error) == .truncated, "cut at \(length) of \(bytes.count): \(String(describing: error))")
        }
        for extra in [[0], [0, 0, 0, 0], Array(bytes.prefix(100))] as [[UInt8]] {
            #expect(Self.problem(try Self.openError(bytes + extra)) == .trailingBytes)
        }
    }

    @Test("a text file, an SQLite file and another version are refused by name; an empty file as truncated")
    func foreignFiles() throws {
        let text = try #require(try Self.openError(Array("just some text\n".utf8)))
        #expect(Self.problem(text) == .notABinaryStore)
        #expect(text.message.contains("not an ObjectGraph binary store"))
        #expect(Self.problem(try Self.openError(Array("SQLite format 3\u{0}".utf8) + [UInt8](repeating: 0, count: 84))) == .notABinaryStore)
        #expect(Self.problem(try Self.openError([])) == .truncated)
        var future = try Self.storeBytes()
        future[8] = 2
        let version = try #require(try Self.openError(future))
        #expect(Self.problem(version) == .unsupportedVersion)
        #expect(version.message.contains("format version 2"), "\(version.message)")
        #expect((version.underlying as? BinaryFileFormatError)?.offset == 8)
    }

    @Test("a sound store of another model is refused as an incompatible model, before its rows are read")
    func wrongModel() throws {
        let other = try ManagedObjectModel { m in m.entity("Person") { e in e.attribute("name", .string) } }
        let error = try #require(try Self.openError(try Self.storeBytes(), model: other))
        #expect(error.code == .incompatibleModel)
        #expect(error.message.contains("was written by model"))
    }

    @Test("content damaged behind a valid checksum is decoded or refused by the decoder, with an offset inside the content")
    func damageBehindValidChecksum() throws {
        let bytes = try Self.storeBytes()
        var malformed = 0
        for position in stride(from: 24, to: bytes.count - 4, by: 3) {
            for value in [0x00, 0x7F, 0xFF] as [UInt8] where bytes[position] != value {
                var damaged = bytes
                damaged[position] = value
                let repaired = try #require(FuzzInput.repairFrame(damaged))
                guard let error = Self.decodeError(repaired) else { continue }  // e.g. another valid string
                guard error.code != .incompatibleModel else { continue }  // the model hash itself changed
                let problem = try #require(error.underlying as? BinaryFileFormatError, "byte \(position) = \(value): \(error)")
                #expect(problem.problem == .malformed, "byte \(position) = \(value): \(problem)")
                #expect((24..<bytes.count - 4).contains(problem.offset), "byte \(position) = \(value): \(problem)")
                malformed += 1
            }
        }
        #expect(malformed > 500, "the structure checks catch damage the checksum was repaired over")
    }

    @Test("deterministic fuzz smoke run: 3,000 mutated inputs, each decoded or refused with a typed error")
    func fuzzSmoke() throws {
        let seeds = try FuzzHarness.seeds(count: 4, seed: 11)
        let tally = FuzzHarness.run(seeds: seeds, iterations: 3_000, seconds: nil, seed: 0x5EED)
        #expect(tally.values.reduce(0, +) >= 3_000)
        #expect(tally[.refused(.malformed), default: 0] > 0, "mutations reach the content decoder: \(tally)")
        #expect(tally[.refused(.checksumMismatch), default: 0] > 0, "\(tally)")
    }

    @Test("a key counter at the end of Int64 (behind a sound checksum) is a typed error at the next insert, not an overflow crash")
    func exhaustedKeyCounter() throws {
        let model = try ManagedObjectModel { m in m.entity("Note") { e in e.attribute("text", .string) } }
        let url = try Support.temporaryStore()
        defer { Support.remove(url) }
        let container = try Support.container(url, model: model)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            try context.insertObject(entityName: "Note").setValue("kept", forKey: "text")
            try context.save()
        }
        var contents = try Support.contents(container)
        container.close()
        contents.nextPrimaryKey["Note"] = Int64.max
        try Data(try BinaryFileEncoder(model: model).encode(contents).joined()).write(to: url)
        let before = try Data(contentsOf: url)

        let reopened = try Support.container(url, model: model)
        let writer = reopened.newBackgroundContext()
        let note = try writer.performAndWait { try writer.insertObject(entityName: "Note") }
        let failure = writer.performAndWait { () -> StoreError? in
            try? note.setValue("new", forKey: "text")
            return #expect(throws: StoreError.self) { try writer.save() }
        }
        let message = failure?.message ?? ""
        #expect(failure?.code == .corrupt && message.contains(url.path) && message.contains("Note"), "names the file and hierarchy: \(message)")
        #expect(writer.performAndWait { writer.insertedObjects } == [note], "the context keeps its insert")
        reopened.close()
        #expect(try Data(contentsOf: url) == before, "the file is left as it was")
    }

    @Test("a file whose rows came without their key counter, or with a counter below 1 and no rows, hands out keys from past its rows or from 1: the first failed every insert on an existing key, the second gave keys below 1", arguments: [Int64?.none, 0, -5])
    func missingOrNonPositiveKeyCounter(counter: Int64?) throws {
        let model = try ManagedObjectModel { m in
            m.entity("Note") { e in e.attribute("text", .string) }
            m.entity("Tag") { e in e.attribute("name", .string) }
        }
        let url = try Support.temporaryStore()
        defer { Support.remove(url) }
        let container = try Support.container(url, model: model)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for text in ["one", "two"] { try context.insertObject(entityName: "Note").setValue(text, forKey: "text") }
            try context.save()
        }
        var contents = try Support.contents(container)
        container.close()
        // No counter for the Notes' two rows; Tag's counter (it has no rows) as given.
        contents.nextPrimaryKey["Note"] = nil
        contents.nextPrimaryKey["Tag"] = counter
        try Data(try BinaryFileEncoder(model: model).encode(contents).joined()).write(to: url)

        let reopened = try Support.container(url, model: model)
        defer { reopened.close() }
        let writer = reopened.newBackgroundContext()
        let keys = try writer.performAndWait {
            let note = try writer.insertObject(entityName: "Note")
            try note.setValue("three", forKey: "text")
            let tag = try writer.insertObject(entityName: "Tag")
            try tag.setValue("first", forKey: "name")
            try writer.save()
            return [note.objectID.primaryKey, tag.objectID.primaryKey]
        }
        #expect(keys == [3, 1])
        let reader = reopened.newBackgroundContext()
        #expect(try reader.performAndWait { try reader.count(for: FetchRequest<ManagedObject>(entityName: "Note")) } == 3)
    }

    @Test("a key counter not past its table's last key is refused as malformed at the counter, not left to fail every insert")
    func keyCounterBehindItsRows() throws {
        var contents = try BinaryFileStore.contents(ofFile: try Self.storeBytes(people: 4), model: FuzzInput.model)
        let root = try #require(contents.tables.first { !$0.value.isEmpty }?.key)
        contents.nextPrimaryKey[root] = contents.tables[root]?.keys.max()
        let bytes = Array(try BinaryFileEncoder(model: FuzzInput.model).encode(contents).joined())
        let error = try Self.openError(bytes)
        let problem = try #require(error?.underlying as? BinaryFileFormatError, "\(String(describing: error))")
        #expect(problem.problem == .malformed && problem.detail.contains("key counter of \(root)"), "\(problem)")
    }

    @Test("a row version outside 1..<Int64.max (behind a sound checksum) is refused as malformed at the version, where a negative one read as no saved row and one at Int64.max overflowed at the next save; one in range decodes", arguments: [Int64(0), -5, Int64.max, 7])
    func versionOutsideItsRange(version: Int64) throws {
        var contents = try BinaryFileStore.contents(ofFile: try Self.storeBytes(people: 4), model: FuzzInput.model)
        let root = try #require(contents.tables.first { !$0.value.isEmpty }?.key)
        let pk = try #require(contents.tables[root]?.keys.min())
        contents.tables[root]?[pk]?.version = version
        let bytes = Array(try BinaryFileEncoder(model: FuzzInput.model).encode(contents).joined())
        guard let error = Self.decodeError(bytes) else {
            #expect(version == 7)
            #expect(try BinaryFileStore.contents(ofFile: bytes, model: FuzzInput.model).tables[root]?[pk]?.version == 7)
            return
        }
        let problem = try #require(error.underlying as? BinaryFileFormatError, "\(error)")
        #expect(version != 7 && problem.problem == .malformed && problem.detail.contains("the version of") && problem.detail.contains("row \(pk)"), "\(problem)")
    }

    @Test("nil in a required attribute (behind a sound checksum) is refused as malformed at the value, where it read as nil and stopped the process at a non-optional typed accessor", arguments: [true, false])
    func nilInARequiredAttribute(damaged: Bool) throws {
        let model = try ManagedObjectModel { m in m.entity("Tag") { e in e.attribute("name", .string) } }
        let url = try Support.temporaryStore()
        defer { Support.remove(url) }
        let container = try Support.container(url, model: model)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            try context.insertObject(entityName: "Tag").setValue("Zq9", forKey: "name")
            try context.save()
        }
        container.close()
        var bytes = Array(try Data(contentsOf: url))
        // The value: the string tag, its length and its bytes, replaced by the nil tag.
        let value: [UInt8] = [BinaryFileFormat.Tag.string.rawValue, 3] + Array("Zq9".utf8)
        let start = try #require((0...(bytes.count - value.count)).first { Array(bytes[$0..<($0 + value.count)]) == value })
        if damaged { bytes.replaceSubrange(start..<(start + value.count), with: [BinaryFileFormat.Tag.null.rawValue]) }
        let repaired = try #require(FuzzInput.repairFrame(bytes))
        do {
            let contents = try BinaryFileStore.contents(ofFile: repaired, model: model)
            #expect(!damaged, "decoded \(contents)")
        } catch let error as StoreError {
            let problem = error.underlying as? BinaryFileFormatError
            #expect(damaged && problem?.problem == .malformed && problem?.detail.contains("Tag.name") == true && problem?.detail.contains("required") == true, "\(error)")
            #expect(problem.map { (start..<(start + 1)).contains($0.offset) } == true, "the offset is the value's: \(String(describing: problem))")
        }
    }
}
