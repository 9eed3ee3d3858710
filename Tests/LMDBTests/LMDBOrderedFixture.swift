import CLMDB
import Foundation
import ObjectGraph
import ObjectGraphLMDB
import OrderedCollections
import Testing

/// A model with ordered to-manys (one with an inverse, one without), and raw-LMDB views of
/// their members databases, for the tests of ordered members stored as positioned duplicates
/// and of the upgrade from the layout that kept each list as one value.
enum LMDBOrderedFixture {
    static let tracksDatabase = "og:m:Playlist.tracks"
    static let queueDatabase = "og:m:Playlist.queue"

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Playlist") { e in
                e.attribute("name", .string)
                e.toMany("tracks", "Track", inverse: "playlist", ordered: true)
                e.toMany("queue", "Track", ordered: true)
            }
            m.entity("Track") { e in
                e.attribute("n", .integer64)
                e.toOne("playlist", "Playlist", inverse: "tracks", optional: true)
            }
        }
    }

    /// Runs `body` with a context of a new container on `url`, saves, and closes the container
    /// (so the raw environment can be opened next).
    static func withContext<T>(_ url: URL, _ body: (ManagedObjectContext) throws -> T) throws -> T {
        let container = try PersistentContainer(model: try model(), stores: [.lmdb(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            let result = try body(context)
            if context.hasChanges { try context.save() }
            return result
        }
    }

    /// The one playlist of the store.
    static func playlist(_ context: ManagedObjectContext) throws -> ManagedObject {
        try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Playlist")).first)
    }

    /// A track with number `n`, inserted in `context`.
    static func track(_ n: Int, _ context: ManagedObjectContext) throws -> ManagedObject {
        let track = try context.insertObject(entityName: "Track")
        try track.setValue(Int64(n), forKey: "n")
        return track
    }

    /// The members of `playlist`'s ordered relationship `key`, in order.
    static func members(_ playlist: ManagedObject, _ key: String) throws -> [ManagedObject] {
        Array(try #require(try playlist.value(forKey: key) as? OrderedSet<ManagedObject>))
    }

    /// The numbers of the members of `playlist`'s ordered relationship `key`, in order.
    static func numbers(_ playlist: ManagedObject, _ key: String) throws -> [Int64] {
        try members(playlist, key).map { try #require(try $0.value(forKey: "n") as? Int64) }
    }

    /// Every duplicate under each key of the named database, in stored order, with the
    /// database's flags.
    static func duplicates(_ url: URL, _ name: String) throws -> (flags: UInt32, entries: [[UInt8]: [[UInt8]]]) {
        try LMDBFixture.withRawEnvironment(url) { _, txn in
            var dbi: MDB_dbi = 0
            try #require(mdb_dbi_open(txn, name, 0, &dbi) == MDB_SUCCESS)
            var flags: UInt32 = 0
            mdb_dbi_flags(txn, dbi, &flags)
            var cursor: OpaquePointer?
            mdb_cursor_open(txn, dbi, &cursor)
            defer { mdb_cursor_close(cursor) }
            var key = MDB_val(), value = MDB_val()
            var entries: [[UInt8]: [[UInt8]]] = [:]
            var op = MDB_FIRST
            while mdb_cursor_get(cursor, &key, &value, op) == MDB_SUCCESS {
                let k = Array(UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size))
                entries[k, default: []].append(Array(UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)))
                op = MDB_NEXT
            }
            return (flags, entries)
        }
    }

    /// The one owner's duplicates in the named database (none when it has no key).
    static func entries(_ url: URL, _ name: String) throws -> [[UInt8]] {
        let found = try duplicates(url, name).entries
        #expect(found.count <= 1, "one owner")
        return found.values.first ?? []
    }

    /// The integer a duplicate holds at `offset` (8 bytes, sign bit flipped).
    static func integer(_ entry: [UInt8], at offset: Int) -> Int64 {
        let bits = entry[offset..<offset + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Int64(bitPattern: bits ^ (1 << 63))
    }

    /// The metadata value `format`.
    static func format(_ url: URL) throws -> String? {
        try LMDBDamagedStoreTests.get(url, "og:meta", Array("format".utf8)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Rewrites the named ordered members databases as format `objectgraph-lmdb-1` kept them
    /// (a plain database, each owner's members one value of 10 bytes each — member key ·
    /// entity code — in list order) and marks the store as of that format.
    static func writeListLayout(_ url: URL, _ names: [String]) throws {
        try LMDBFixture.withRawEnvironment(url) { _, txn in
            for name in names {
                var dbi: MDB_dbi = 0
                try #require(mdb_dbi_open(txn, name, 0, &dbi) == MDB_SUCCESS)
                var lists: [[UInt8]: [UInt8]] = [:]
                var cursor: OpaquePointer?
                mdb_cursor_open(txn, dbi, &cursor)
                var key = MDB_val(), value = MDB_val()
                var op = MDB_FIRST
                while mdb_cursor_get(cursor, &key, &value, op) == MDB_SUCCESS {
                    let entry = UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)
                    lists[Array(UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)), default: []] += entry.dropFirst(8)
                    op = MDB_NEXT
                }
                mdb_cursor_close(cursor)
                try #require(mdb_drop(txn, dbi, 1) == MDB_SUCCESS)
                try #require(mdb_dbi_open(txn, name, UInt32(MDB_CREATE), &dbi) == MDB_SUCCESS)
                for (owner, list) in lists { try #require(LMDBFixture.rawPut(txn, dbi, owner, list) == MDB_SUCCESS) }
            }
            var meta: MDB_dbi = 0
            try #require(mdb_dbi_open(txn, "og:meta", 0, &meta) == MDB_SUCCESS)
            try #require(LMDBFixture.rawPut(txn, meta, Array("format".utf8), Array("objectgraph-lmdb-1".utf8)) == MDB_SUCCESS)
        }
    }
}
