import CLMDB
import Foundation
import ObjectGraph
import ObjectGraphInMemory
import ObjectGraphLMDB
import Testing

/// An ordered to-many's members are one duplicate each, `position · member key · entity
/// code`, with gaps between positions: a save writes only the members that join or move, not
/// the list. Checked on the raw database between saves (the store closed), with the order the
/// context then reads.
@Suite("LMDB ordered members")
struct LMDBOrderedMembersTests {
    /// The duplicates a save through `body` added and deleted in the playlist's tracks.
    static func change(_ url: URL, _ body: (ManagedObjectContext, ManagedObject) throws -> Void) throws -> (added: Set<[UInt8]>, deleted: Set<[UInt8]>) {
        let before = Set(try LMDBOrderedFixture.entries(url, LMDBOrderedFixture.tracksDatabase))
        try LMDBOrderedFixture.withContext(url) { context in try body(context, try LMDBOrderedFixture.playlist(context)) }
        let after = Set(try LMDBOrderedFixture.entries(url, LMDBOrderedFixture.tracksDatabase))
        return (after.subtracting(before), before.subtracting(after))
    }

    /// The playlist's track numbers, read by a new container's context.
    static func order(_ url: URL) throws -> [Int64] {
        try LMDBOrderedFixture.withContext(url) { context in try LMDBOrderedFixture.numbers(try LMDBOrderedFixture.playlist(context), "tracks") }
    }

    /// A closed store with one playlist of `count` tracks numbered 0 up, in that order.
    static func playlistStore(_ count: Int) throws -> URL {
        let url = try LMDBFixture.temporaryFile()
        try LMDBOrderedFixture.withContext(url) { context in
            let playlist = try context.insertObject(entityName: "Playlist")
            try playlist.setValue("mix", forKey: "name")
            for n in 0..<count { try playlist.add(try LMDBOrderedFixture.track(n, context), to: "tracks") }
        }
        return url
    }

