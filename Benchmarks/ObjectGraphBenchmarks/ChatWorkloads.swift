import Foundation
import ObjectGraph
import ObjectGraphSQLite

/// The chat-app workloads: Chat(title) ↔ Message(text, sentAt, chat), cascade chat → messages.
enum ChatWorkloads {
    static let all: [Workload] = [insert, fetchAll, chatMessages, faultByID, countPerChat, countGrouped, cascadeDelete, update]

    // MARK: Shared helpers

    /// An ObjectGraph side reading a shared file: one container for the workload, and per
    /// repetition a fresh context with the coordinator's row cache emptied, so every
    /// repetition reads from the store.
    final class SharedReader {
        let container: PersistentContainer
        let storeIdentifier: String
        convenience init(_ fixtures: Fixtures, _ url: URL) throws {
            self.init(try fixtures.openContainer(url))
        }
        init(_ container: PersistentContainer) {
            self.container = container
            storeIdentifier = container.coordinator.persistentStores[0].identifier
        }
        func freshContext() -> ManagedObjectContext {
            container.coordinator.rowCache.removeAll()
            return container.newBackgroundContext()
        }
        func id(_ entity: String, _ pk: Int) -> ObjectID {
            ObjectID(entityName: entity, storeIdentifier: storeIdentifier, primaryKey: Int64(pk))
        }
    }

    /// The ObjectGraph side of a workload that writes: per run, a copy of `template`, a fresh
    /// context on it and the IDs of `keys`; afterwards the stored state, read back.
    static func writingSide(
        _ fixtures: Fixtures, _ template: URL, as name: String, entity: String, keys: [Int],
        _ body: @escaping (ManagedObjectContext, [ObjectID]) throws -> Tally
    ) -> () throws -> Run {
        {
            let url = try fixtures.copy(template, as: name)
            let reader = try SharedReader(fixtures, url)
            let context = reader.freshContext()
            let ids = keys.map { reader.id(entity, $0) }
            return Run(
                body: { try body(context, ids) },
                after: { reader.container.close(); return try storedState(url) },
                cleanup: { reader.container.close(); fixtures.remove(url) }, context: context)
        }
    }

    /// What a chat file holds, read back through raw sqlite3 (untimed): every message with
    /// its chat's title, and every chat. Independent of primary keys, so files written by
    /// either side compare equal when they hold the same graph.
    static func storedState(_ url: URL) throws -> Tally {
        let db = try RawDB(path: url.path)
        let orphans = try db.integer(
            "SELECT COUNT(*) FROM \(BenchmarkModel.messageTable) m WHERE NOT EXISTS (SELECT 1 FROM \(BenchmarkModel.chatTable) c WHERE c.pk = m.\(BenchmarkModel.messageChat))")
        guard orphans == 0 else { throw BenchmarkFailure("\(url.lastPathComponent) holds \(orphans) messages whose chat is gone") }
        var tally = Tally()
        let messages = try db.prepare(
            "SELECT c.\(BenchmarkModel.chatTitle), m.\(BenchmarkModel.messageText), m.\(BenchmarkModel.messageSentAt), m.version FROM \(BenchmarkModel.messageTable) m JOIN \(BenchmarkModel.chatTable) c ON c.pk = m.\(BenchmarkModel.messageChat)")
        while try messages.step() {
            tally.add(fnv(messages.text(0)) &* 31 &+ fnv(messages.text(1)) &+ messages.double(2).bitPattern &+ UInt64(messages.int64(3)) &* 7)
        }
        let chats = try db.prepare("SELECT \(BenchmarkModel.chatTitle), version FROM \(BenchmarkModel.chatTable)")
        while try chats.step() { tally.add(fnv(chats.text(0)) &+ UInt64(chats.int64(1))) }
        return tally
    }

    /// A message row as a hand-written data layer would hold it.
    struct RawMessage {
        var pk: Int64
        var text: String
        var sentAt: Double
        var chat: Int64
    }

    // MARK: Workloads

    static let insert = Workload(
        name: "insert",
        summary: "insert C chats × M messages (message.chat = chat) and save once"
    ) { fixtures in
        let input = ChatInput(fixtures.sizes)
        return Sides(
            objectGraph: {
                let url = try fixtures.copy(try fixtures.emptyStore(), as: "insert-og")
                let container = try fixtures.openContainer(url)
                let context = container.newBackgroundContext()
                return Run(
                    body: { try ChatBodies.insert(context, input: input) },
                    after: { container.close(); return try storedState(url) },
                    cleanup: { container.close(); fixtures.remove(url) }, context: context)
            },
            raw: {
                let url = try fixtures.copy(try fixtures.emptyStore(), as: "insert-raw")
                var db: RawDB? = try RawDB(path: url.path)
                return Run(
                    body: {
                        let connection = db!
                        try connection.exec("BEGIN IMMEDIATE;")
                        let tally = try RawWriter.insertChats(connection, input: input)
                        try connection.exec("COMMIT;")
                        return tally
                    },
                    after: { db = nil; return try storedState(url) },
                    cleanup: { db = nil; fixtures.remove(url) })
            })
    }

