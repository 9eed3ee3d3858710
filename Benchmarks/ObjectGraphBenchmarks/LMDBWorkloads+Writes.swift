import CLMDB
import Foundation
import ObjectGraph

/// The writing chat workloads on LMDB: each run of each side gets a fresh copy of its file,
/// and what it stored is checked afterwards (untimed).
extension LMDBWorkloads {
    static let insert = Workload(
        name: "insert",
        summary: "insert C chats × M messages (message.chat = chat) and save once; raw: rows and member entries in one write transaction"
    ) { fixtures in
        let sizes = fixtures.sizes
        return Sides(
            objectGraph: {
                let url = try fixtures.lmdb.copy(try fixtures.lmdb.emptyStore(), as: "insert-og")
                let container = try fixtures.lmdb.openContainer(url)
                let context = container.newBackgroundContext()
                return Run(
                    body: { try ChatBodies.insert(context, sizes: sizes) },
                    after: { container.close(); return try storedState(url) },
                    cleanup: { container.close(); fixtures.lmdb.remove(url) }, context: context)
            },
            raw: {
                let url = try fixtures.lmdb.copy(try fixtures.lmdb.emptyStore(), as: "insert-raw")
                var db: RawLMDB? = try RawLMDB(path: url.path)
                return Run(
                    body: {
                        let connection = db!
                        var tally = Tally()
                        try connection.write { txn in try insertChats(connection, txn, sizes: sizes, tally: &tally) }
                        return tally
                    },
                    after: { db = nil; return try storedState(url) },
                    cleanup: { db = nil; fixtures.lmdb.remove(url) })
            })
    }

    static let cascadeDelete = Workload(
        name: "cascade-delete",
        summary: "delete every 10th chat (its messages cascade) and save; raw: per chat, its member keys' rows, its members, its row"
    ) { fixtures in
        let template = try fixtures.lmdb.chatTemplate()
        let chats = ChatWorkloads.deletedChats(fixtures.sizes)
        return Sides(
            objectGraph: {
                let url = try fixtures.lmdb.copy(template, as: "cascade-og")
                let reader = ChatWorkloads.SharedReader(try fixtures.lmdb.openContainer(url))
                let context = reader.freshContext()
                let ids = chats.map { reader.id("Chat", $0) }
                return Run(
                    body: { try ChatBodies.cascadeDelete(context, chats: ids) },
                    after: { reader.container.close(); return try storedState(url) },
                    cleanup: { reader.container.close(); fixtures.lmdb.remove(url) }, context: context)
            },
            raw: {
                let url = try fixtures.lmdb.copy(template, as: "cascade-raw")
                var db: RawLMDB? = try RawLMDB(path: url.path)
                return Run(
                    body: {
                        let connection = db!
                        return try connection.write { txn in
                            var tally = Tally()
                            var keys: [Int64] = []
                            for c in chats {
                                keys.removeAll(keepingCapacity: true)
                                try connection.messageKeys(txn, chat: Int64(c), into: &keys)
                                for key in keys {
                                    try RawLMDB.withKey(key) { try RawLMDB.check(mdb_del(txn, connection.messages, &$0, nil), "delete message") }
                                }
                                try RawLMDB.withKey(Int64(c)) { key in
                                    try RawLMDB.check(mdb_del(txn, connection.members, &key, nil), "delete members")
                                    try RawLMDB.check(mdb_del(txn, connection.chats, &key, nil), "delete chat")
                                }
                                tally.add(UInt64(c))
                            }
                            return tally
                        }
                    },
                    after: { db = nil; return try storedState(url) },
                    cleanup: { db = nil; fixtures.lmdb.remove(url) })
            })
    }

    static let update = Workload(
        name: "update",
        summary: "append to the text of every 10th message (by ID) and save; raw: get, decode, re-encode with version + 1, put"
    ) { fixtures in
        let template = try fixtures.lmdb.chatTemplate()
        let keys = Array(stride(from: 10, through: fixtures.sizes.messages, by: 10))
        return Sides(
            objectGraph: {
                let url = try fixtures.lmdb.copy(template, as: "update-og")
                let reader = ChatWorkloads.SharedReader(try fixtures.lmdb.openContainer(url))
                let context = reader.freshContext()
                let ids = keys.map { reader.id("Message", $0) }
                return Run(
                    body: { try ChatBodies.update(context, messages: ids) },
                    after: { reader.container.close(); return try storedState(url) },
                    cleanup: { reader.container.close(); fixtures.lmdb.remove(url) }, context: context)
            },
            raw: {
                let url = try fixtures.lmdb.copy(template, as: "update-raw")
                var db: RawLMDB? = try RawLMDB(path: url.path)
                return Run(
                    body: {
                        let connection = db!
                        return try connection.write { txn in
                            var tally = Tally()
                            for key in keys {
                                guard let row = try connection.get(txn, connection.messages, Int64(key)) else { throw BenchmarkFailure("raw: message \(key) is missing") }
                                let fields = try RawLMDB.decodeMessage(row)
                                let text = fields.text + " (edited)"
                                try connection.put(txn, connection.messages, Int64(key),
                                                   RawLMDB.messageRow(text: text, sentAt: fields.sentAt, chat: fields.chat, version: fields.version + 1))
                                tally.add(UInt64(text.utf8.count))
                            }
                            return tally
                        }
                    },
                    after: { db = nil; return try storedState(url) },
                    cleanup: { db = nil; fixtures.lmdb.remove(url) })
            })
    }
}