    @Test("an insert in the middle, an append, a move and a removal each write or delete only the member's duplicate")
    func changesTouchOneDuplicate() throws {
        let url = try Self.playlistStore(50)
        var expected = (0..<50).map(Int64.init)
        let stored = try LMDBOrderedFixture.duplicates(url, LMDBOrderedFixture.tracksDatabase)
        #expect(stored.flags & UInt32(MDB_DUPSORT) != 0)
        #expect(stored.entries.values.first?.count == 50 && stored.entries.values.first?.allSatisfy { $0.count == 18 } == true)
        // The member key of a duplicate, against the key of the track it should be.
        func memberKey(_ entry: [UInt8]?) -> Int64? { entry.map { LMDBOrderedFixture.integer($0, at: 8) } }
        var keys: [Int64: Int64] = [:]  // track number → primary key
        try LMDBOrderedFixture.withContext(url) { context in
            for track in try LMDBOrderedFixture.members(try LMDBOrderedFixture.playlist(context), "tracks") {
                keys[try #require(try track.value(forKey: "n") as? Int64)] = track.objectID.primaryKey
            }
        }
        #expect(keys.count == 50)

        let inserted = try Self.change(url) { context, playlist in
            let track = try LMDBOrderedFixture.track(100, context)
            try playlist.insert(track, at: 25, in: "tracks")
        }
        expected.insert(100, at: 25)
        #expect(inserted.added.count == 1 && inserted.deleted.isEmpty, "an insert writes one duplicate: \(inserted)")
        #expect(try Self.order(url) == expected)

        let appended = try Self.change(url) { context, playlist in try playlist.add(try LMDBOrderedFixture.track(101, context), to: "tracks") }
        expected.append(101)
        #expect(appended.added.count == 1 && appended.deleted.isEmpty, "an append writes one duplicate: \(appended)")
        #expect(try Self.order(url) == expected)

        let moved = try Self.change(url) { _, playlist in try playlist.move(from: 10, to: 40, in: "tracks") }
        expected.insert(expected.remove(at: 10), at: 40)
        #expect(moved.added.count == 1 && moved.deleted.count == 1, "a move rewrites one duplicate: \(moved)")
        #expect(memberKey(moved.added.first) == keys[10] && memberKey(moved.deleted.first) == keys[10], "the moved member's")
        #expect(try Self.order(url) == expected)

        let removed = try Self.change(url) { context, playlist in
            try playlist.remove(try LMDBOrderedFixture.members(playlist, "tracks")[2], from: "tracks")
        }
        expected.remove(at: 2)
        #expect(removed.added.isEmpty && removed.deleted.count == 1 && memberKey(removed.deleted.first) == keys[2], "a removal deletes one duplicate: \(removed)")
        #expect(try Self.order(url) == expected)
    }

    @Test("inserts at one spot halve its gap until it is used up; then the list is renumbered, and the order is right throughout")
    func exhaustedGapRenumbers() throws {
        let url = try Self.playlistStore(8)
        var expected = (0..<8).map(Int64.init)
        var writes: [Int] = []
        for n in 100..<112 {
            let change = try Self.change(url) { context, playlist in try playlist.insert(try LMDBOrderedFixture.track(n, context), at: 1, in: "tracks") }
            expected.insert(Int64(n), at: 1)
            writes.append(change.added.count)
            #expect(change.deleted.count == change.added.count - 1, "the new member's duplicate, and those of the members that moved")
            #expect(try Self.order(url) == expected, "after inserting \(n)")
        }
        // 1024 between the first two positions: ten halvings fit, the eleventh renumbers.
        #expect(writes.prefix(10).allSatisfy { $0 == 1 }, "\(writes)")
        #expect(writes[10] > 1, "the used-up gap renumbered the list: \(writes)")
        let positions = try LMDBOrderedFixture.entries(url, LMDBOrderedFixture.tracksDatabase).map { LMDBOrderedFixture.integer($0, at: 0) }
        #expect(positions == positions.sorted() && Set(positions).count == positions.count)
    }

    @Test("a damaged ordered duplicate is a typed error naming the file, on reading the list and on saving a change to it")
    func damagedDuplicate() throws {
        let url = try Self.playlistStore(3)
        let owner = try #require(try LMDBOrderedFixture.duplicates(url, LMDBOrderedFixture.tracksDatabase).entries.keys.first)
        // A member entry of the unordered layout (10 bytes) where an 18-byte one belongs.
        try LMDBFixture.withRawEnvironment(url) { _, txn in
            var dbi: MDB_dbi = 0
            try #require(mdb_dbi_open(txn, LMDBOrderedFixture.tracksDatabase, 0, &dbi) == MDB_SUCCESS)
            try #require(LMDBFixture.rawPut(txn, dbi, owner, [0x80, 0, 0, 0, 0, 0, 0, 1, 0, 1]) == MDB_SUCCESS)
        }
        let container = try PersistentContainer(model: try LMDBOrderedFixture.model(), stores: [.lmdb(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let playlist = try LMDBOrderedFixture.playlist(context)
            let read = #expect(throws: StoreError.self) { _ = try LMDBOrderedFixture.numbers(playlist, "tracks") }
            #expect(read?.code == .corrupt && read?.message.contains(url.path) == true, "\(String(describing: read))")
            try playlist.setValue("renamed", forKey: "name")
            try playlist.add(try LMDBOrderedFixture.track(9, context), to: "tracks")
            let saved = #expect(throws: StoreError.self) { try context.save() }
            #expect(saved?.code == .corrupt && saved?.message.contains(url.path) == true, "\(String(describing: saved))")
        }
    }

    @Test("member counts, `playlist == X` fetches and counts, and counts grouped by the to-one (natively: the smallest member key found among the duplicates) agree with the in-memory store")
    func countsAndFetchesThroughTheInverse() throws {
        let model = try LMDBOrderedFixture.model()
        let lmdb = try PersistentContainer(model: model, stores: [.lmdb(at: try LMDBFixture.temporaryFile())])
        let memory = try PersistentContainer(model: model, stores: [.inMemory()])
        defer { lmdb.close(); memory.close() }
        // Every track in one playlist. Each list is put together at the front, so its first
        // duplicate is its largest key, and ordering the groups by those (p1 19, p2 34, p0 39)
        // differs from ordering them by their smallest (p0 0, p1 5, p2 20).
        let blocks: [[Int]] = [Array(0..<5) + Array(35..<40), Array(5..<20), Array(20..<35), []]
        for container in [lmdb, memory] {
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let tracks = try (0..<40).map { try LMDBOrderedFixture.track($0, context) }
                for (index, block) in blocks.enumerated() {
                    let playlist = try context.insertObject(entityName: "Playlist")
                    try playlist.setValue("p\(index)", forKey: "name")
                    for n in block { try playlist.insert(tracks[n], at: 0, in: "tracks") }
                }
                try context.save()
            }
        }
        func answers(_ container: PersistentContainer) throws -> [String] {
            let context = container.newBackgroundContext()
            return try context.performAndWait {
                var lines: [String] = []
                let playlists = try context.fetch(FetchRequest<ManagedObject>(entityName: "Playlist", sortKeys: [SortKey("name")]))
                for playlist in playlists {
                    let request = FetchRequest<ManagedObject>(entityName: "Track", predicate: .keyPath("playlist") == playlist.objectID, sortKeys: [SortKey("n")])
                    let members = try context.fetch(request).map { try $0.value(forKey: "n") as? Int64 ?? -1 }
                    let name = try playlist.value(forKey: "name") as? String ?? "?"
                    lines.append("\(name): \(members), count \(try context.count(for: request)), list \(try LMDBOrderedFixture.numbers(playlist, "tracks"))")
                }
                var grouped = FetchRequest<ManagedObject>(entityName: "Track")
                grouped.propertiesToFetch = [.key("playlist.name", as: "name"), .count(as: "count")]
                grouped.propertiesToGroupBy = ["playlist.name"]
                lines.append("\(try context.fetchDictionaries(grouped).map { "\($0["name"] ?? .null) \($0["count"] ?? .null)" })")
                return lines
            }
        }
        let expected = try answers(memory)
        #expect(try answers(lmdb) == expected)
        #expect(expected.first == "p0: [0, 1, 2, 3, 4, 35, 36, 37, 38, 39], count 10, list [39, 38, 37, 36, 35, 4, 3, 2, 1, 0]")

        let store = try #require(lmdb.coordinator.persistentStores.first as? LMDBStore)
        let track = try model.requireEntity("Track")
        let native = try store.fetch(StoreFetchRequest(entity: track, resultType: .groups(StoreGrouping(keys: ["playlist.name"], aggregates: [.count]))))
        #expect(native.applied.contains(.predicate), "the store answered natively")
        #expect(native.groups?.map(\.array) == [[.string("p0"), .integer(10)], [.string("p1"), .integer(15)], [.string("p2"), .integer(15)]])

        let tracks = try #require(model.entity(named: "Playlist")?.relationship(named: "tracks"))
        let context = lmdb.newBackgroundContext()
        let counts = try context.performAndWait {
            try context.fetch(FetchRequest<ManagedObject>(entityName: "Playlist", sortKeys: [SortKey("name")])).map { try store.memberCount(of: tracks, for: $0.objectID) }
        }
        #expect(counts == [10, 15, 15, 0])
    }

    @Test("an ordered duplicate at the largest position (damage) does not trap the save appending after it: the list is renumbered")
    func extremePosition() throws {
        let url = try Self.playlistStore(2)
        try LMDBFixture.withRawEnvironment(url) { _, txn in
            var dbi: MDB_dbi = 0
            try #require(mdb_dbi_open(txn, LMDBOrderedFixture.tracksDatabase, UInt32(MDB_DUPSORT), &dbi) == MDB_SUCCESS)
            var cursor: OpaquePointer?
            try #require(mdb_cursor_open(txn, dbi, &cursor) == MDB_SUCCESS)
            defer { mdb_cursor_close(cursor) }
            var key = MDB_val(), value = MDB_val()
            try #require(mdb_cursor_get(cursor, &key, &value, MDB_LAST) == MDB_SUCCESS)
            let owner = Array(UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size))
            var entry = Array(UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size))
            try #require(mdb_cursor_del(cursor, 0) == MDB_SUCCESS)
            for i in 0..<8 { entry[i] = 0xFF }  // position Int64.max (sign bit flipped, big-endian)
            try #require(LMDBFixture.rawPut(txn, dbi, owner, entry) == MDB_SUCCESS)
        }
        #expect(try Self.order(url) == [0, 1])
        _ = try Self.change(url) { context, playlist in try playlist.add(try LMDBOrderedFixture.track(9, context), to: "tracks") }
        #expect(try Self.order(url) == [0, 1, 9])
        let positions = try LMDBOrderedFixture.entries(url, LMDBOrderedFixture.tracksDatabase).map { LMDBOrderedFixture.integer($0, at: 0) }
        #expect(positions == [0, 1024, 2048])
    }
}