    static let fetchAll = Workload(
        name: "fetch-all",
        summary: "fetch every message with faults off, touch text and sentAt"
    ) { fixtures in
        let url = try fixtures.chatTemplate()
        let reader = try SharedReader(fixtures, url)
        let db = try RawDB(path: url.path)
        return Sides(
            objectGraph: {
                let context = reader.freshContext()
                return Run(body: { try ChatBodies.fetchAll(context) }, context: context)
            },
            raw: { Run(body: { try rawFetchAll(db) }) },
            teardown: { reader.container.close() })
    }

    /// The raw side's query for `fetch-all` (also read by ``ObjectFloor``'s SQLite lines).
    static let rawFetchAllSQL = "SELECT pk, \(BenchmarkModel.messageText), \(BenchmarkModel.messageSentAt), \(BenchmarkModel.messageChat) FROM \(BenchmarkModel.messageTable) ORDER BY pk"

    /// The raw side of `fetch-all` (also the raw side of ``ObjectFloor``'s SQLite lines).
    static func rawFetchAll(_ db: RawDB) throws -> Tally {
        let statement = try db.prepare(rawFetchAllSQL)
        var messages: [RawMessage] = []
        while try statement.step() {
            messages.append(RawMessage(pk: statement.int64(0), text: statement.text(1), sentAt: statement.double(2), chat: statement.int64(3)))
        }
        var tally = Tally()
        for message in messages { tally.add(UInt64(message.text.utf8.count) &+ message.sentAt.bitPattern) }
        return tally
    }

    static let chatMessages = Workload(
        name: "chat-messages",
        summary: "per chat: fetch its messages (chat == X) sorted by sentAt, faults off, touch them"
    ) { fixtures in
        let url = try fixtures.chatTemplate()
        let reader = try SharedReader(fixtures, url)
        let db = try RawDB(path: url.path)
        let chats = fixtures.sizes.chats
        return Sides(
            objectGraph: {
                let context = reader.freshContext()
                let ids = (1...chats).map { reader.id("Chat", $0) }
                return Run(body: { try ChatBodies.chatMessages(context, chats: ids) }, context: context)
            },
            raw: {
                Run(body: {
                    let statement = try db.prepare(
                        "SELECT pk, \(BenchmarkModel.messageText), \(BenchmarkModel.messageSentAt), \(BenchmarkModel.messageChat) FROM \(BenchmarkModel.messageTable) WHERE \(BenchmarkModel.messageChat) = ? ORDER BY \(BenchmarkModel.messageSentAt), pk")
                    var tally = Tally()
                    for c in 1...chats {
                        statement.bind(Int64(c), at: 1)
                        var messages: [RawMessage] = []
                        while try statement.step() {
                            messages.append(RawMessage(pk: statement.int64(0), text: statement.text(1), sentAt: statement.double(2), chat: statement.int64(3)))
                        }
                        statement.reset()
                        for (position, message) in messages.enumerated() {
                            tally.add(UInt64(position + 1) &* UInt64(message.pk) &+ UInt64(message.text.utf8.count))
                        }
                    }
                    return tally
                })
            },
            teardown: { reader.container.close() })
    }

    static let faultByID = Workload(
        name: "fault-by-id",
        summary: "fire one fault per message ID in random order (fresh context, empty row cache)"
    ) { fixtures in
        let url = try fixtures.chatTemplate()
        let reader = try SharedReader(fixtures, url)
        let db = try RawDB(path: url.path)
        var generator = SplitMix64(seed: 42)
        let keys = Array(1...fixtures.sizes.messages).shuffled(using: &generator)
        return Sides(
            objectGraph: {
                let context = reader.freshContext()
                let ids = keys.map { reader.id("Message", $0) }
                return Run(body: { ChatBodies.faultByID(context, messages: ids) }, context: context)
            },
            raw: {
                Run(body: {
                    let statement = try db.prepare(
                        "SELECT pk, \(BenchmarkModel.messageText), \(BenchmarkModel.messageSentAt), \(BenchmarkModel.messageChat) FROM \(BenchmarkModel.messageTable) WHERE pk = ?")
                    var tally = Tally()
                    for key in keys {
                        statement.bind(Int64(key), at: 1)
                        guard try statement.step() else { throw BenchmarkFailure("raw: message \(key) is missing") }
                        let message = RawMessage(pk: statement.int64(0), text: statement.text(1), sentAt: statement.double(2), chat: statement.int64(3))
                        statement.reset()
                        tally.add(UInt64(message.text.utf8.count) &+ UInt64(message.pk))
                    }
                    return tally
                })
            },
            teardown: { reader.container.close() })
    }

