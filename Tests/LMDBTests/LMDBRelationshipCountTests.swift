import Foundation
import ObjectGraph
import ObjectGraphInMemory
import ObjectGraphLMDB
import Testing

/// `count(for: toOne == X)` is answered from the members database of the to-one's inverse
/// without reading a row, and looks the owner up only when its members cannot prove it exists.
/// Each count must still equal the in-memory store's, which evaluates every row — including
/// owners with no members, owners of a sub-entity, and deleted owners that no-action to-ones
/// still name (whose members are gone with them).
@Suite("LMDB relationship counts")
struct LMDBRelationshipCountTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            // Alone in its table: members prove their owner.
            m.entity("Box") { e in
                e.attribute("name", .string)
                e.toMany("items", "Item", inverse: "box", deleteRule: .noAction)
            }
            m.entity("Item") { e in
                e.attribute("n", .integer64)
                e.toOne("box", "Box", inverse: "items")
                e.toOne("crate", "Crate", inverse: "parts")
            }
            // A table of two entities: the owner is always looked up.
            m.entity("Crate") { e in
                e.attribute("name", .string)
                e.toMany("parts", "Item", inverse: "crate", deleteRule: .noAction)
            }
            m.entity("SpecialCrate", parent: "Crate") { e in e.attribute("extra", .integer16, optional: true) }
        }
    }

    /// Boxes and crates with 0, 1, 3, … items; then one box and one crate with items are
    /// deleted (their items still name them) and saved. Returns every owner's ID, by name.
    static func fill(_ context: ManagedObjectContext) throws -> [String: ObjectID] {
        var owners: [String: ManagedObject] = [:]
        for index in 0..<4 {
            let box = try context.insertObject(entityName: "Box")
            try box.setValue("box\(index)", forKey: "name")
            owners["box\(index)"] = box
            let crate = try context.insertObject(entityName: index % 2 == 0 ? "Crate" : "SpecialCrate")
            try crate.setValue("crate\(index)", forKey: "name")
            owners["crate\(index)"] = crate
            for n in 0..<(index * 2 + (index == 0 ? 0 : 1)) {
                let item = try context.insertObject(entityName: "Item")
                try item.setValue(Int64(n), forKey: "n")
                try item.setValue(box, forKey: "box")
                try item.setValue(n % 2 == 0 ? crate : nil, forKey: "crate")
            }
        }
        try context.save()
        let ids = owners.mapValues(\.objectID)
        context.delete(owners["box2"]!)
        context.delete(owners["crate3"]!)
        try context.save()
        return ids
    }

    @Test("counts of toOne == X equal the in-memory store's, for present, empty, sub-entity and deleted owners")
    func countsMatchScan() throws {
        let url = try LMDBFixture.temporaryFile()
        let lmdb = try PersistentContainer(model: try Self.model(), stores: [.lmdb(at: url)])
        let memory = try PersistentContainer(model: try Self.model(), stores: [.inMemory()])
        defer {
            lmdb.close()
            memory.close()
        }
        let contexts = [lmdb.newBackgroundContext(), memory.newBackgroundContext()]
        let ids = try contexts.map { context in try context.performAndWait { try Self.fill(context) } }
        var compared = 0
        for name in ids[0].keys.sorted() {
            let key = name.hasPrefix("box") ? "box" : "crate"
            let counts = try zip(contexts, ids).map { context, ids in
                try context.performAndWait {
                    try context.count(for: FetchRequest<ManagedObject>(entityName: "Item", predicate: .keyPath(key) == ids[name]!))
                }
            }
            #expect(counts[0] == counts[1], "items with \(key) == \(name): LMDB \(counts[0]), in-memory \(counts[1])")
            compared += 1
        }
        // The deleted owners' items still name them: the members database, emptied with the
        // owner, must not be taken for the answer.
        let deletedBox = try contexts[0].performAndWait {
            try contexts[0].count(for: FetchRequest<ManagedObject>(entityName: "Item", predicate: .keyPath("box") == ids[0]["box2"]!))
        }
        #expect(deletedBox == 5)
        #expect(compared == 8)
    }

    @Test("the store counts toOne == X itself from the members, and declines an owner that is gone")
    func storeCountsRowsItself() throws {
        let url = try LMDBFixture.temporaryFile()
        let model = try Self.model()
        let container = try PersistentContainer(model: model, stores: [.lmdb(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        let ids = try context.performAndWait { try Self.fill(context) }
        let store = container.coordinator.persistentStores[0]
        let item = try model.requireEntity("Item")
        let box = try #require(item.relationship(named: "box"))
        func count(_ owner: String) throws -> Int? {
            try store.countRows(of: item, includesSubentities: true, where: box, is: ids[owner]!)
        }
        #expect(try count("box3") == 7)
        #expect(try count("box1") == 3)
        #expect(try count("box0") == 0, "an owner without members, looked up")
        // Deleted: its members went with it while its items still name it, so only a fetch
        // can count them (the context then asks one, see countsMatchScan).
        #expect(try count("box2") == nil)
    }

    @Test("an ordered to-many's members are counted as its duplicates: memberCount and @count, as members come and go")
    func orderedMemberCounts() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Album") { e in
                e.attribute("name", .string)
                e.toMany("tracks", "Track", inverse: "album", ordered: true)
            }
            m.entity("Track") { e in
                e.attribute("n", .integer64)
                e.toOne("album", "Album", inverse: "tracks")
            }
        }
        let container = try PersistentContainer(model: model, stores: [.lmdb(at: try LMDBFixture.temporaryFile())])
        defer { container.close() }
        let store = try #require(container.coordinator.persistentStores.first as? LMDBStore)
        let tracks = try #require(model.entity(named: "Album")?.relationship(named: "tracks"))
        let sizes = ["none": 0, "one": 1, "two": 2, "many": 23]
        let context = container.newBackgroundContext()
        let albums = try context.performAndWait {
            var albums: [String: ManagedObject] = [:]
            for (name, size) in sizes {
                let album = try context.insertObject(entityName: "Album")
                try album.setValue(name, forKey: "name")
                for n in 0..<size {
                    let track = try context.insertObject(entityName: "Track")
                    try track.setValue(Int64(n), forKey: "n")
                    // Some at the front, so the list is not in insertion order.
                    if n % 3 == 0 { try album.insert(track, at: 0, in: "tracks") } else { try album.add(track, to: "tracks") }
                }
                albums[name] = album
            }
            try context.save()
            return albums.mapValues(\.objectID)
        }
        // The albums whose @count satisfies `format`, by name, read by a context with no
        // changes so the store evaluates it; a count of the same request must agree.
        func named(_ format: String) throws -> [String] {
            let reader = container.newBackgroundContext()
            return try reader.performAndWait {
                let request = FetchRequest<ManagedObject>(entityName: "Album", predicate: try FetchPredicate(format: format), sortKeys: [SortKey("name")])
                let names = try reader.fetch(request).map { try $0.value(forKey: "name") as? String ?? "?" }
                #expect(try reader.count(for: request) == names.count, "count of \(format)")
                return names
            }
        }
        for (name, size) in sizes { #expect(try store.memberCount(of: tracks, for: albums[name]!) == size, "\(name)") }
        #expect(try named("tracks.@count == 2") == ["two"])
        #expect(try named("tracks.@count == 0") == ["none"])
        #expect(try named("tracks.@count >= 1") == ["many", "one", "two"])
        #expect(try named("tracks.@count == 23") == ["many"])
        // One member off the two-track album and two off the many: the lists shrink.
        try context.performAndWait {
            let two = try context.existingObject(with: albums["two"]!)
            let many = try context.existingObject(with: albums["many"]!)
            for (album, count) in [(two, 1), (many, 2)] {
                let members = try context.fetch(FetchRequest<ManagedObject>(entityName: "Track", predicate: .keyPath("album") == album.objectID))
                for track in members.prefix(count) { try album.remove(track, from: "tracks") }
            }
            try context.save()
        }
        #expect(try store.memberCount(of: tracks, for: albums["two"]!) == 1)
        #expect(try store.memberCount(of: tracks, for: albums["many"]!) == 21)
        #expect(try store.memberCount(of: tracks, for: albums["one"]!) == 1)
        #expect(try named("tracks.@count == 2") == [])
        #expect(try named("tracks.@count == 1") == ["one", "two"])
        #expect(try named("tracks.@count == 21") == ["many"])
    }
}
