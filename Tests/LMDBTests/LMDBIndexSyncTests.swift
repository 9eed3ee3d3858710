import Foundation
import ObjectGraph
import ObjectGraphLMDB
import Testing

/// Which attributes are indexed is not part of the model version hash, so an LMDB store can be
/// reopened with an index its earlier openers did not keep: the index was created empty (or
/// left stale), and fetches through it missed rows (an audit). The store rebuilds such an index
/// at open.
@Suite("LMDB indexes added after the rows")
struct LMDBIndexSyncTests {
    static func model(indexed: Bool = false, unique: Bool = false) throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Item") { e in
                e.attribute("name", .string, optional: true, indexed: indexed)
                if unique { e.unique("name") }
            }
            m.entity("Special", parent: "Item") { e in e.attribute("level", .integer64, optional: true) }
        }
    }

    static func withContext<T>(_ model: ManagedObjectModel, _ url: URL, options: [String: String] = [:], _ body: (ManagedObjectContext) throws -> T) throws -> T {
        let container = try PersistentContainer(model: model, stores: [.lmdb(at: url, options: options)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        return try context.performAndWait { try body(context) }
    }

    static func insert(_ names: [String], entity: String = "Item", model: ManagedObjectModel, url: URL, options: [String: String] = [:]) throws {
        try withContext(model, url, options: options) { context in
            for name in names { try context.insertObject(entityName: entity).setValue(name, forKey: "name") }
            try context.save()
        }
    }

    static func names(_ model: ManagedObjectModel, _ url: URL, options: [String: String] = [:], _ predicate: FetchPredicate) throws -> [String] {
        try withContext(model, url, options: options) { context in
            try context.fetch(FetchRequest<ManagedObject>(entityName: "Item", predicate: predicate, sortKeys: [SortKey("name")]))
                .map { try $0.value(forKey: "name") as? String ?? "" }
        }
    }

    @Test("marking an attribute indexed on an existing store finds its rows (sub-entities' too)")
    func indexAddedLater() throws {
        let url = try LMDBFixture.temporaryFile()
        try Self.insert(["alpha", "beta"], model: try Self.model(), url: url)
        try Self.insert(["alpha"], entity: "Special", model: try Self.model(), url: url)
        #expect(try Self.model(indexed: true).versionHash == (try Self.model()).versionHash)
        #expect(try Self.names(try Self.model(indexed: true), url, .key("name") == "alpha") == ["alpha", "alpha"])
        #expect(try Self.names(try Self.model(indexed: true), url, .key("name") >= "b") == ["beta"])
    }

    @Test("opening an existing store with option index=all finds its rows")
    func indexAllLater() throws {
        let url = try LMDBFixture.temporaryFile()
        try Self.insert(["alpha", "beta"], model: try Self.model(), url: url)
        #expect(try Self.names(try Self.model(), url, options: ["index": "all"], .key("name") == "alpha") == ["alpha"])
    }

    @Test("an index an opener did not maintain is rebuilt when it is used again")
    func indexDroppedThenReadded() throws {
        let url = try LMDBFixture.temporaryFile()
        try Self.insert(["alpha"], model: try Self.model(indexed: true), url: url)
        try Self.withContext(try Self.model(), url) { context in
            let item = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")).first)
            try item.setValue("gamma", forKey: "name")
            try context.insertObject(entityName: "Item").setValue("delta", forKey: "name")
            try context.save()
        }
        let indexed = try Self.model(indexed: true)
        #expect(try Self.names(indexed, url, .key("name") == "gamma") == ["gamma"])
        #expect(try Self.names(indexed, url, .key("name") == "delta") == ["delta"])
        #expect(try Self.names(indexed, url, .key("name") == "alpha") == [])
    }

    @Test("a uniqueness constraint added on an existing store is enforced against its rows")
    func uniqueAddedLater() throws {
        let url = try LMDBFixture.temporaryFile()
        try Self.insert(["alpha"], model: try Self.model(), url: url)
        let constrained = try Self.model(unique: true)
        #expect(constrained.versionHash == (try Self.model()).versionHash)
        #expect(throws: ValidationError.self) { try Self.insert(["alpha"], model: constrained, url: url) }
        #expect(try Self.names(constrained, url, .key("name") == "alpha") == ["alpha"])
    }
}
