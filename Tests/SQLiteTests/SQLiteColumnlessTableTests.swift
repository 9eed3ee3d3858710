import Foundation
import ObjectGraph
import ObjectGraphSQLite
import Testing

/// A root entity whose rows have no column of their own (it holds only to-manys, kept in join
/// tables) gets a table like any other; a file made before such roots got one is given it when
/// it opens, since its model hash is this model's.
@Suite("SQLite store: tables of column-less roots")
struct SQLiteColumnlessTableTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Shelf") { e in e.toMany("tags", "Tag") }
            m.entity("Tag") { e in e.attribute("label", .string) }
        }
    }

    static func tables(_ url: URL) -> Set<String> { Set(SQLiteStoreTests.tables(url)) }

    @Test("a file without the table of a column-less root gets it when it opens; its objects are then inserted, saved and read back, where every insert failed")
    func madeAtOpen() throws {
        let url = try SQLiteStoreTests.temporaryFile()
        let seeding = try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: url)])
        let seeder = seeding.newBackgroundContext()
        try seeder.performAndWait {
            try seeder.insertObject(entityName: "Tag").setValue("kept", forKey: "label")
            try seeder.save()
        }
        seeding.close()
        #expect(Self.tables(url).contains("Shelf"), "a new file has it")
        try SQLiteDamagedStoreTests.execute(url, "DROP TABLE \"Shelf\"")
        try #require(!Self.tables(url).contains("Shelf"))

        let container = try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: url)])
        #expect(Self.tables(url).contains("Shelf"), "made at the open")
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let tag = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Tag")).first)
            let shelf = try context.insertObject(entityName: "Shelf")
            try shelf.setValue(Set([tag]), forKey: "tags")
            try context.save()
        }
        container.close()
        let reopened = try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: url)])
        defer { reopened.close() }
        let reader = reopened.newBackgroundContext()
        let labels = try reader.performAndWait {
            try reader.fetch(FetchRequest<ManagedObject>(entityName: "Shelf")).map { shelf in
                try (shelf.value(forKey: "tags") as? Set<ManagedObject> ?? []).map { try $0.value(forKey: "label") as? String }
            }
        }
        #expect(labels == [["kept"]])
    }
}
