import CSQLite
import Foundation
import ObjectGraph
@testable import ObjectGraphSQLite
import Testing

/// The indexes on uniqueness constraints and indexed attributes: made with a new file, added
/// to (or, in byte order, made again in) a file made before them, and used by the queries the
/// save-time uniqueness check and fetches run.
@Suite("SQLite store: uniqueness indexes")
struct SQLiteUniquenessIndexTests {
    /// A single-attribute and a composite constraint (declared in another order than the
    /// attributes), an attribute both indexed and unique, a number's constraint, and a
    /// sub-entity's own constraint (whose rows live in the root's table) besides the ones it
    /// inherits.
    static func model(extraAttribute: Bool = false) throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Person") { e in
                e.attribute("email", .string, optional: true)
                e.attribute("first", .string, optional: true)
                e.attribute("last", .string, optional: true)
                e.attribute("handle", .string, optional: true, indexed: true)
                e.attribute("badge", .integer64, optional: true)
                if extraAttribute {
                    e.attribute("extra", .string, optional: true)
                    e.unique("extra")
                }
                e.unique("email")
                e.unique("last", "first")
                e.unique("handle")
                e.unique("badge")
            }
            m.entity("Student", parent: "Person") { e in
                e.attribute("school", .string, optional: true)
                e.unique("school")
            }
        }
    }

    /// The uniqueness indexes (and the indexed attribute's) with their key columns and collations.
    static let expected = [
        "ix:Person.handle": ["a:Person.handle OG_NATURAL"],
        "ix:u:Person.badge": ["a:Person.badge BINARY"],
        "ix:u:Person.email": ["a:Person.email OG_NATURAL"],
        "ix:u:Person.last,first": ["a:Person.last OG_NATURAL", "a:Person.first OG_NATURAL"],
        "ix:u:Student.school": ["a:Student.school OG_NATURAL"],
    ]

    /// Each index of `table` named `ix:…`, with its key columns as "column collation". (An index
    /// on a column the table lacks is on an expression: SQLite reads `"a:Person.extra"` as a
    /// string literal when no column has that name.)
    static func indexes(_ url: URL, table: String) -> [String: [String]] {
        var found: [String: [String]] = [:]
        for name in SQLiteStoreTests.strings(url, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = '\(table)' AND name LIKE 'ix:%'") {
            found[name] = SQLiteStoreTests.strings(url, "SELECT coalesce(name, '(expression)') || ' ' || coll FROM pragma_index_xinfo('\(name)') WHERE key = 1 ORDER BY seqno")
        }
        return found
    }

    /// SQLite's plan for `sql` on `store`, its steps joined by "; ".
    static func queryPlan(_ sql: String, in store: SQLiteStore) throws -> String {
        try store.withReader { connection in
            let statement = try connection.prepare("EXPLAIN QUERY PLAN " + sql)
            defer { statement.reset() }
            var details: [String] = []
            while try statement.step() { details.append(statement.string(3) ?? "") }
            return details.joined(separator: "; ")
        }
    }

    /// A store of ``model(extraAttribute:)`` holding a person and a student, closed.
    static func seededStore() throws -> URL {
        let url = try SQLiteStoreTests.temporaryFile()
        let container = try PersistentContainer(model: try model(), stores: [.sqlite(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            try insert("Person", ["email": "ada@example.com", "first": "Ada", "last": "Lovelace", "badge": Int64(7)], in: context)
            try insert("Student", ["email": "alan@example.com", "school": "King's"], in: context)
            try context.save()
        }
        return url
    }

    /// Inserts an object of `entity` holding `values`.
    static func insert(_ entity: String, _ values: KeyValuePairs<String, Any>, in context: ManagedObjectContext) throws {
        let object = try context.insertObject(entityName: entity)
        for (key, value) in values { try object.setValue(value, forKey: key) }
    }

    @Test("a new store indexes each constraint once, in the constraint's order, on the root's table; an indexed unique attribute keeps one index")
    func newStore() throws {
        let url = try Self.seededStore()
        let found = Self.indexes(url, table: "Person")
        #expect(found.filter { $0.key != "ix:e:Person" } == Self.expected)
        #expect(Self.indexes(url, table: "Student").isEmpty, "the sub-entity has no table of its own")
        #expect(!found.keys.contains("ix:u:Person.handle"), "the attribute's own index serves its constraint")
    }

    @Test("a store made without the uniqueness indexes gets them when it opens, its rows intact")
    func addedAtOpen() throws {
        let url = try Self.seededStore()
        var db: OpaquePointer?
        try #require(sqlite3_open_v2(url.path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
        let dropped = sqlite3_exec(db, """
            DROP INDEX IF EXISTS "ix:u:Person.email"; DROP INDEX IF EXISTS "ix:u:Person.last,first";
            DROP INDEX IF EXISTS "ix:u:Person.badge"; DROP INDEX IF EXISTS "ix:u:Student.school";
            """, nil, nil, nil)
        sqlite3_close_v2(db)
        try #require(dropped == SQLITE_OK)
        try #require(Self.indexes(url, table: "Person").keys.sorted() == ["ix:Person.handle", "ix:e:Person"])

        let container = try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: url)])
        #expect(Self.indexes(url, table: "Person").filter { $0.key != "ix:e:Person" } == Self.expected, "added while the store is open")
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let people = try context.fetch(FetchRequest<ManagedObject>(entityName: "Person"))
            let emails = try people.map { try $0.value(forKey: "email") as? String }.compactMap { $0 }.sorted()
            #expect(emails == ["ada@example.com", "alan@example.com"])
            let duplicate = try context.insertObject(entityName: "Student")
            try duplicate.setValue("ada@example.com", forKey: "email")
            #expect(throws: ValidationError.self, "the constraint still holds") { try context.save() }
        }
        container.close()
        // Opening again finds nothing to add (and adds nothing twice).
        try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: url)]).close()
        #expect(Self.indexes(url, table: "Person").filter { $0.key != "ix:e:Person" } == Self.expected)
    }

    @Test("a file whose indexed string attribute's index is in byte order, or missing, has it made in OG_NATURAL order when it opens; fetches use it")
    func attributeIndexRemadeAtOpen() throws {
        let url = try Self.seededStore()
        func rewrite(_ sql: String) throws {
            var db: OpaquePointer?
            try #require(sqlite3_open_v2(url.path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
            let rc = sqlite3_exec(db, sql, nil, nil, nil)
            sqlite3_close_v2(db)
            try #require(rc == SQLITE_OK)
        }
        let remade = Self.expected.filter { $0.key != "ix:e:Person" }
        for damage in [
            #"DROP INDEX "ix:Person.handle"; CREATE INDEX "ix:Person.handle" ON "Person" ("a:Person.handle");"#,
            #"DROP INDEX "ix:Person.handle";"#,
        ] {
            try rewrite(damage)
            try #require(Self.indexes(url, table: "Person")["ix:Person.handle"] != Self.expected["ix:Person.handle"])
            let container = try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: url)])
            #expect(Self.indexes(url, table: "Person").filter { $0.key != "ix:e:Person" } == remade, "after \(damage)")
            let store = try #require(container.coordinator.persistentStores.first as? SQLiteStore)
            store.queryCache.withLock { $0.removeAll() }
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let object = try context.insertObject(entityName: "Person")
                try object.setValue("lovelace", forKey: "handle")
                try context.save()
                let found = try context.fetch(FetchRequest<ManagedObject>(entityName: "Person", predicate: .key("handle") == "lovelace"))
                #expect(found.count == 1)
            }
            let sql = try #require(store.queryCache.withLock { $0.values.map(\.sql) }.first { $0.contains("\"a:Person.handle\" IS ") || $0.contains("\"a:Person.handle\" = ") })
            let plan = try Self.queryPlan(sql, in: store)
            #expect(plan.contains("INDEX ix:Person.handle ("), "\(sql): \(plan)")
            try context.performAndWait {
                for object in try context.fetch(FetchRequest<ManagedObject>(entityName: "Person", predicate: .key("handle") == "lovelace")) { context.delete(object) }
                try context.save()
            }
            container.close()
        }
    }

    @Test("a file of another model is not given indexes: the open is refused as incompatible, as before")
    func otherModelUntouched() throws {
        let url = try Self.seededStore()
        let error = #expect(throws: StoreError.self) {
            _ = try PersistentContainer(model: try Self.model(extraAttribute: true), stores: [.sqlite(at: url)])
        }
        #expect(error?.code == .incompatibleModel, "\(String(describing: error))")
        #expect(!Self.indexes(url, table: "Person").keys.contains("ix:u:Person.extra"))
    }

    @Test("the uniqueness check's queries search the constraints' indexes instead of scanning the table")
    func checkUsesIndex() throws {
        let url = try Self.seededStore()
        let container = try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: url)])
        defer { container.close() }
        let store = try #require(container.coordinator.persistentStores.first as? SQLiteStore)
        store.queryCache.withLock { $0.removeAll() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            // A student: its save checks every constraint, the inherited ones and its own.
            let values: KeyValuePairs<String, Any> = [
                "email": "grace@example.com", "first": "Grace", "last": "Hopper", "handle": "hopper", "badge": Int64(8), "school": "Vassar",
            ]
            try Self.insert("Student", values, in: context)
            try context.save()
        }
        let queries = store.queryCache.withLock { $0.values.map(\.sql) }
        for (index, columns) in Self.expected {
            let column = String(columns[0].prefix { $0 != " " })
            // The check's query is the one whose condition starts with the constraint's first column.
            let sql = try #require(queries.first { $0.contains("WHERE") && $0.contains("(t0.\"\(column)\" IS ") }, "no query on \(column) among \(queries)")
            let plan = try Self.queryPlan(sql, in: store)
            // (COVERING INDEX when the query reads nothing else; a sub-entity's also reads `entity`.)
            #expect(plan.hasPrefix("SEARCH t0 USING ") && plan.contains("INDEX \(index) ("), "\(sql): \(plan)")
        }
    }
}
