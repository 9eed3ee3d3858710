import Foundation
import ObjectGraph
import ObjectGraphSQLite
import Testing

/// A root entity whose rows have no column of their own (it holds only to-manys, kept in join
/// tables) gets a table like any other; a file made before such roots got one is given it when
/// it opens, since its model hash is this model's.
@Suite("SQLite store: tables of column-less roots")
struct SQLiteColumnlessTableTests {
    /// With `hierarchy`, the column-less root has a sub-entity (its table then holds two
    /// entities and is indexed by entity).
    static func model(hierarchy: Bool = false) throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Shelf") { e in e.toMany("tags", "Tag") }
            if hierarchy { m.entity("WideShelf", parent: "Shelf") { e in e.toMany("labels", "Tag") } }
            m.entity("Tag") { e in e.attribute("label", .string) }
        }
    }

    static func tables(_ url: URL) -> Set<String> { Set(SQLiteStoreTests.tables(url)) }

    @Test("a file without the table of a column-less root gets it when it opens; its objects are then inserted, saved and read back, where every insert failed", arguments: [false, true])
    func madeAtOpen(hierarchy: Bool) throws {
        let url = try SQLiteStoreTests.temporaryFile()
        let seeding = try PersistentContainer(model: try Self.model(hierarchy: hierarchy), stores: [.sqlite(at: url)])
        let seeder = seeding.newBackgroundContext()
        try seeder.performAndWait {
            try seeder.insertObject(entityName: "Tag").setValue("kept", forKey: "label")
            try seeder.save()
        }
        seeding.close()
        #expect(Self.tables(url).contains("Shelf"), "a new file has it")
        try SQLiteDamagedStoreTests.execute(url, "DROP TABLE \"Shelf\"")
        try #require(!Self.tables(url).contains("Shelf"))

        let container = try PersistentContainer(model: try Self.model(hierarchy: hierarchy), stores: [.sqlite(at: url)])
        #expect(Self.tables(url).contains("Shelf"), "made at the open")
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let tag = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Tag")).first)
            let shelf = try context.insertObject(entityName: hierarchy ? "WideShelf" : "Shelf")
            try shelf.setValue(Set([tag]), forKey: "tags")
            try context.save()
        }
        container.close()
        let reopened = try PersistentContainer(model: try Self.model(hierarchy: hierarchy), stores: [.sqlite(at: url)])
        defer { reopened.close() }
        let reader = reopened.newBackgroundContext()
        let labels = try reader.performAndWait {
            try reader.fetch(FetchRequest<ManagedObject>(entityName: "Shelf")).map { shelf in
                try (shelf.value(forKey: "tags") as? Set<ManagedObject> ?? []).map { try $0.value(forKey: "label") as? String }
            }
        }
        #expect(labels == [["kept"]])
    }

    @Test("a file of another model lacking the table is left untouched (no table, and no write lock taken): the open is refused as incompatible")
    func otherModelUntouched() throws {
        let url = try SQLiteStoreTests.temporaryFile()
        let other = try ManagedObjectModel { m in m.entity("Tag") { e in e.attribute("label", .string) } }
        try PersistentContainer(model: other, stores: [.sqlite(at: url)]).close()
        let error = #expect(throws: StoreError.self) {
            _ = try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: url)])
        }
        #expect(error?.code == .incompatibleModel, "\(String(describing: error))")
        #expect(!Self.tables(url).contains("Shelf"))
    }
}
