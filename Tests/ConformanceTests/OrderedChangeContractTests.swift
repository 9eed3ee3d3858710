import Foundation
import ObjectGraph
import ObjectGraphConformance
import OrderedCollections
import Testing

/// `ToManyChange.order` that leaves out members another save added: every store keeps them,
/// after the named ones in their stored order (`ToManyChange.ordered`). The stores disagreed
/// (an audit): SQLite kept such a member at its old position, the memory, binary and LMDB
/// stores dropped it from a join list and put it last in a foreign-key list. The context no
/// longer sends such an order on the path that was found (an ordered list's owner is read
/// before its members), so the change set is made here and given to the store directly.
@Suite("An ordered change keeps the members it does not name")
struct OrderedChangeContractTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Mix") { e in
                e.attribute("name", .string)
                e.toMany("songs", "Song", inverse: "mixes", ordered: true)
                e.toMany("tracks", "Song", inverse: "playlist", ordered: true)
            }
            m.entity("Song") { e in
                e.attribute("title", .string)
                e.toMany("mixes", "Mix", inverse: "songs")
                e.toOne("playlist", "Mix", inverse: "tracks")
            }
        }
    }

    @Test(arguments: allBackends.map(\.name))
    func orderWithoutAConcurrentlyAddedMember(_ backend: String) throws {
        let backend = try #require(allBackends.first { $0.name == backend })
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("objectgraph-order-contract-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let model = try Self.model()
        let container = try PersistentContainer(model: model, stores: [backend.makeStore(directory)])
        defer { container.close() }
        // A mix holding a, b, c in both lists, then d put second in both by another save.
        let seed = container.newBackgroundContext()
        let (mixID, songs) = try seed.performAndWait {
            let mix = try seed.insertObject(entityName: "Mix")
            try mix.setValue("m", forKey: "name")
            var songs: [ManagedObject] = []
            for title in ["a", "b", "c"] {
                let song = try seed.insertObject(entityName: "Song")
                try song.setValue(title, forKey: "title")
                try mix.add(song, to: "songs")
                try mix.add(song, to: "tracks")
                songs.append(song)
            }
            try seed.save()
            let d = try seed.insertObject(entityName: "Song")
            try d.setValue("d", forKey: "title")
            try mix.insert(d, at: 1, in: "songs")
            try mix.insert(d, at: 1, in: "tracks")
            try seed.save()
            return (mix.objectID, songs.map(\.objectID))
        }
        let store = try #require(container.coordinator.persistentStores.first)
        let mixEntity = try #require(model.entity(named: "Mix"))
        var changes = StoreChangeSet()
        for name in ["songs", "tracks"] {
            let relationship = try #require(mixEntity.relationship(named: name))
            // c, a, b: as a context that read the lists before d joined would send them.
            changes.toMany.append(ToManyChange(source: mixID, relationship: relationship, added: [], removed: [], order: [songs[2], songs[0], songs[1]]))
        }
        try store.save(changes)
        let check = container.newBackgroundContext()
        try check.performAndWait {
            let mix = try check.existingObject(with: mixID)
            for name in ["songs", "tracks"] {
                let members = try #require(try mix.value(forKey: name) as? OrderedSet<ManagedObject>)
                #expect(try members.map { try $0.value(forKey: "title") as? String } == ["c", "a", "b", "d"], "\(backend.name): \(name)")
            }
        }
    }
}
