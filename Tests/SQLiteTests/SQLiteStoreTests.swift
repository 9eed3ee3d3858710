import CSQLite
import Foundation
import ObjectGraph
import ObjectGraphSQLite
import Synchronization
import Testing

@Suite("SQLite store")
struct SQLiteStoreTests {
    /// `extraRequired` makes the extra attribute required (it implies `extraAttribute`).
    static func model(extraAttribute: Bool = false, extraRequired: Bool = false) throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Note") { e in
                e.attribute("text", .string)
                if extraAttribute || extraRequired { e.attribute("extra", .integer32, optional: !extraRequired) }
                e.toMany("tags", "Tag")
                e.toMany("comments", "Comment", inverse: "note", deleteRule: .cascade)
            }
            m.entity("Tag") { e in e.attribute("label", .string) }
            m.entity("Comment") { e in
                e.attribute("body", .string)
                e.toOne("note", "Note", inverse: "comments")
            }
        }
    }

    static func temporaryFile() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("og-sqlite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        madeFolders.withLock { $0.append(directory) }
        return directory.appendingPathComponent("store.sqlite")
    }

    /// What ``temporaryFile()`` made: removed at the process's exit, when no test has its
    /// store open any more.
    private static let madeFolders: Mutex<[URL]> = {
        atexit {
            let made = SQLiteStoreTests.madeFolders.withLock { $0 }
            for url in made { try? FileManager.default.removeItem(at: url) }
        }
        return Mutex([])
    }()

    static func tables(_ url: URL) -> [String] {
        strings(url, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    }

    /// The first column of `query`'s rows, read through a connection of its own.
    static func strings(_ url: URL, _ query: String) -> [String] {
        var db: OpaquePointer?
        guard sqlite3_open_v2(url.path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { return ["(unreadable)"] }
        defer { sqlite3_close_v2(db) }
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, query, -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        var names: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW { names.append(String(cString: sqlite3_column_text(statement, 0))) }
        return names
    }

    @Test("the schema: one table per hierarchy, a join table for many-to-nil, none for one-to-many")
    func schemaLayout() throws {
        let url = try Self.temporaryFile()
        let container = try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: url)])
        container.close()
        #expect(Self.tables(url) == ["Comment", "Note", "Tag", "j:Note.tags", "og_metadata", "og_primary_keys"])
    }

    @Test("indexes: every foreign key, join tables, indexed attributes, and `entity` only where a hierarchy shares the table")
    func schemaIndexes() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Owner") { e in e.attribute("name", .string, indexed: true) }
            m.entity("Admin", parent: "Owner") { _ in }
            m.entity("Pet") { e in
                e.attribute("name", .string)
                e.toOne("owner", "Owner")
            }
        }
        let url = try Self.temporaryFile()
        let container = try PersistentContainer(model: model, stores: [.sqlite(at: url)])
        container.close()
        #expect(Self.strings(url, "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'ix:%' ORDER BY name")
            == ["ix:Owner.name", "ix:Pet.fk:Pet.owner", "ix:e:Owner"])
    }

    @Test("a file that is not SQLite is refused with a typed error")
    func notSQLite() throws {
        let url = try Self.temporaryFile()
        try Data("this is not a database, just some text that is long enough to look like a header".utf8).write(to: url)
        let error = #expect(throws: StoreError.self) { _ = try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: url)]) }
        #expect(error?.code == .corrupt)
        #expect(error?.underlying != nil, "the SQLite error is kept")
    }

    @Test("an SQLite database that is not an ObjectGraph store is refused")
    func foreignDatabase() throws {
        let url = try Self.temporaryFile()
        var db: OpaquePointer?
        sqlite3_open(url.path, &db)
        sqlite3_exec(db, "CREATE TABLE people (name TEXT)", nil, nil, nil)
        sqlite3_close(db)
        let error = #expect(throws: StoreError.self) { _ = try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: url)]) }
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains("not an ObjectGraph store") == true)
    }

    @Test("a store written by another model is refused as incompatible")
    func incompatibleModel() throws {
        let url = try Self.temporaryFile()
        try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: url)]).close()
        let error = #expect(throws: StoreError.self) { _ = try PersistentContainer(model: try Self.model(extraAttribute: true), stores: [.sqlite(at: url)]) }
        #expect(error?.code == .incompatibleModel)
        #expect(error?.message.contains(url.path) == true)
    }

    @Test("a store holding nil in an attribute the model now requires is refused at open, not read as damaged")
    func attributeTurnedRequired() throws {
        let url = try Self.temporaryFile()
        let written = try PersistentContainer(model: try Self.model(extraAttribute: true), stores: [.sqlite(at: url)])
        let context = written.newBackgroundContext()
        try context.performAndWait {
            try context.insertObject(entityName: "Note").setValue("no extra", forKey: "text")
            try context.save()
        }
        written.close()
        let error = #expect(throws: StoreError.self) { _ = try PersistentContainer(model: try Self.model(extraRequired: true), stores: [.sqlite(at: url)]) }
        #expect(error?.code == .incompatibleModel)
    }

    @Test("strings full of quotes, comment markers, semicolons and NUL bytes round-trip exactly")
    func hostileStrings() throws {
        let url = try Self.temporaryFile()
        let texts = ["it's \"quoted\"", "'; DROP TABLE \"Note\"; --", "a\u{0}b\u{0}", "", "\u{0}", "emoji 👩‍👩‍👧 and é", String(repeating: "x", count: 100_000)]
        let container = try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: url)])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for text in texts {
                let note = try context.insertObject(entityName: "Note")
                try note.setValue(text, forKey: "text")
            }
            try context.save()
        }
        container.close()
        let reopened = try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: url)])
        let fresh = reopened.newBackgroundContext()
        try fresh.performAndWait {
            let notes = try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Note"))
            let stored = try notes.map { try $0.value(forKey: "text") as? String }
            #expect(stored == texts.map { Optional($0) })
            let matched = try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Note", predicate: key("text") == "'; DROP TABLE \"Note\"; --"))
            #expect(matched.count == 1)
        }
        #expect(Self.tables(url).contains("Note"))
    }

    @Test("zeros, negative zero, false, empty text and blobs stay values, and only NULL reads back as nil (numbers are read before their type is asked)")
    func zerosAndNulls() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Sample") { e in
                e.attribute("tag", .integer64)
                e.attribute("i", .integer64, optional: true)
                e.attribute("d", .double, optional: true)
                e.attribute("b", .boolean, optional: true)
                e.attribute("t", .date, optional: true)
                e.attribute("s", .string, optional: true)
                e.attribute("x", .binaryData, optional: true)
                e.toOne("other", "Sample")
            }
        }
        let url = try Self.temporaryFile()
        let container = try PersistentContainer(model: model, stores: [.sqlite(at: url)])
        let zero: [String: Any] = ["i": Int64(0), "d": 0.0, "b": false, "t": Date(timeIntervalSinceReferenceDate: 0), "s": "", "x": Data()]
        let negative: [String: Any] = ["i": Int64(-1), "d": -0.0, "b": true, "t": Date(timeIntervalSinceReferenceDate: -1), "s": "0", "x": Data([0])]
        try container.viewContext.performAndWait {
            let context = container.viewContext
            var made: [ManagedObject] = []
            for (tag, values) in [[String: Any]](arrayLiteral: zero, negative, [:]).enumerated() {
                let sample = try context.insertObject(entityName: "Sample")
                try sample.setValue(Int64(tag), forKey: "tag")
                for (key, value) in values { try sample.setValue(value, forKey: key) }
                made.append(sample)
            }
            try made[1].setValue(made[0], forKey: "other")
            try context.save()
        }
        container.close()
        let reopened = try PersistentContainer(model: model, stores: [.sqlite(at: url)])
        let context = reopened.newBackgroundContext()
        try context.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Sample", sortKeys: [SortKey("tag")])
            request.returnsObjectsAsFaults = false
            let samples = try context.fetch(request)
            #expect(samples.count == 3)
            #expect(try samples[0].value(forKey: "i") as? Int64 == 0)
            #expect(try samples[0].value(forKey: "d") as? Double == 0)
            #expect(try samples[0].value(forKey: "b") as? Bool == false)
            #expect(try samples[0].value(forKey: "t") as? Date == Date(timeIntervalSinceReferenceDate: 0))
            #expect(try samples[0].value(forKey: "s") as? String == "")
            #expect(try samples[0].value(forKey: "x") as? Data == Data())
            let negativeZero = try samples[1].value(forKey: "d") as? Double
            #expect(negativeZero == 0 && negativeZero?.sign == .minus, "-0.0 stays negative")
            #expect(try samples[1].value(forKey: "i") as? Int64 == -1)
            #expect(try samples[1].value(forKey: "b") as? Bool == true)
            #expect(try samples[1].value(forKey: "x") as? Data == Data([0]))
            #expect(try (samples[1].value(forKey: "other") as? ManagedObject)?.objectID == samples[0].objectID)
            for key in ["i", "d", "b", "t", "s", "x", "other"] {
                #expect(try samples[2].value(forKey: key) == nil, "\(key) is nil")
            }
            #expect(try samples[0].value(forKey: "other") == nil)
        }
    }

    @Test("a save that fails part-way leaves the file unchanged")
    func failedSaveLeavesFileUnchanged() throws {
        let url = try Self.temporaryFile()
        let container = try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: url)])
        let first = container.newBackgroundContext()
        let second = container.newBackgroundContext()
        let id = try first.performAndWait {
            let note = try first.insertObject(entityName: "Note")
            try note.setValue("v1", forKey: "text")
            try first.save()
            return note.objectID
        }
        try second.performAndWait {
            try second.existingObject(with: id).setValue("stale", forKey: "text")
            for index in 0..<3 {
                let comment = try second.insertObject(entityName: "Comment")
                try comment.setValue("c\(index)", forKey: "body")
            }
        }
        try first.performAndWait {
            try first.existingObject(with: id).setValue("v2", forKey: "text")
            try first.save()
        }
        second.performAndWait {
            let error = #expect(throws: MergeConflictError.self) { try second.save() }
            #expect(error?.underlying.code == .conflict)
        }
        container.close()
        let reopened = try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: url)])
        let check = reopened.newBackgroundContext()
        try check.performAndWait { () throws in
            #expect(try check.count(for: FetchRequest<ManagedObject>(entityName: "Comment")) == 0, "no insert of the failed save landed")
            #expect(try check.existingObject(with: id).value(forKey: "text") as? String == "v2")
        }
    }

    @Test("an update writes only the columns whose values changed (SQLite then leaves the other columns' indexes alone)")
    func updateWritesChangedColumnsOnly() throws {
        let url = try Self.temporaryFile()
        let first = try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: url)])
        let ids = try first.viewContext.performAndWait {
            let context = first.viewContext
            let note = try context.insertObject(entityName: "Note")
            try note.setValue("n1", forKey: "text")
            let other = try context.insertObject(entityName: "Note")
            try other.setValue("n2", forKey: "text")
            let comment = try context.insertObject(entityName: "Comment")
            try comment.setValue("first", forKey: "body")
            try comment.setValue(note, forKey: "note")
            try context.save()
            return (comment: comment.objectID, other: other.objectID)
        }
        first.close()
        // `UPDATE OF column` triggers fire only for statements that assign the column.
        var db: OpaquePointer?
        try #require(sqlite3_open_v2(url.path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
        let triggers = """
            CREATE TABLE written (name TEXT);
            CREATE TRIGGER body_written AFTER UPDATE OF "a:Comment.body" ON "Comment" BEGIN INSERT INTO written VALUES ('body'); END;
            CREATE TRIGGER note_written AFTER UPDATE OF "fk:Comment.note" ON "Comment" BEGIN INSERT INTO written VALUES ('note'); END;
            """
        let created = sqlite3_exec(db, triggers, nil, nil, nil)
        sqlite3_close_v2(db)
        try #require(created == SQLITE_OK)
        func written() -> [String] { Self.strings(url, "SELECT name FROM written ORDER BY rowid") }
        let container = try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: url)])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            try context.existingObject(with: ids.comment).setValue("edited", forKey: "body")
            try context.save()
        }
        #expect(written() == ["body"], "changing the body leaves the foreign key unwritten")
        try context.performAndWait {
            try context.existingObject(with: ids.comment).setValue(try context.existingObject(with: ids.other), forKey: "note")
            try context.save()
        }
        #expect(written() == ["body", "note"], "changing the note writes the key, not the body")
        let check = container.newBackgroundContext()
        try check.performAndWait {
            let comment = try check.existingObject(with: ids.comment)
            #expect(try comment.value(forKey: "body") as? String == "edited")
            #expect((try comment.value(forKey: "note") as? ManagedObject)?.objectID == ids.other)
        }
    }

    @Test("metadata survives reopening; the store UUID is stable")
    func metadataIsStable() throws {
        let url = try Self.temporaryFile()
        let first = try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: url)])
        let identifier = try #require(first.coordinator.persistentStores.first).identifier
        first.close()
        let second = try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: url)])
        let store = try #require(second.coordinator.persistentStores.first)
        #expect(store.identifier == identifier)
        #expect(try store.metadata().modelVersionHash == second.model.versionHash)
        #expect(store.capabilities.contains(.persistent))
    }
}

func key(_ path: String) -> ObjectGraph.PredicateOperand { .keyPath(path) }

/// A libsqlite3 connection of a test's own on a store's file: another process's view of it,
/// for holding locks and writing behind the store's back.
final class RawConnection: @unchecked Sendable {
    private var db: OpaquePointer?

    init(_ url: URL) throws {
        guard sqlite3_open_v2(url.path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else {
            sqlite3_close_v2(db)
            throw StoreError(.io, "cannot open \(url.path)")
        }
    }

    deinit { sqlite3_close_v2(db) }

    /// Runs `sql` (several statements allowed), throwing SQLite's message on failure.
    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(db, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard status == SQLITE_OK else {
            throw StoreError(.backend, "\(sql): \(message.map { String(cString: $0) } ?? "error \(status)")")
        }
    }
}
