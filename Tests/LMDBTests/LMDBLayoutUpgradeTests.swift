import CLMDB
import Foundation
import ObjectGraph
import ObjectGraphLMDB
import Testing

/// A store of the layout `objectgraph-lmdb-1` (each ordered list one value) is upgraded by the
/// open that finds it, in the same write transaction, to positioned duplicates; a store of
/// another model is left as it is, and one the process may not write says it must be opened
/// writable once.
@Suite("LMDB layout upgrade")
struct LMDBLayoutUpgradeTests {
    /// A closed store in the old layout: one playlist whose tracks (numbered 0–5, inserted in
    /// that order, so their keys grow with their numbers) are listed out of key order, and
    /// whose queue lists three of them. Returns the file and the expected orders.
    static func listLayoutStore() throws -> (url: URL, tracks: [Int64], queue: [Int64]) {
        let url = try LMDBFixture.temporaryFile()
        let tracks: [Int64] = [3, 0, 5, 1, 4, 2], queue: [Int64] = [4, 2, 0]
        try LMDBOrderedFixture.withContext(url) { context in
            let playlist = try context.insertObject(entityName: "Playlist")
            try playlist.setValue("mix", forKey: "name")
            let made = try (0..<6).map { try LMDBOrderedFixture.track($0, context) }
            for n in tracks { try playlist.add(made[Int(n)], to: "tracks") }
            for n in queue { try playlist.add(made[Int(n)], to: "queue") }
        }
        try LMDBOrderedFixture.writeListLayout(url, [LMDBOrderedFixture.tracksDatabase, LMDBOrderedFixture.queueDatabase])
        return (url, tracks, queue)
    }

    @Test("a format-1 store is upgraded at open: duplicate-sorted members at index × 1024, format 2, the lists in their order; a second open changes nothing")
    func upgradesOnce() throws {
        let (url, tracks, queue) = try Self.listLayoutStore()
        let old = try LMDBOrderedFixture.duplicates(url, LMDBOrderedFixture.tracksDatabase)
        #expect(old.flags & UInt32(MDB_DUPSORT) == 0 && old.entries.values.first?.count == 1, "the fixture is the old layout: one list value")
        #expect(old.entries.values.first?.first?.count == 60, "6 members × 10 bytes")
        #expect(try LMDBOrderedFixture.format(url) == "objectgraph-lmdb-1")

        let seen = try LMDBOrderedFixture.withContext(url) { context in
            let playlist = try LMDBOrderedFixture.playlist(context)
            return (try LMDBOrderedFixture.numbers(playlist, "tracks"), try LMDBOrderedFixture.numbers(playlist, "queue"))
        }
        #expect(seen.0 == tracks && seen.1 == queue)
        #expect(try LMDBOrderedFixture.format(url) == "objectgraph-lmdb-2")
        for name in [LMDBOrderedFixture.tracksDatabase, LMDBOrderedFixture.queueDatabase] {
            let upgraded = try LMDBOrderedFixture.duplicates(url, name)
            #expect(upgraded.flags & UInt32(MDB_DUPSORT) != 0, "\(name) is duplicate-sorted")
            let entries = try #require(upgraded.entries.values.first)
            #expect(entries.allSatisfy { $0.count == 18 })
            #expect(entries.map { LMDBOrderedFixture.integer($0, at: 0) } == entries.indices.map { Int64($0) * 1024 })
        }
        // The tracks' keys follow their numbers, so the list order is the keys' order.
        let upgraded = try LMDBOrderedFixture.entries(url, LMDBOrderedFixture.tracksDatabase)
        let keys = upgraded.map { LMDBOrderedFixture.integer($0, at: 8) }
        #expect(keys.map { $0 - keys.min()! } == tracks)

        // Opened again (a second upgrade would find a duplicate-sorted database where it
        // expects a plain one, and fail): nothing is rewritten.
        let again = try LMDBOrderedFixture.withContext(url) { context in try LMDBOrderedFixture.numbers(try LMDBOrderedFixture.playlist(context), "tracks") }
        #expect(again == tracks)
        #expect(try LMDBOrderedFixture.entries(url, LMDBOrderedFixture.tracksDatabase) == upgraded)
        #expect(try LMDBOrderedFixture.format(url) == "objectgraph-lmdb-2")
    }

    @Test("a format-1 store of another model is refused as incompatible and left in its layout; an unknown format is corrupt")
    func otherModelIsNotUpgraded() throws {
        let (url, _, _) = try Self.listLayoutStore()
        let other = try ManagedObjectModel { m in m.entity("Other") { e in e.attribute("name", .string) } }
        let error = #expect(throws: StoreError.self) { _ = try PersistentContainer(model: other, stores: [.lmdb(at: url)]) }
        #expect(error?.code == .incompatibleModel)
        #expect(try LMDBOrderedFixture.format(url) == "objectgraph-lmdb-1")
        #expect(try LMDBOrderedFixture.duplicates(url, LMDBOrderedFixture.tracksDatabase).flags & UInt32(MDB_DUPSORT) == 0)

        try LMDBDamagedStoreTests.put(url, "og:meta", Array("format".utf8), Array("objectgraph-lmdb-3".utf8))
        let unknown = #expect(throws: StoreError.self) { _ = try PersistentContainer(model: try LMDBOrderedFixture.model(), stores: [.lmdb(at: url)]) }
        #expect(unknown?.code == .corrupt)
        #expect(unknown?.message.contains(url.path) == true && unknown?.message.contains("objectgraph-lmdb-3") == true)
    }

    @Test("a damaged format-1 list is refused as corrupt, naming the file and the row, and the store is left wholly in format 1")
    func damagedListIsNotUpgraded() throws {
        let (url, _, _) = try Self.listLayoutStore()
        let owner = try #require(try LMDBOrderedFixture.duplicates(url, LMDBOrderedFixture.tracksDatabase).entries.keys.first)
        try LMDBDamagedStoreTests.put(url, LMDBOrderedFixture.queueDatabase, owner, Array(repeating: 0x80, count: 15))
        let error = #expect(throws: StoreError.self) { _ = try PersistentContainer(model: try LMDBOrderedFixture.model(), stores: [.lmdb(at: url)]) }
        #expect(error?.code == .corrupt && error?.message.contains(url.path) == true && error?.message.contains("15 bytes") == true, "\(String(describing: error))")
        // Nothing of the upgrade landed: the tracks' database is as plain as before.
        #expect(try LMDBOrderedFixture.format(url) == "objectgraph-lmdb-1")
        #expect(try LMDBOrderedFixture.duplicates(url, LMDBOrderedFixture.tracksDatabase).flags & UInt32(MDB_DUPSORT) == 0)
    }

    /// Makes a format-1 store, takes away write access (giving up root, which passes every
    /// permission check) and opens it; exits 0 when that is the typed error asking for one
    /// writable open.
    static func openUnwritable() -> Never {
        guard let (url, _, _) = try? listLayoutStore(), let model = try? LMDBOrderedFixture.model() else { exit(4) }
        chmod(url.path, 0o444)
        chmod(url.path + "-lock", 0o444)
        if getuid() == 0 { guard setgid(65534) == 0, setuid(65534) == 0 else { exit(3) } }
        LMDBFixture.exitOpening(url, model: model) { $0.message.contains("opened writable once to upgrade its layout") && $0.message.contains(url.path) }
    }

    @Test("a format-1 store the process may not write is a typed error saying it must be opened writable once")
    func unwritableOldLayout() async {
        await #expect(processExitsWith: .success) { Self.openUnwritable() }
    }
}
