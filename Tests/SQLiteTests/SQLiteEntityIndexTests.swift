import CSQLite
import Foundation
import ObjectGraph
import ObjectGraphSQLite
import Testing

/// The store's index on a hierarchy's entity column and an indexed attribute named `entity`:
/// both were named `ix:Root.entity`, so the file kept only one of them.
@Suite("SQLite entity index")
struct SQLiteEntityIndexTests {
    /// A hierarchy whose root has an indexed attribute named `entity`, and one without.
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Item") { e in e.attribute("entity", .integer64, optional: true, indexed: true) }
            m.entity("SubItem", parent: "Item") { _ in }
            m.entity("Shape") { e in e.attribute("name", .string, optional: true) }
            m.entity("Circle", parent: "Shape") { _ in }
        }
    }

    /// The `ix:` indexes of `table`, each with its columns.
    static func indexes(_ url: URL, table: String) -> [String: [String]] {
        var found: [String: [String]] = [:]
        for name in SQLiteStoreTests.strings(url, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = '\(table)' AND name LIKE 'ix:%'") {
            found[name] = SQLiteStoreTests.strings(url, "SELECT name FROM pragma_index_info('\(name)') ORDER BY seqno")
        }
        return found
    }

    static let expected = [
        "Item": ["ix:e:Item": ["entity"], "ix:Item.entity": ["a:Item.entity"]],
        "Shape": ["ix:e:Shape": ["entity"]],
    ]

    /// A store of ``model()`` holding an item, a sub-item and a circle, closed.
    static func seededStore() throws -> URL {
        let url = try SQLiteStoreTests.temporaryFile()
        let container = try PersistentContainer(model: try model(), stores: [.sqlite(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for (entity, value) in [("Item", Int64(1)), ("SubItem", 2)] {
                try context.insertObject(entityName: entity).setValue(value, forKey: "entity")
            }
            _ = try context.insertObject(entityName: "Circle")
            try context.save()
        }
        return url
    }

    @Test("a new file has both the entity index and the index of an attribute named entity")
    func newFile() throws {
        let url = try Self.seededStore()
        for (table, indexes) in Self.expected { #expect(Self.indexes(url, table: table) == indexes, "\(table)") }
    }

    @Test("a file whose entity index has the former name gets it under the new one, and the attribute's index, when it opens")
    func formerNameUpgraded() throws {
        let url = try Self.seededStore()
        // As files were made before: the entity index under the attribute index's name, and
        // the attribute's index missing (its IF NOT EXISTS found the entity index).
        var db: OpaquePointer?
        try #require(sqlite3_open_v2(url.path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
        let rc = sqlite3_exec(db, """
            DROP INDEX IF EXISTS "ix:e:Item"; DROP INDEX IF EXISTS "ix:Item.entity"; CREATE INDEX "ix:Item.entity" ON "Item" (entity);
            DROP INDEX IF EXISTS "ix:e:Shape"; DROP INDEX IF EXISTS "ix:Shape.entity"; CREATE INDEX "ix:Shape.entity" ON "Shape" (entity);
            """, nil, nil, nil)
        sqlite3_close_v2(db)
        try #require(rc == SQLITE_OK)

        let container = try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: url)])
        defer { container.close() }
        for (table, indexes) in Self.expected { #expect(Self.indexes(url, table: table) == indexes, "\(table)") }
        let context = container.newBackgroundContext()
        let counts = try context.performAndWait {
            try ["Item", "SubItem", "Shape", "Circle"].map { try context.count(for: FetchRequest<ManagedObject>(entityName: $0)) }
        }
        #expect(counts == [2, 1, 1, 1])
    }
}
