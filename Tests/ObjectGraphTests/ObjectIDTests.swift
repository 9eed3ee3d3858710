import Foundation
@testable import ObjectGraph
import ObjectGraphInMemory
import Testing

@Suite("Object IDs")
struct ObjectIDTests {
    static func build(_ m: ModelBuilder) {
        m.entity("Note") { e in e.attribute("text", .string, optional: true) }
        m.entity("Tag") { e in e.attribute("label", .string, optional: true) }
    }

    @Test func permanentURIRoundTrips() throws {
        let id = ObjectID(entityName: "Note", storeIdentifier: "3F2A-STORE", primaryKey: 42)
        let uri = id.uriRepresentation
        #expect(uri.absoluteString == "x-objectgraph://3F2A-STORE/Note/p42")
        #expect(ObjectID(uri: uri) == id)
        #expect(!id.isTemporary)
        #expect(id.primaryKey == 42)
        #expect(id.storeIdentifier == "3F2A-STORE")
        #expect(id.description == "Note/p42")
        let reparsed = try #require(URL(string: uri.absoluteString))
        let parsed = try #require(ObjectID(uri: reparsed))
        #expect(parsed == id)
        #expect(parsed.hashValue == id.hashValue)
    }

    @Test func entityNamesThatNeedEscapingRoundTrip() throws {
        for name in ["Café", "Ünïcødé", "Under_score1"] {
            let id = ObjectID(entityName: name, storeIdentifier: "S", primaryKey: 7)
            #expect(ObjectID(uri: id.uriRepresentation) == id, "\(name)")
        }
        let negative = ObjectID(entityName: "Note", storeIdentifier: "S", primaryKey: -3)
        #expect(ObjectID(uri: negative.uriRepresentation) == negative)
    }

    @Test func idsDifferByStoreEntityAndKey() {
        let id = ObjectID(entityName: "Note", storeIdentifier: "A", primaryKey: 1)
        #expect(id == ObjectID(entityName: "Note", storeIdentifier: "A", primaryKey: 1))
        #expect(id != ObjectID(entityName: "Note", storeIdentifier: "B", primaryKey: 1))
        #expect(id != ObjectID(entityName: "Tag", storeIdentifier: "A", primaryKey: 1))
        #expect(id != ObjectID(entityName: "Note", storeIdentifier: "A", primaryKey: 2))
    }

    @Test("a namespace mints the same IDs as the public initializer, and names what it holds")
    func namespacesMintEqualIDs() throws {
        let namespace = ObjectID.Namespace(entityName: "Note", storeIdentifier: "NS-STORE")
        #expect(namespace.entityName == "Note")
        #expect(namespace.storeIdentifier == "NS-STORE")
        for key: Int64 in [-5, 0, 1, 1 << 40] {
            let minted = namespace.objectID(primaryKey: key)
            let direct = ObjectID(entityName: "Note", storeIdentifier: "NS-STORE", primaryKey: key)
            #expect(minted == direct)
            #expect(minted.hashValue == direct.hashValue)
            #expect(minted.namespace == namespace)
            #expect(minted.entityName == "Note" && minted.storeIdentifier == "NS-STORE" && minted.primaryKey == key)
        }
        #expect(namespace != ObjectID.Namespace(entityName: "Note", storeIdentifier: "OTHER"))
        #expect(namespace != ObjectID.Namespace(entityName: "Tag", storeIdentifier: "NS-STORE"))
        // Namespaces key stores' per-entity plans: every pair of entity and store its own key.
        var plans: [ObjectID.Namespace: String] = [:]
        for entity in ["Note", "Tag", "Chat"] {
            for store in ["NS-STORE", "OTHER", "THIRD"] { plans[ObjectID.Namespace(entityName: entity, storeIdentifier: store)] = "\(entity)@\(store)" }
        }
        #expect(plans.count == 9)
        #expect(plans[namespace] == "Note@NS-STORE")
        #expect(plans[ObjectID.Namespace(entityName: "Tag", storeIdentifier: "OTHER")] == "Tag@OTHER")
        #expect(namespace._rawHashValue(seed: 3) == ObjectID.Namespace(entityName: "Note", storeIdentifier: "NS-STORE")._rawHashValue(seed: 3))
        let tag = ObjectID(entityName: "Tag", storeIdentifier: "NS-STORE", primaryKey: 1)
        #expect(!tag.hasSameEntity(as: namespace.objectID(primaryKey: 1)))
        #expect(tag.hasSameEntity(as: ObjectID(entityName: "Tag", storeIdentifier: "OTHER", primaryKey: 9)))
    }

