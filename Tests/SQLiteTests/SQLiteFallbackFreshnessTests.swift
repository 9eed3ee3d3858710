import Foundation
import ObjectGraph
import ObjectGraphSQLite
import Testing

/// A predicate SQL cannot express is evaluated by the shared layer on the rows the store
/// returns; the related rows it reads must be the store's current ones too, as SQL reads
/// them, not rows another coordinator (or process) has since changed.
@Suite("SQLite fallback predicates read current rows")
struct SQLiteFallbackFreshnessTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Chat") { e in
                e.attribute("title", .string)
                e.toMany("messages", "Message", inverse: "chat")
            }
            m.entity("Message") { e in
                e.attribute("text", .string)
                e.attribute("rank", .integer32, optional: true)
                e.toOne("chat", "Chat", inverse: "messages")
            }
        }
    }

    @Test("related rows changed through another coordinator are read afresh")
    func relatedRowsChangedElsewhere() throws {
        let file = try SQLiteStoreTests.temporaryFile()
        let model = try Self.model()
        let reader = try PersistentContainer(model: model, stores: [.sqlite(at: file)])
        defer { reader.close() }
        let seeding = reader.newBackgroundContext()
        try seeding.performAndWait {
            let chat = try seeding.insertObject(entityName: "Chat")
            try chat.setValue("old", forKey: "title")
            let message = try seeding.insertObject(entityName: "Message")
            try message.setValue("hello", forKey: "text")
            try message.setValue(1, forKey: "rank")
            try message.setValue(chat, forKey: "chat")
            try seeding.save()
        }
        // Compiled to SQL, and (with an aggregate or a SUBQUERY, which SQL here does not
        // express) evaluated by the shared layer: the second kind reads the related rows.
        let compiled = ["chat.title == 'new'", "ANY messages.rank > 3"]
        // (The fetches of messages come last: they read the messages themselves afresh.)
        let fallback = ["messages.@max.rank > 3", "SUBQUERY(messages, $m, $m.rank > 3).@count > 0", "chat.title == 'new' AND chat.messages.@count > 0"]
        func matches(_ format: String) throws -> Int {
            let context = reader.newBackgroundContext()
            let entity = format.contains("chat.") ? "Message" : "Chat"
            return try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: entity, predicate: try FetchPredicate(format: format))) }
        }
        for format in compiled + fallback { #expect(try matches(format) == 0, "before the change: \(format)") }

        let writer = try PersistentContainer(model: model, stores: [.sqlite(at: file)])
        defer { writer.close() }
        let changing = writer.newBackgroundContext()
        try changing.performAndWait {
            let chat = try changing.fetch(FetchRequest<ManagedObject>(entityName: "Chat"))[0]
            try chat.setValue("new", forKey: "title")
            let message = try changing.fetch(FetchRequest<ManagedObject>(entityName: "Message"))[0]
            try message.setValue(5, forKey: "rank")
            try changing.save()
        }
        for format in compiled + fallback { #expect(try matches(format) == 1, "after the change: \(format)") }
    }
}
