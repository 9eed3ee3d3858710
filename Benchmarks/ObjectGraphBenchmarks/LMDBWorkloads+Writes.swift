import CLMDB
import Foundation
import ObjectGraph

/// The writing chat workloads on LMDB: each run of each side gets a fresh copy of its file,
/// and what it stored is checked afterwards (untimed).
extension LMDBWorkloads {
    /// The ObjectGraph side of a writing workload: a copy of `template`, a fresh context, and
    /// the IDs of `keys` of `entity`.
    static func objectGraphWriting(
        _ fixtures: Fixtures, _ template: @escaping () throws -> URL, _ stem: String, entity: String, keys: [Int],
        _ body: @escaping (ManagedObjectContext, [ObjectID]) throws -> Tally
    ) -> () throws -> Run {
        {
            let url = try fixtures.lmdb.copy(try template(), as: stem + "-og")
            let reader = ChatWorkloads.SharedReader(try fixtures.lmdb.openContainer(url))
            let context = reader.freshContext()
            let ids = keys.map { reader.id(entity, $0) }
            return Run(
                body: { try body(context, ids) },
                after: { reader.container.close(); return try storedState(url) },
                cleanup: { reader.container.close(); fixtures.lmdb.remove(url) }, context: context)
        }
    }

    /// The raw side of a writing workload: a copy of `template` and one write transaction.
    static func rawWriting(
        _ fixtures: Fixtures, _ template: @escaping () throws -> URL, _ stem: String,
        _ body: @escaping (RawLMDB, OpaquePointer) throws -> Tally
    ) -> () throws -> Run {
        {
            let url = try fixtures.lmdb.copy(try template(), as: stem + "-raw")
            var db: RawLMDB? = try RawLMDB(path: url.path)
            return Run(
                body: {
                    let connection = db!
                    return try connection.write { txn in try body(connection, txn) }
                },
                after: { db = nil; return try storedState(url) },
                cleanup: { db = nil; fixtures.lmdb.remove(url) })
        }
    }

    static let insert = Workload(
        name: "insert",
        summary: "insert C chats × M messages (message.chat = chat) and save once; raw: rows and member entries in one write transaction"
    ) { fixtures in
        let input = ChatInput(fixtures.sizes)
        let empty = { try fixtures.lmdb.emptyStore() }
        return Sides(
            objectGraph: objectGraphWriting(fixtures, empty, "insert", entity: "Chat", keys: []) { context, _ in
                try ChatBodies.insert(context, input: input)
            },
            raw: rawWriting(fixtures, empty, "insert") { db, txn in
                var tally = Tally()
                try insertChats(db, txn, input: input, tally: &tally)
                return tally
            })
    }

    static let cascadeDelete = Workload(
        name: "cascade-delete",
        summary: "delete every 10th chat (its messages cascade) and save; raw: per chat, its member keys' rows, its members, its row"
    ) { fixtures in
        let chats = ChatWorkloads.deletedChats(fixtures.sizes)
        let template = { try fixtures.lmdb.chatTemplate() }
        return Sides(
            objectGraph: objectGraphWriting(fixtures, template, "cascade", entity: "Chat", keys: chats) { context, ids in
                try ChatBodies.cascadeDelete(context, chats: ids)
            },
            raw: rawWriting(fixtures, template, "cascade") { db, txn in
                var tally = Tally()
                var keys: [Int64] = []
                for c in chats {
                    keys.removeAll(keepingCapacity: true)
                    try db.messageKeys(txn, chat: Int64(c), into: &keys)
                    for key in keys {
                        try RawLMDB.withKey(key) { try RawLMDB.check(mdb_del(txn, db.messages, &$0, nil), "delete message") }
                    }
                    try RawLMDB.withKey(Int64(c)) { key in
                        try RawLMDB.check(mdb_del(txn, db.members, &key, nil), "delete members")
                        try RawLMDB.check(mdb_del(txn, db.chats, &key, nil), "delete chat")
                    }
                    tally.add(UInt64(c))
                }
                return tally
            })
    }

    static let update = Workload(
        name: "update",
        summary: "append to the text of every 10th message (by ID) and save; raw: get, decode, re-encode with version + 1, put"
    ) { fixtures in
        let keys = Array(stride(from: 10, through: fixtures.sizes.messages, by: 10))
        let template = { try fixtures.lmdb.chatTemplate() }
        return Sides(
            objectGraph: objectGraphWriting(fixtures, template, "update", entity: "Message", keys: keys) { context, ids in
                try ChatBodies.update(context, messages: ids)
            },
            raw: rawWriting(fixtures, template, "update") { db, txn in
                var tally = Tally()
                for key in keys {
                    guard let row = try db.get(txn, db.messages, Int64(key)) else { throw BenchmarkFailure("raw: message \(key) is missing") }
                    let fields = try RawLMDB.decodeMessage(row)
                    let text = fields.text + " (edited)"
                    try db.put(txn, db.messages, Int64(key), RawLMDB.messageRow(text: text, sentAt: fields.sentAt, chat: fields.chat, version: fields.version + 1))
                    tally.add(UInt64(text.utf8.count))
                }
                return tally
            })
    }
}