    @Test("an ID is 16 bytes of plain integers, whatever the names' lengths")
    func idsAreCompact() {
        #expect(MemoryLayout<ObjectID>.size == 16)
        let long = String(repeating: "VeryLongEntityName", count: 20)
        let id = ObjectID(entityName: long, storeIdentifier: String(repeating: "S", count: 500), primaryKey: 3)
        #expect(id.entityName == long)
        #expect(id.storeIdentifier?.count == 500)
        #expect(MemoryLayout.size(ofValue: id) == 16)
    }

    @Test("the model finds an ID's entity, and no entity for names it does not have")
    func modelFindsTheEntityOfAnID() throws {
        let model = try ManagedObjectModel(Self.build)
        let note = ObjectID(entityName: "Note", storeIdentifier: "S", primaryKey: 1)
        #expect(model.entity(for: note)?.name == "Note")
        #expect(model.entity(for: ObjectID(entityName: "NoSuchEntity\(UUID().uuidString)", storeIdentifier: "S", primaryKey: 1)) == nil)
    }

    @Test func savedObjectsResolveThroughTheCoordinator() throws {
        let (container, context) = try makeContext(Self.build)
        try context.performAndWait {
            let note = try context.insertObject(entityName: "Note")
            try note.setValue("hello", forKey: "text")
            try context.save()
            let id = note.objectID
            #expect(!id.isTemporary)
            let store = try #require(container.coordinator.persistentStores.first)
            #expect(id.storeIdentifier == store.identifier)
            let uri = id.uriRepresentation
            #expect(uri.scheme == "x-objectgraph")
            #expect(uri.absoluteString.hasSuffix("/Note/p\(id.primaryKey!)"))
            let resolved = try #require(container.coordinator.objectID(forURI: uri))
            #expect(resolved == id)
            let reader = container.newBackgroundContext()
            try reader.performAndWait {
                let text = try string(reader.existingObject(with: resolved), "text")
                #expect(text == "hello")
            }
        }
    }

    @Test func temporaryIDs() throws {
        let (container, context) = try makeContext(Self.build)
        try context.performAndWait {
            let note = try context.insertObject(entityName: "Note")
            let id = note.objectID
            #expect(id.isTemporary)
            #expect(id.primaryKey == nil)
            #expect(id.storeIdentifier == nil)
            let uri = id.uriRepresentation
            #expect(uri.host == "temporary")
            #expect(uri.absoluteString.hasPrefix("x-objectgraph://temporary/Note/t"))
            #expect(id.description.hasPrefix("Note/t"))
            #expect(ObjectID(uri: uri) == id, "a temporary URI parses back in its own process")
            #expect(container.coordinator.objectID(forURI: uri) == nil, "the coordinator resolves permanent IDs only")
            try context.save()
            #expect(!note.objectID.isTemporary)
            #expect(note.objectID != id)
        }
    }

