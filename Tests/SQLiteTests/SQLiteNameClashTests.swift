import Foundation
import ObjectGraph
import ObjectGraphSQLite
import Testing

/// Models whose names SQLite cannot tell apart: refused when the store opens, with a typed
/// error naming both, before any file is made (the creation of the file failed half-way with
/// SQLite's "duplicate column name" and the whole creation script in the message).
@Suite("SQLite names that differ only in case")
struct SQLiteNameClashTests {
    static func refusal(_ build: (ModelBuilder) -> Void) throws -> StoreError? {
        let url = try SQLiteStoreTests.temporaryFile()
        let model = try ManagedObjectModel(build)
        let error = #expect(throws: StoreError.self) { _ = try PersistentContainer(model: model, stores: [.sqlite(at: url)]) }
        #expect(!FileManager.default.fileExists(atPath: url.path), "no file is left behind")
        return error
    }

    @Test("two attributes of one entity")
    func attributes() throws {
        let error = try Self.refusal { m in
            m.entity("Item") { e in
                e.attribute("name", .string)
                e.attribute("Name", .string)
            }
        }
        #expect(error?.code == .incompatibleModel)
        #expect(error?.message.contains("Item's attributes name and Name") == true, "\(String(describing: error))")
    }

    @Test("two relationships of one entity")
    func relationships() throws {
        let error = try Self.refusal { m in
            m.entity("Item") { e in
                e.toMany("tags", "Tag")
                e.toMany("TAGS", "Tag")
            }
            m.entity("Tag") { e in e.attribute("label", .string) }
        }
        #expect(error?.code == .incompatibleModel)
        #expect(error?.message.contains("Item's relationships") == true, "\(String(describing: error))")
    }

    @Test("two entities, and entities named as SQLite's or the store's own tables")
    func entities() throws {
        let twins = try Self.refusal { m in
            m.entity("Item") { e in e.attribute("name", .string) }
            m.entity("item") { e in e.attribute("name", .string) }
        }
        #expect(twins?.code == .incompatibleModel)
        #expect(twins?.message.contains("entities Item and item") == true, "\(String(describing: twins))")
        for name in ["sqlite_Things", "OG_Metadata"] {
            let reserved = try Self.refusal { m in m.entity(name) { e in e.attribute("x", .string) } }
            #expect(reserved?.code == .incompatibleModel)
            #expect(reserved?.message.contains("entity \(name)") == true, "\(String(describing: reserved))")
        }
    }

    @Test("names that SQLite does tell apart are kept")
    func distinctNames() throws {
        let url = try SQLiteStoreTests.temporaryFile()
        // The same name in two entities, and letters outside ASCII, which SQLite does not fold.
        let model = try ManagedObjectModel { m in
            m.entity("Item") { e in
                e.attribute("name", .string)
                e.attribute("é", .string, optional: true)
                e.attribute("É", .string, optional: true)
            }
            m.entity("Other") { e in e.attribute("Name", .string) }
        }
        let container = try PersistentContainer(model: model, stores: [.sqlite(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        let stored = try context.performAndWait { () throws -> [String?] in
            let item = try context.insertObject(entityName: "Item")
            for (key, value) in [("name", "n"), ("é", "small"), ("É", "capital")] { try item.setValue(value, forKey: key) }
            try context.save()
            context.reset()
            let fetched = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")).first)
            return try ["é", "É"].map { try fetched.value(forKey: $0) as? String }
        }
        #expect(stored == ["small", "capital"], "each column keeps its own value")
    }
}
