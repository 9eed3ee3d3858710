import Foundation
import ObjectGraph

/// What a container's contexts report once ``PersistentContainer/close()`` has run: every
/// operation that needs the store throws ``StoreError`` `.closed`, the error a call racing the
/// close gets from the closing store, so a caller shutting down recognises it with one check.
/// (Before, a call arriving after the close found no store and threw `ObjectGraphError`
/// `noStore` instead.) Each check closes first and acts after: nothing here depends on timing.
enum ClosedContainerScenarios {
    static let all: [ConformanceScenario] = [
        ConformanceScenario("container.close.everyStoreOperationThrowsClosed") { env in
            let ids = try env.seed { context in
                let chat = Chat(context: context)
                chat.title = "open"
                let message = Message(context: context)
                message.text = "hello"
                message.chat = chat
                return [chat, message]
            }
            let (chatID, messageID) = (ids[0], ids[1])
            // Objects a context held before the close: one with values but its to-many not
            // read, one still a fault.
            let before = env.newContext("before")
            let (loaded, fault) = try before.performAndWait {
                let chat = try before.existingObject(with: chatID)
                _ = try chat.value(forKey: "title")
                return (chat, before.object(with: messageID))
            }
            // A file store is named by its path, so a log line says which one closed.
            // (A store that does not persist has no file: its identifier names it.)
            let identifier: String = env.container.coordinator.persistentStores.first?.identifier ?? "?"
            let name: String = env.capabilities.contains(.persistent) ? env.directory.path : identifier
            env.container.close()

            func expectClosed(_ what: String, _ body: () throws -> Void) throws {
                let error = try checkThrows(StoreError.self, what, body)
                try checkEqual(error.code, .closed, "\(what): \(error)")
                try check(error.message.contains("closed") && error.message.contains(name), "\(what): the message names \(name) and says it was closed: \(error.message)")
            }
            try before.performAndWait {
                try expectClosed("fetch") { _ = try before.fetch(FetchRequest<Chat>()) }
                try expectClosed("count") { _ = try before.count(for: FetchRequest<Chat>()) }
                try expectClosed("dictionary fetch") { _ = try before.fetchDictionaries(FetchRequest<Chat>()) }
                try expectClosed("existingObject(with:)") { _ = try before.existingObject(with: messageID) }
                try expectClosed("a fault firing") { _ = try fault.value(forKey: "text") }
                try expectClosed("a to-many relationship fault") { _ = try loaded.value(forKey: "messages") }
                try loaded.setValue("changed", forKey: "title")
                try expectClosed("saving a change") { try before.save() }
                before.rollback()
                let inserted = try before.insertObject(entityName: "Chat")
                try inserted.setValue("new", forKey: "title")
                try expectClosed("saving an insert") { try before.save() }
            }
            // A context made after the close meets it the same way.
            let after = env.newContext("after")
            try after.performAndWait {
                try check(after.object(with: chatID).objectID == chatID, "object(with:) needs no store")
                try expectClosed("fetch in a new context") { _ = try after.fetch(FetchRequest<Message>()) }
                try expectClosed("existingObject(with:) in a new context") { _ = try after.existingObject(with: chatID) }
            }
        },
    ]
}
