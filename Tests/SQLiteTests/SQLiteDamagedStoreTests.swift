import CSQLite
import Foundation
import ObjectGraph
import ObjectGraphSQLite
import Testing

/// Stores edited behind ObjectGraph's back (another tool, a hand-run `UPDATE`): each damage is
/// a typed error naming the file, never a crash, and the context keeps its changes.
@Suite("SQLite store: damaged contents")
struct SQLiteDamagedStoreTests {
    /// A store holding one note whose text is `text`, closed.
    static func seededStore(text: String = "kept") throws -> URL {
        let url = try SQLiteStoreTests.temporaryFile()
        let container = try PersistentContainer(model: try SQLiteStoreTests.model(), stores: [.sqlite(at: url)])
        defer { container.close() }
        let seeding = container.newBackgroundContext()
        try seeding.performAndWait { try seeding.insertObject(entityName: "Note").setValue(text, forKey: "text") }
        try seeding.performAndWait { try seeding.save() }
        return url
    }

    /// Runs `sql` on the file through a connection of its own.
    static func execute(_ url: URL, _ sql: String) throws {
        var db: OpaquePointer?
        try #require(sqlite3_open_v2(url.path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
        defer { sqlite3_close_v2(db) }
        try #require(sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK, "\(sql)")
    }

