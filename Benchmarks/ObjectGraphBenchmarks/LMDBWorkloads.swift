import CLMDB
import Foundation
import ObjectGraph

/// The chat workloads on ObjectGraph's LMDB store, against raw LMDB doing the same work on
/// the same layout (see ``RawLMDB``). The ObjectGraph side runs the very same code as on
/// SQLite (``ChatBodies``).
enum LMDBWorkloads {
    static let all: [Workload] = [insert, fetchAll, chatMessages, faultByID, countPerChat, countGrouped, cascadeDelete, update] + LMDBSchoolWorkloads.all

    /// Raw inserts shared by the template and the raw side of `insert`: each chat row, each
    /// message row, and each message's entry among its chat's members.
    static func insertChats(_ db: RawLMDB, _ txn: OpaquePointer, input: ChatInput, tally: UnsafeMutablePointer<Tally>? = nil) throws {
        let sizes = input.sizes
        var pk: Int64 = 0
        for c in 1...sizes.chats {
            try db.put(txn, db.chats, Int64(c), RawLMDB.chatRow(title: input.title(c), version: 1))
            for index in 0..<sizes.messagesPerChat {
                pk += 1
                let text = input.text(chat: c, index: index)
                let sentAt = input.sentAt(chat: c, index: index)
                try db.put(txn, db.messages, pk, RawLMDB.messageRow(text: text, sentAt: sentAt, chat: Int64(c), version: 1))
                try db.put(txn, db.members, Int64(c), RawLMDB.memberEntry(pk, code: RawLMDB.messageCode), flags: UInt32(MDB_NODUPDATA))
                tally?.pointee.add(UInt64(text.utf8.count))
            }
        }
    }

    /// What a chat file holds, read back through raw LMDB (untimed), with the same checksum as
    /// the SQLite table's ``ChatWorkloads/storedState(_:)``: every message with its chat's
    /// title, every chat; and no message whose chat is gone, and no member entry left over.
    static func storedState(_ url: URL) throws -> Tally {
        let db = try RawLMDB(path: url.path)
        return try db.read { txn in
            var tally = Tally()
            var chats = 0
            try db.scan(txn, db.chats) { _, value in
                let chat = try RawLMDB.decodeChat(value)
                tally.add(fnv(chat.title) &+ UInt64(chat.version))
                chats += 1
            }
            var memberEntries = 0
            try db.scan(txn, db.members) { _, _ in memberEntries += 1 }
            var messages = 0
            try db.scan(txn, db.messages) { pk, value in
                let message = try RawLMDB.decodeMessage(value)
                guard let chatRow = try db.get(txn, db.chats, message.chat) else {
                    throw BenchmarkFailure("\(url.lastPathComponent) holds message \(pk) whose chat \(message.chat) is gone")
                }
                let title = try RawLMDB.decodeChat(chatRow).title
                tally.add(fnv(title) &* 31 &+ fnv(message.text) &+ message.sentAt.bitPattern &+ UInt64(message.version) &* 7)
                messages += 1
            }
            guard memberEntries == messages else {
                throw BenchmarkFailure("\(url.lastPathComponent) holds \(memberEntries) member entries for \(messages) messages")
            }
            return tally
        }
    }

    /// A reading workload's files: the store's template for ObjectGraph, a copy for raw.
    final class Shared {
        let reader: ChatWorkloads.SharedReader
        let raw: RawLMDB
        let rawURL: URL
        init(_ fixtures: Fixtures) throws {
            let template = try fixtures.lmdb.chatTemplate()
            reader = ChatWorkloads.SharedReader(try fixtures.lmdb.openContainer(template))
            rawURL = try fixtures.lmdb.copy(template, as: "chat-raw")
            raw = try RawLMDB(path: rawURL.path)
        }
    }

    /// A reading workload: the ObjectGraph body, and the raw body given the raw environment.
    /// The ObjectGraph body gets the chats' IDs made in the untimed setup, as the SQLite side's
    /// do: making them in the body timed 1,000 interned-name lookups the raw side never does.
    static func reading(_ name: String, _ summary: String, objectGraph: @escaping @Sendable (ManagedObjectContext, [ObjectID], Sizes) throws -> Tally,
                        raw: @escaping @Sendable (RawLMDB, Sizes) throws -> Tally) -> Workload {
        Workload(name: name, summary: summary) { fixtures in
            let shared = try Shared(fixtures)
            let sizes = fixtures.sizes
            return Sides(
                objectGraph: {
                    let context = shared.reader.freshContext()
                    let chats = (1...sizes.chats).map { shared.reader.id("Chat", $0) }
                    return Run(body: { try objectGraph(context, chats, sizes) }, context: context)
                },
                raw: { Run(body: { try raw(shared.raw, sizes) }) },
                teardown: { shared.reader.container.close(); fixtures.lmdb.remove(shared.rawURL) })
        }
    }

    static let fetchAll = reading("fetch-all", "fetch every message with faults off, touch text and sentAt; raw: one cursor over the message rows") { context, _, _ in
        try ChatBodies.fetchAll(context)
    } raw: { db, _ in
        try rawFetchAll(db)
    }