    @Test func garbageURIsAreRejected() throws {
        let garbage = [
            "https://example.com/Note/p1",
            "x-objectgraph://S/Note",
            "x-objectgraph://S/Note/p1/extra",
            "x-objectgraph://S/Note/q1",
            "x-objectgraph://S/Note/pabc",
            "x-objectgraph://S/Note/p",
            "x-objectgraph://S/Note/p99999999999999999999",
            "x-objectgraph:///Note/p1",
            "x-objectgraph://temporary/Note/p1",
            "x-objectgraph://temporary/Note/t-1",
            "x-objectgraph://S/Note/t1",
            "x-objectgraph:Note/p1",
        ]
        for text in garbage {
            let url = try #require(URL(string: text), "\(text) is a URL")
            #expect(ObjectID(uri: url) == nil, "\(text) must not parse")
        }
    }

    @Test func coordinatorRefusesUnknownStoresAndEntities() throws {
        let (container, context) = try makeContext(Self.build)
        let id: ObjectID = try context.performAndWait {
            let note = try context.insertObject(entityName: "Note")
            try context.save()
            return note.objectID
        }
        let coordinator = container.coordinator
        let store = try #require(id.storeIdentifier)
        #expect(coordinator.objectID(forURI: id.uriRepresentation) == id)
        let otherStore = ObjectID(entityName: "Note", storeIdentifier: "NO-SUCH-STORE", primaryKey: 1)
        #expect(coordinator.objectID(forURI: otherStore.uriRepresentation) == nil)
        let otherEntity = ObjectID(entityName: "Ghost", storeIdentifier: store, primaryKey: 1)
        #expect(coordinator.objectID(forURI: otherEntity.uriRepresentation) == nil)
        #expect(coordinator.objectID(forURI: try #require(URL(string: "https://example.com"))) == nil)
        // Once the store is detached, its IDs no longer resolve.
        container.close()
        #expect(coordinator.objectID(forURI: id.uriRepresentation) == nil)
    }

    @Test func temporaryIDsOrderByCreation() throws {
        let (_, context) = try makeContext(Self.build)
        try context.performAndWait {
            let objects = try (0..<20).map { index in try context.insertObject(entityName: index.isMultiple(of: 2) ? "Note" : "Tag") }
            let ids = objects.map(\.objectID)
            for (earlier, later) in zip(ids, ids.dropFirst()) {
                #expect(ObjectID.storageOrder(earlier, later))
                #expect(!ObjectID.storageOrder(later, earlier))
            }
            #expect(ids.shuffled().sorted(by: ObjectID.storageOrder) == ids)
            #expect(!ObjectID.storageOrder(ids[0], ids[0]))
        }
    }

    @Test func permanentIDsOrderByKeyAndComeBeforeTemporaryOnes() throws {
        let one = ObjectID(entityName: "Tag", storeIdentifier: "S", primaryKey: 1)
        let two = ObjectID(entityName: "Note", storeIdentifier: "S", primaryKey: 2)
        let twoTag = ObjectID(entityName: "Tag", storeIdentifier: "S", primaryKey: 2)
        #expect(ObjectID.storageOrder(one, two))
        #expect(!ObjectID.storageOrder(two, one))
        #expect(ObjectID.storageOrder(two, twoTag), "equal keys order by entity name")
        let (_, context) = try makeContext(Self.build)
        try context.performAndWait {
            let temporary = try context.insertObject(entityName: "Note").objectID
            let huge = ObjectID(entityName: "Note", storeIdentifier: "S", primaryKey: .max)
            #expect(ObjectID.storageOrder(huge, temporary))
            #expect(!ObjectID.storageOrder(temporary, one))
        }
    }

    @Test("dictionaries of IDs: equal keys of other entities and stores stay apart, every key is found")
    func dictionariesKeepIDsApart() {
        var values: [ObjectID: Int] = [:]
        let namespaces = [("Note", "S"), ("Tag", "S"), ("Note", "T")]
        for (offset, (entity, store)) in namespaces.enumerated() {
            for key in Int64(1)...3_000 {
                values[ObjectID(entityName: entity, storeIdentifier: store, primaryKey: key)] = offset * 10_000 + Int(key)
            }
        }
        #expect(values.count == 9_000)
        for (offset, (entity, store)) in namespaces.enumerated() {
            for key in Int64(1)...3_000 {
                #expect(values[ObjectID(entityName: entity, storeIdentifier: store, primaryKey: key)] == offset * 10_000 + Int(key))
            }
        }
        #expect(values[ObjectID(entityName: "Tag", storeIdentifier: "T", primaryKey: 1)] == nil)
        let set = Set(values.keys)
        #expect(set.count == 9_000)
    }