    @Test("a key counter or a row key at the end of Int64 is a typed error at the next insert, not an overflow crash", arguments: [
        "UPDATE og_primary_keys SET next = 9223372036854775807 WHERE root = 'Note'",
        "UPDATE \"Note\" SET pk = 9223372036854775807",
    ])
    func exhaustedKeys(_ damage: String) throws {
        let url = try Self.seededStore()
        try Self.execute(url, damage)
        let container = try PersistentContainer(model: try SQLiteStoreTests.model(), stores: [.sqlite(at: url)])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            try context.insertObject(entityName: "Note").setValue("new", forKey: "text")
            let error = #expect(throws: StoreError.self) { try context.save() }
            #expect(error?.code == .corrupt)
            #expect(error?.message.contains(url.path) == true, "names the file: \(String(describing: error))")
            #expect(error?.message.contains("Note") == true, "names the table: \(String(describing: error))")
            #expect(context.insertedObjects.count == 1, "the context keeps its insert")
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Note")) == 2, "the stored note and the pending one")
        }
        container.close()
        #expect(SQLiteStoreTests.strings(url, "SELECT \"a:Note.text\" FROM \"Note\"") == ["kept"], "nothing was written")
    }

    @Test("metadata rows that are garbled or missing refuse the store as corrupt, naming the file, instead of reading as empty", arguments: [
        ("UPDATE og_metadata SET value = '{\"owner\": 1' WHERE key = 'userInfo'", "user metadata"),
        ("UPDATE og_metadata SET value = '[\"a list\"]' WHERE key = 'userInfo'", "user metadata"),
        ("DELETE FROM og_metadata WHERE key = 'modelVersionHash'", "no model version hash"),
    ])
    func damagedMetadata(_ damage: String, _ named: String) throws {
        let url = try Self.seededStore()
        try Self.execute(url, damage)
        let error = #expect(throws: StoreError.self) {
            try PersistentContainer(model: try SQLiteStoreTests.model(), stores: [.sqlite(at: url)]).close()
        }
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains(url.path) == true && error?.message.contains(named) == true, "\(String(describing: error))")
    }

    @Test("user metadata round-trips, and a store without the row reads none")
    func userMetadataRoundTrip() throws {
        let url = try Self.seededStore(text: "metadata")
        let container = try PersistentContainer(model: try SQLiteStoreTests.model(), stores: [.sqlite(at: url)])
        var changes = StoreChangeSet()
        changes.userMetadata = ["owner": "tests", "quote": "\"{}\""]
        try container.coordinator.persistentStores[0].save(changes)
        container.close()
        let reopened = try PersistentContainer(model: try SQLiteStoreTests.model(), stores: [.sqlite(at: url)])
        #expect(try reopened.coordinator.persistentStores[0].metadata().userInfo == ["owner": "tests", "quote": "\"{}\""])
        reopened.close()
        try Self.execute(url, "DELETE FROM og_metadata WHERE key = 'userInfo'")
        let without = try PersistentContainer(model: try SQLiteStoreTests.model(), stores: [.sqlite(at: url)])
        #expect(try without.coordinator.persistentStores[0].metadata().userInfo == [:])
        without.close()
    }

    /// The errors of reading `entity` (by default `id`'s) in a new coordinator on `url`: a fetch
    /// of rows, a fault of `id`, and (with `fetchingIDs`) a fetch of IDs.
    static func readErrors(_ url: URL, _ model: ManagedObjectModel, _ id: ObjectID, entity: String? = nil, fetchingIDs: Bool = false) throws -> [StoreError?] {
        let entity = entity ?? id.entityName
        let reopened = try PersistentContainer(model: model, stores: [.sqlite(at: url)])
        defer { reopened.close() }
        let context = reopened.newBackgroundContext()
        var rows = FetchRequest<ManagedObject>(entityName: entity)
        rows.returnsObjectsAsFaults = false
        return context.performAndWait {
            var errors = [#expect(throws: StoreError.self) { _ = try context.fetch(rows) }]
            errors.append(#expect(throws: StoreError.self) { _ = try context.existingObject(with: id) })
            if fetchingIDs {
                errors.append(#expect(throws: StoreError.self) { _ = try context.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: entity)) })
            }
            return errors
        }
    }

    static func readingModel() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Owner") { e in e.attribute("name", .string) }
            m.entity("Reading") { e in
                for (name, type) in [("count", AttributeType.integer32), ("level", .double), ("flag", .boolean), ("at", .date), ("tag", .uuid), ("amount", .decimal), ("link", .uri), ("label", .string)] {
                    e.attribute(name, type, optional: true)
                }
                e.toOne("owner", "Owner")
            }
        }
    }

    @Test("a value stored with the wrong SQLite type for its attribute is a typed error naming the file, row and column, not a 0 or nil handed up", arguments: [
        ("count", "'twelve'"), ("level", "'high'"), ("flag", "X'00'"), ("at", "'yesterday'"), ("tag", "'not-a-uuid'"), ("amount", "'lots'"), ("link", "'http://a b'"),
        ("label", "CAST(X'41FF42' AS TEXT)"), ("owner", "'abc'"),
    ])
    func valueOfTheWrongType(column: String, literal: String) throws {
        let url = try SQLiteStoreTests.temporaryFile()
        let model = try Self.readingModel()
        let container = try PersistentContainer(model: model, stores: [.sqlite(at: url)])
        let seeding = container.newBackgroundContext()
        let id = try seeding.performAndWait {
            let reading = try seeding.insertObject(entityName: "Reading")
            try reading.setValue(Int32(0), forKey: "count")
            try seeding.save()
            return reading.objectID
        }
        container.close()
        let name = column == "owner" ? "fk:Reading.owner" : "a:Reading.\(column)"
        try Self.execute(url, "UPDATE \"Reading\" SET \"\(name)\" = \(literal)")
        for error in try Self.readErrors(url, model, id) {
            #expect(error?.code == .corrupt)
            #expect(error?.message.contains(url.path) == true && error?.message.contains(name) == true, "\(String(describing: error))")
            if column == "label" { #expect(error?.message.contains("text that is not UTF-8") == true, "\(String(describing: error))") }
        }
    }

    @Test("a row whose entity column names no entity of its table's hierarchy is a typed error, not a row skipped (it vanished from fetches, and its fault read as deleted)")
    func unknownEntityName() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Owner") { e in e.attribute("name", .string) }
            m.entity("Admin", parent: "Owner") { _ in }
        }
        let url = try SQLiteStoreTests.temporaryFile()
        let container = try PersistentContainer(model: model, stores: [.sqlite(at: url)])
        let seeding = container.newBackgroundContext()
        let ids = try seeding.performAndWait {
            let objects = try ["Owner", "Admin"].map { name in
                let object = try seeding.insertObject(entityName: name)
                try object.setValue(name, forKey: "name")
                return object
            }
            try seeding.save()
            return objects.map(\.objectID)
        }
        container.close()
        try Self.execute(url, "UPDATE \"Owner\" SET entity = 'Bogus' WHERE pk = \(ids[1].primaryKey ?? 0)")
        for error in try Self.readErrors(url, model, ids[1], entity: "Owner", fetchingIDs: true) {
            #expect(error?.code == .corrupt && error?.message.contains(url.path) == true && error?.message.contains("entity") == true, "\(String(describing: error))")
        }
    }

    @Test("NULL written into a required attribute's column is a typed error naming the file, row and column, where it read as nil and stopped the process at a non-optional accessor; the same NULL in a sibling entity's column of a shared table is no damage", arguments: [
        AttributeType.string, .integer64, .double, .boolean, .date, .decimal, .uuid, .binaryData,
    ])
    func nullInARequiredColumn(type: AttributeType) throws {
        let model = try ManagedObjectModel { m in
            m.entity("Owner") { e in e.attribute("name", .string, optional: true) }
            m.entity("Admin", parent: "Owner") { e in e.attribute("level", type) }
        }
        let value: Any = switch type {
        case .string: "x"
        case .integer64: Int64(3)
        case .double: 1.5
        case .boolean: true
        case .date: Date(timeIntervalSinceReferenceDate: 5)
        case .decimal: Decimal(7)
        case .uuid: UUID()
        default: Data([1])
        }
        let url = try SQLiteStoreTests.temporaryFile()
        let container = try PersistentContainer(model: model, stores: [.sqlite(at: url)])
        let seeding = container.newBackgroundContext()
        let (owner, admin) = try seeding.performAndWait {
            let owner = try seeding.insertObject(entityName: "Owner")
            let admin = try seeding.insertObject(entityName: "Admin")
            try admin.setValue(value, forKey: "level")
            try seeding.save()
            return (owner.objectID, admin.objectID)
        }
        container.close()
        // The plain owner's row holds NULL in the admin's column: that is its shape, not damage.
        let intact = try PersistentContainer(model: model, stores: [.sqlite(at: url)])
        let reading = intact.newBackgroundContext()
        let (entity, count) = try reading.performAndWait {
            (try reading.existingObject(with: owner).entity.name, try reading.fetch(FetchRequest<ManagedObject>(entityName: "Owner")).count)
        }
        intact.close()
        #expect(entity == "Owner" && count == 2)
        try Self.execute(url, "UPDATE \"Owner\" SET \"a:Admin.level\" = NULL WHERE pk = \(admin.primaryKey ?? 0)")
        for error in try Self.readErrors(url, model, admin) {
            #expect(error?.code == .corrupt)
            #expect(error?.message.contains(url.path) == true && error?.message.contains("a:Admin.level") == true && error?.message.contains("NULL") == true, "\(String(describing: error))")
        }
    }

    @Test("a grouping key whose text is not UTF-8 is not handed up repaired by the grouping in SQL: the fetch is a typed corrupt error, as reading the row is")
    func groupedKeyNotUTF8() throws {
        let (url, container) = try SQLiteFloatingAggregateTests.damagedStore("UPDATE \"Account\" SET \"a:Account.name\" = CAST(X'41FF42' AS TEXT) WHERE \"a:Account.name\" = 'plain'")
        defer { container.close() }
        let context = container.newBackgroundContext()
        var grouped = FetchRequest<ManagedObject>(entityName: "Account")
        grouped.propertiesToFetch = [.key("name", as: "name"), .count(as: "count")]
        grouped.propertiesToGroupBy = ["name"]
        let error = context.performAndWait { #expect(throws: StoreError.self) { _ = try context.fetchDictionaries(grouped) } }
        #expect(error?.code == .corrupt && error?.message.contains(url.path) == true && error?.message.contains("not UTF-8") == true, "\(String(describing: error))")
    }
}