    static let countPerChat = Workload(
        name: "count-per-chat",
        summary: "per chat: count(for:) its messages (chat == X); raw: SELECT COUNT(*) … WHERE fk = ?"
    ) { fixtures in
        let url = try fixtures.chatTemplate()
        let reader = try SharedReader(fixtures, url)
        let db = try RawDB(path: url.path)
        let chats = fixtures.sizes.chats
        return Sides(
            objectGraph: {
                let context = reader.freshContext()
                let ids = (1...chats).map { reader.id("Chat", $0) }
                return Run(body: { try ChatBodies.countPerChat(context, chats: ids) }, context: context)
            },
            raw: {
                Run(body: {
                    let statement = try db.prepare("SELECT COUNT(*) FROM \(BenchmarkModel.messageTable) WHERE \(BenchmarkModel.messageChat) = ?")
                    var tally = Tally()
                    for c in 1...chats {
                        statement.bind(Int64(c), at: 1)
                        guard try statement.step() else { throw BenchmarkFailure("raw: no count") }
                        tally.add(UInt64(statement.int64(0)) &* UInt64(c))
                        statement.reset()
                    }
                    return tally
                })
            },
            teardown: { reader.container.close() })
    }

    static let countGrouped = Workload(
        name: "count-grouped",
        summary: "message count per chat as one dictionary fetch grouped by chat.title; raw: one GROUP BY query"
    ) { fixtures in
        let url = try fixtures.chatTemplate()
        let reader = try SharedReader(fixtures, url)
        let db = try RawDB(path: url.path)
        return Sides(
            objectGraph: {
                let context = reader.freshContext()
                return Run(body: { try ChatBodies.countGrouped(context) }, context: context)
            },
            raw: {
                Run(body: {
                    let statement = try db.prepare(
                        "SELECT c.\(BenchmarkModel.chatTitle), COUNT(*) FROM \(BenchmarkModel.messageTable) m JOIN \(BenchmarkModel.chatTable) c ON c.pk = m.\(BenchmarkModel.messageChat) GROUP BY m.\(BenchmarkModel.messageChat)")
                    var tally = Tally()
                    while try statement.step() { tally.add(fnv(statement.text(0)) &* UInt64(statement.int64(1))) }
                    return tally
                })
            },
            teardown: { reader.container.close() })
    }

    /// Every tenth chat (pk 1, 11, 21, …).
    static func deletedChats(_ sizes: Sizes) -> [Int] { Array(stride(from: 1, through: sizes.chats, by: 10)) }

    static let cascadeDelete = Workload(
        name: "cascade-delete",
        summary: "delete every 10th chat (its messages cascade) and save"
    ) { fixtures in
        let template = try fixtures.chatTemplate()
        let chats = deletedChats(fixtures.sizes)
        return Sides(
            objectGraph: writingSide(fixtures, template, as: "cascade-og", entity: "Chat", keys: chats) { context, ids in
                try ChatBodies.cascadeDelete(context, chats: ids)
            },
            raw: {
                let url = try fixtures.copy(template, as: "cascade-raw")
                var db: RawDB? = try RawDB(path: url.path)
                return Run(
                    body: {
                        let connection = db!
                        try connection.exec("BEGIN IMMEDIATE;")
                        let messages = try connection.prepare("DELETE FROM \(BenchmarkModel.messageTable) WHERE \(BenchmarkModel.messageChat) = ?")
                        let chat = try connection.prepare("DELETE FROM \(BenchmarkModel.chatTable) WHERE pk = ?")
                        var tally = Tally()
                        for c in chats {
                            messages.bind(Int64(c), at: 1)
                            try messages.run()
                            chat.bind(Int64(c), at: 1)
                            try chat.run()
                            tally.add(UInt64(c))
                        }
                        try connection.exec("COMMIT;")
                        return tally
                    },
                    after: { db = nil; return try storedState(url) },
                    cleanup: { db = nil; fixtures.remove(url) })
            })
    }

    static let update = Workload(
        name: "update",
        summary: "append to the text of every 10th message (by ID) and save"
    ) { fixtures in
        let template = try fixtures.chatTemplate()
        let keys = Array(stride(from: 10, through: fixtures.sizes.messages, by: 10))
        return Sides(
            objectGraph: writingSide(fixtures, template, as: "update-og", entity: "Message", keys: keys) { context, ids in
                try ChatBodies.update(context, messages: ids)
            },
            raw: {
                let url = try fixtures.copy(template, as: "update-raw")
                var db: RawDB? = try RawDB(path: url.path)
                return Run(
                    body: {
                        let connection = db!
                        try connection.exec("BEGIN IMMEDIATE;")
                        let read = try connection.prepare("SELECT \(BenchmarkModel.messageText) FROM \(BenchmarkModel.messageTable) WHERE pk = ?")
                        let write = try connection.prepare("UPDATE \(BenchmarkModel.messageTable) SET \(BenchmarkModel.messageText) = ?, version = version + 1 WHERE pk = ?")
                        var tally = Tally()
                        for key in keys {
                            read.bind(Int64(key), at: 1)
                            guard try read.step() else { throw BenchmarkFailure("raw: message \(key) is missing") }
                            let text = read.text(0) + " (edited)"
                            read.reset()
                            write.bind(text, at: 1)
                            write.bind(Int64(key), at: 2)
                            try write.run()
                            tally.add(UInt64(text.utf8.count))
                        }
                        try connection.exec("COMMIT;")
                        return tally
                    },
                    after: { db = nil; return try storedState(url) },
                    cleanup: { db = nil; fixtures.remove(url) })
            })
    }
}