    /// The raw side of `fetch-all` (also the raw side of ``ObjectFloor``'s lines).
    static func rawFetchAll(_ db: RawLMDB) throws -> Tally {
        try db.read { txn in
            var messages: [ChatWorkloads.RawMessage] = []
            try db.scan(txn, db.messages) { pk, value in
                let fields = try RawLMDB.decodeMessage(value)
                messages.append(ChatWorkloads.RawMessage(pk: pk, text: fields.text, sentAt: fields.sentAt, chat: fields.chat))
            }
            var tally = Tally()
            for message in messages { tally.add(UInt64(message.text.utf8.count) &+ message.sentAt.bitPattern) }
            return tally
        }
    }

    static let chatMessages = reading("chat-messages", "per chat: fetch its messages (chat == X) sorted by sentAt, faults off; raw: its member keys, each row through one cursor, sort") { context, chats, _ in
        try ChatBodies.chatMessages(context, chats: chats)
    } raw: { db, sizes in
        var tally = Tally()
        var keys: [Int64] = []
        for c in 1...sizes.chats {
            let messages = try db.read { txn in
                keys.removeAll(keepingCapacity: true)
                try db.messageKeys(txn, chat: Int64(c), into: &keys)
                return try db.rows(txn, db.messages, keys) { pk, row in
                    let fields = try RawLMDB.decodeMessage(row)
                    return ChatWorkloads.RawMessage(pk: pk, text: fields.text, sentAt: fields.sentAt, chat: fields.chat)
                }
            }.sorted { ($0.sentAt, $0.pk) < ($1.sentAt, $1.pk) }
            for (position, message) in messages.enumerated() {
                tally.add(UInt64(position + 1) &* UInt64(message.pk) &+ UInt64(message.text.utf8.count))
            }
        }
        return tally
    }

    static let faultByID = Workload(
        name: "fault-by-id",
        summary: "fire one fault per message ID in random order; raw: one read transaction and get per ID"
    ) { fixtures in
        let shared = try Shared(fixtures)
        var generator = SplitMix64(seed: 42)
        let keys = Array(1...fixtures.sizes.messages).shuffled(using: &generator)
        return Sides(
            objectGraph: {
                let context = shared.reader.freshContext()
                let ids = keys.map { shared.reader.id("Message", $0) }
                return Run(body: { ChatBodies.faultByID(context, messages: ids) }, context: context)
            },
            raw: {
                Run(body: {
                    var tally = Tally()
                    for key in keys {
                        let message = try shared.raw.read { txn in
                            guard let row = try shared.raw.get(txn, shared.raw.messages, Int64(key)) else { throw BenchmarkFailure("raw: message \(key) is missing") }
                            let fields = try RawLMDB.decodeMessage(row)
                            return ChatWorkloads.RawMessage(pk: Int64(key), text: fields.text, sentAt: fields.sentAt, chat: fields.chat)
                        }
                        tally.add(UInt64(message.text.utf8.count) &+ UInt64(message.pk))
                    }
                    return tally
                })
            },
            teardown: { shared.reader.container.close(); fixtures.lmdb.remove(shared.rawURL) })
    }

    static let countPerChat = reading("count-per-chat", "per chat: count(for:) its messages (chat == X); raw: mdb_cursor_count on its member keys") { context, chats, _ in
        try ChatBodies.countPerChat(context, chats: chats)
    } raw: { db, sizes in
        var tally = Tally()
        for c in 1...sizes.chats {
            let count = try db.read { txn -> Int in
                var cursor: OpaquePointer?
                try RawLMDB.check(mdb_cursor_open(txn, db.members, &cursor), "cursor")
                defer { mdb_cursor_close(cursor) }
                return RawLMDB.withKey(Int64(c)) { key in
                    var data = MDB_val()
                    var count = 0
                    if mdb_cursor_get(cursor, &key, &data, MDB_SET_KEY) == MDB_SUCCESS { mdb_cursor_count(cursor, &count) }
                    return count
                }
            }
            tally.add(UInt64(count) &* UInt64(c))
        }
        return tally
    }

    static let countGrouped = reading("count-grouped", "message count per chat grouped by chat.title; raw: one cursor over the chats' member keys, mdb_cursor_count per chat, then its title") { context, _, _ in
        try ChatBodies.countGrouped(context)
    } raw: { db, _ in
        // The same work as the store's native grouping: the member database already counts
        // each chat's messages, so no message is read.
        try db.read { txn in
            var cursor: OpaquePointer?
            try RawLMDB.check(mdb_cursor_open(txn, db.members, &cursor), "cursor")
            defer { mdb_cursor_close(cursor) }
            var tally = Tally()
            var key = MDB_val(), data = MDB_val()
            var op = MDB_FIRST
            while mdb_cursor_get(cursor, &key, &data, op) == MDB_SUCCESS {
                op = MDB_NEXT_NODUP
                var count = 0
                try RawLMDB.check(mdb_cursor_count(cursor, &count), "count")
                guard key.mv_size == 8, let raw = key.mv_data else { throw BenchmarkFailure("raw: a member key is not 8 bytes") }
                let chat = RawLMDB.pk(raw)
                guard let row = try db.get(txn, db.chats, chat) else { throw BenchmarkFailure("raw: chat \(chat) is missing") }
                tally.add(fnv(try RawLMDB.decodeChat(row).title) &* UInt64(count))
            }
            return tally
        }
    }
}
