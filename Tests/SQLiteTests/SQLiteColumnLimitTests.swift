import CSQLite
import Foundation
import ObjectGraph
import ObjectGraphSQLite
import Testing

/// Hierarchies whose table would be wider than SQLite allows: refused when the store opens,
/// with a typed error naming the root and the counts, before any file is made (the creation
/// of the file failed with SQLite's "too many columns on …" and left an empty file).
@Suite("SQLite column limit")
struct SQLiteColumnLimitTests {
    /// The linked SQLite's `SQLITE_LIMIT_COLUMN` (2000 by default).
    static let limit: Int = {
        var db: OpaquePointer?
        sqlite3_open(":memory:", &db)
        defer { sqlite3_close_v2(db) }
        return Int(sqlite3_limit(db, SQLITE_LIMIT_COLUMN, -1))
    }()

    static func refusal(_ model: ManagedObjectModel) throws -> StoreError? {
        let url = try SQLiteStoreTests.temporaryFile()
        let error = #expect(throws: StoreError.self) { _ = try PersistentContainer(model: model, stores: [.sqlite(at: url)]) }
        #expect(!FileManager.default.fileExists(atPath: url.path), "no file is left behind")
        #expect(error?.code == .incompatibleModel, "\(String(describing: error))")
        return error
    }

    @Test("an entity with a column more than the limit is refused; one with exactly the limit opens and stores rows")
    func wideEntity() throws {
        // pk, entity and version are columns too.
        let wide = try ManagedObjectModel { m in
            m.entity("Wide") { e in for index in 0..<(Self.limit - 2) { e.attribute("a\(index)", .integer64, optional: true) } }
        }
        let error = try Self.refusal(wide)
        #expect(error?.message.contains("entity Wide") == true && error?.message.contains("\(Self.limit + 1) columns") == true
            && error?.message.contains("at most \(Self.limit)") == true, "\(String(describing: error))")

        let url = try SQLiteStoreTests.temporaryFile()
        let model = try ManagedObjectModel { m in
            m.entity("Wide") { e in for index in 0..<(Self.limit - 3) { e.attribute("a\(index)", .integer64, optional: true) } }
        }
        let container = try PersistentContainer(model: model, stores: [.sqlite(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        let values = try context.performAndWait { () throws -> [Int64?] in
            for value in [Int64(2), 1] {
                let row = try context.insertObject(entityName: "Wide")
                try row.setValue(value, forKey: "a0")
                try row.setValue(value * 10, forKey: "a\(Self.limit - 4)")
            }
            try context.save()
            context.reset()
            let request = FetchRequest<ManagedObject>(entityName: "Wide", sortKeys: [SortKey("a0")])
            return try context.fetch(request).map { try $0.value(forKey: "a\(Self.limit - 4)") as? Int64 }
        }
        #expect(values == [10, 20])
    }

    @Test("the columns of sub-entities and to-ones count toward their root's table")
    func wideHierarchy() throws {
        // 3 + 1000 + 2 × 500 = limit + 3 with the default limit of 2000.
        let half = Self.limit / 2
        let model = try ManagedObjectModel { m in
            m.entity("Base") { e in for index in 0..<half { e.attribute("a\(index)", .integer64, optional: true) } }
            m.entity("Derived", parent: "Base") { e in
                for index in 0..<(Self.limit - half) / 2 { e.toOne("r\(index)", "Other") }
            }
            m.entity("Other") { e in e.attribute("x", .integer64, optional: true) }
        }
        let error = try Self.refusal(model)
        #expect(error?.message.contains("entity Base") == true, "\(String(describing: error))")
    }
}
