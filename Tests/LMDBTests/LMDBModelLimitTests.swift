import Foundation
import ObjectGraph
import ObjectGraphLMDB
import Testing

@Suite("LMDB model limits")
struct LMDBModelLimitTests {
    @Test("an entity with more attributes than a row's 16-bit count is refused when the store opens")
    func tooManyAttributes() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Wide") { e in for index in 0...Int(UInt16.max) { e.attribute("a\(index)", .integer64, optional: true) } }
        }
        let url = try LMDBFixture.temporaryFile()
        do {
            _ = try PersistentContainer(model: model, stores: [.lmdb(at: url)])
            Issue.record("a row of 65,536 attributes was accepted")
        } catch let error as StoreError {
            #expect(error.code == .incompatibleModel)
            #expect(error.message.contains("Wide") && error.message.contains(url.path))
        }
    }

    /// The refusal of opening `model`, checked to leave no data file behind.
    static func refusal(_ model: ManagedObjectModel, options: [String: String] = [:]) throws -> StoreError? {
        let url = try LMDBFixture.temporaryFile()
        let error = #expect(throws: StoreError.self) { _ = try PersistentContainer(model: model, stores: [.lmdb(at: url, options: options)]) }
        #expect(!FileManager.default.fileExists(atPath: url.path), "no file is made")
        #expect(error?.message.contains(url.path) == true, "\(String(describing: error))")
        return error
    }

    @Test("a database name longer than LMDB's keys is refused, naming the entity, the property and the limit; one of exactly that length opens")
    func longDatabaseName() throws {
        let entity = "E" + String(repeating: "x", count: 259), relationship = "r" + String(repeating: "y", count: 259)
        let model = try ManagedObjectModel { m in
            m.entity(entity) { e in e.toMany(relationship, "Tag") }
            m.entity("Tag") { e in e.attribute("label", .string) }
        }
        let error = try Self.refusal(model)
        #expect(error?.code == .incompatibleModel)
        let message = error?.message ?? ""
        #expect(message.contains("relationship \(relationship) of entity \(entity)") && message.contains("526 bytes") && message.contains("at most 511"), "\(message)")
        try Self.storesRowOfLongestName()
    }

    @Test("names are measured in UTF-8 bytes, not characters")
    func multibyteName() throws {
        // 316 characters, 516 bytes.
        let entity = String(repeating: "é", count: 200), attribute = String(repeating: "a", count: 110)
        let model = try ManagedObjectModel { m in m.entity(entity) { e in e.attribute(attribute, .integer64, optional: true, indexed: true) } }
        let error = try Self.refusal(model)
        #expect(error?.code == .incompatibleModel)
        #expect(error?.message.contains("attribute \(attribute) of entity \(entity) needs a name of 516 bytes") == true, "\(String(describing: error))")
    }

    /// Checks that a database name of exactly LMDB's longest key opens and stores rows.
    static func storesRowOfLongestName() throws {
        // og:rows: and 503 bytes: 511.
        let entity = "E" + String(repeating: "x", count: 502)
        let model = try ManagedObjectModel { m in m.entity(entity) { e in e.attribute("value", .integer64) } }
        let url = try LMDBFixture.temporaryFile()
        let container = try PersistentContainer(model: model, stores: [.lmdb(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        let count = try context.performAndWait { () throws -> Int in
            let row = try context.insertObject(entityName: entity)
            try row.setValue(Int64(7), forKey: "value")
            try context.save()
            context.reset()
            return try context.count(for: FetchRequest<ManagedObject>(entityName: entity))
        }
        #expect(count == 1)
    }

    /// One entity with `attributes` indexed attributes: a layout of `attributes + 2` named
    /// databases (the metadata, the rows, one index each).
    static func indexedModel(attributes: Int) throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Wide") { e in for index in 0..<attributes { e.attribute("a\(index)", .integer64, optional: true, indexed: true) } }
        }
    }

    @Test("a model needing more named databases than the environment holds is refused; one needing exactly as many opens")
    func databaseCount() throws {
        let error = try Self.refusal(try Self.indexedModel(attributes: 4095))
        #expect(error?.code == .incompatibleModel)
        #expect(error?.message.contains("needs 4097 named databases") == true && error?.message.contains("at most 4096") == true, "\(String(describing: error))")
        let url = try LMDBFixture.temporaryFile()
        let container = try PersistentContainer(model: try Self.indexedModel(attributes: 4094), stores: [.lmdb(at: url)])
        container.close()
    }

    @Test("option index: all counts the indexes it adds")
    func databaseCountIndexingEverything() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Wide") { e in for index in 0..<4095 { e.attribute("a\(index)", .integer64, optional: true) } }
        }
        let error = try Self.refusal(model, options: ["index": "all"])
        #expect(error?.code == .incompatibleModel)
        #expect(error?.message.contains("with option index: all") == true, "\(String(describing: error))")
    }
}