    @Test("the table hash spreads keys that share their low bits over the buckets, and depends on the seed")
    func rawHashSpreadsKeys() {
        // Keys 2^20 apart: a hash that kept the key's low bits would put them all in one bucket.
        let ids = (Int64(1)...1_024).map { ObjectID(entityName: "Note", storeIdentifier: "S", primaryKey: $0 << 20) }
        for seed in [0, 1, 0x5EED] {
            let buckets = Set(ids.map { $0._rawHashValue(seed: seed) & 1_023 })
            // A random function fills about 63% of 1,024 buckets with 1,024 keys.
            #expect(buckets.count > 550, "seed \(seed): \(buckets.count) buckets used")
        }
        #expect(ids[0]._rawHashValue(seed: 1) != ids[0]._rawHashValue(seed: 2))
        let same = ObjectID(entityName: "Note", storeIdentifier: "S", primaryKey: 1 << 20)
        #expect(ids[0]._rawHashValue(seed: 7) == same._rawHashValue(seed: 7))
    }

    @Test("each run of eight keys shares one aligned block of eight buckets, the blocks spread")
    func rawHashKeepsRunsTogether() {
        for seed in [0, 1, 0x5EED] {
            var blocks = Set<Int>()
            for run in Int64(0)..<512 {
                let hashes = (0..<Int64(8)).map { ObjectID(entityName: "Note", storeIdentifier: "S", primaryKey: run * 8 + $0)._rawHashValue(seed: seed) }
                // One block, each bucket of it once: a run is a permutation of its block.
                #expect(Set(hashes.map { $0 & ~7 }).count == 1, "seed \(seed), run \(run)")
                #expect(Set(hashes.map { $0 & 7 }).count == 8, "seed \(seed), run \(run)")
                blocks.insert(hashes[0] & 1_023 & ~7)
            }
            // 512 runs over 128 blocks of a 1,024-bucket table: a random placement leaves
            // about 2% of the blocks empty.
            #expect(blocks.count > 110, "seed \(seed): \(blocks.count) of 128 blocks used")
        }
    }
}


@Suite("Temporary ID maps")
struct TemporaryIDMapTests {
    static func temporaries(_ count: Int, entity: String = "Note") throws -> [ObjectID] {
        let model = try ManagedObjectModel { m in m.entity(entity) { e in e.attribute("n", .integer64, optional: true) } }
        let entity = try model.requireEntity(entity)
        return (0..<count).map { _ in ManagedObject(entity: entity, insertInto: nil).objectID }
    }

    @Test("dense and sparse maps answer the remapped IDs and nothing else")
    func mapsAnswerOnlyTheirIDs() throws {
        let all = try Self.temporaries(400)
        let outsider = try Self.temporaries(1)[0]
        let permanent = ObjectID(entityName: "Note", storeIdentifier: "S", primaryKey: all[0].value)
        for picked in [Array(all[100..<300]), stride(from: 0, to: 400, by: 37).map { all[$0] } + [outsider]] {
            let targets = picked.indices.map { ObjectID(entityName: "Note", storeIdentifier: "S", primaryKey: Int64($0 + 1)) }
            let map = TemporaryIDMap(picked, to: targets)
            for (old, new) in zip(picked, targets) { #expect(map[old] == new) }
            let mapped = Set(picked)
            for id in all where !mapped.contains(id) { #expect(map[id] == nil, "\(id) was not remapped") }
            #expect(map[permanent] == nil, "a permanent ID with the same number is not a temporary one")
        }
        #expect(TemporaryIDMap([], to: [])[all[0]] == nil)
    }
}
