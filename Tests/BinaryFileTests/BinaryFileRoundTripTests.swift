import Foundation
import ObjectGraph
import OrderedCollections
@testable import ObjectGraphBinaryFile
@testable import ObjectGraphBinaryFileFuzz
import Testing

@Suite("Binary store round trips")
struct BinaryFileRoundTripTests {
    typealias Support = BinaryFileTestSupport

    @Test("random graphs of every attribute type and relationship kind come back exactly after close and reopen", arguments: [1, 2, 3] as [UInt64])
    func randomGraphs(seed: UInt64) throws {
        let url = try Support.temporaryStore()
        defer { Support.remove(url) }
        var container = try Support.container(url)
        let context = container.newBackgroundContext()
        try context.performAndWait { try FixtureGraph.populate(context, seed: seed, people: 60) }
        let saved = Support.exact(try Support.contents(container))
        #expect(saved.rows["Person"]?.count ?? 0 > 30)
        container.close()
        container = try Support.container(url)
        defer { container.close() }
        #expect(Support.exact(try Support.contents(container)) == saved)
    }

    @Test("edge values of every attribute type survive exactly, read back through a context")
    func attributeEdgeValues() throws {
        let url = try Support.temporaryStore()
        defer { Support.remove(url) }
        let nan = Double(bitPattern: 0x7FF8_0000_DEAD_BEEF)  // a NaN with a payload
        let relative = URL(string: "sub/x?q=1", relativeTo: URL(string: "http://a.com/b/"))!
        let values: [(String, Any?)] = [
            ("i16", Int16.min), ("i32", Int32.max), ("i64", Int64.min), ("dbl", nan), ("flt", Float(-0.0)),
            ("dec", Decimal(string: "-98765432109876543210.0123456789")!), ("str", "nul\u{0}inside e\u{301} 🧪"),
            ("flag", false), ("when", Date(timeIntervalSinceReferenceDate: -1.5e10 + 0.000123)),
            ("blob", Data((0...255).map { UInt8($0) }.reversed())), ("uid", UUID(uuidString: "00000000-0000-0000-0000-0000000000FF")!),
            ("link", relative), ("badge", FixtureModel.Badge(title: "x\u{0}y", level: Int.min)),
        ]
        var container = try Support.container(url)
        let context = container.newBackgroundContext()
        let ids = try context.performAndWait {
            let full = try context.insertObject(entityName: "Captain")
            for (key, value) in values { try full.setValue(value, forKey: key) }
            try full.setValue(Int16.max, forKey: "rank")
            let empty = try context.insertObject(entityName: "Person")
            let infinite = try context.insertObject(entityName: "Person")
            try infinite.setValue(-Double.infinity, forKey: "dbl")
            try infinite.setValue(Decimal.nan, forKey: "dec")
            try infinite.setValue("", forKey: "str")
            try context.save()
            return [full.objectID, empty.objectID, infinite.objectID]
        }
        container.close()
        container = try Support.container(url)
        defer { container.close() }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let full = try reader.existingObject(with: ids[0])
            #expect(try full.value(forKey: "i16") as? Int64 == Int64(Int16.min))
            #expect(try full.value(forKey: "i32") as? Int64 == Int64(Int32.max))
            #expect(try full.value(forKey: "i64") as? Int64 == Int64.min)
            #expect((try full.value(forKey: "dbl") as? Double)?.bitPattern == nan.bitPattern, "the NaN keeps its payload")
            #expect((try full.value(forKey: "flt") as? Double)?.bitPattern == (-0.0 as Double).bitPattern, "−0 stays negative")
            #expect(try full.value(forKey: "dec") as? Decimal == Decimal(string: "-98765432109876543210.0123456789")!)
            #expect((try full.value(forKey: "str") as? String).map { Array($0.utf8) } == Array("nul\u{0}inside e\u{301} 🧪".utf8))
            #expect(try full.value(forKey: "flag") as? Bool == false)
            #expect((try full.value(forKey: "when") as? Date)?.timeIntervalSinceReferenceDate.bitPattern == (-1.5e10 + 0.000123).bitPattern)
            #expect(try full.value(forKey: "blob") as? Data == Data((0...255).map { UInt8($0) }.reversed()))
            #expect(try full.value(forKey: "uid") as? UUID == UUID(uuidString: "00000000-0000-0000-0000-0000000000FF"))
            let link = try full.value(forKey: "link") as? URL
            #expect(link == relative && link?.baseURL == relative.baseURL, "a relative URL keeps its base")
            #expect(try full.value(forKey: "badge") as? FixtureModel.Badge == FixtureModel.Badge(title: "x\u{0}y", level: Int.min))
            #expect(try full.value(forKey: "rank") as? Int64 == Int64(Int16.max), "the sub-entity's own attribute")
            let empty = try reader.existingObject(with: ids[1])
            for (key, _) in values { #expect(try empty.value(forKey: key) == nil, "\(key) stays nil") }
            let infinite = try reader.existingObject(with: ids[2])
            #expect(try infinite.value(forKey: "dbl") as? Double == -.infinity)
            #expect((try infinite.value(forKey: "dec") as? Decimal)?.isNaN == true)
            #expect(try infinite.value(forKey: "str") as? String == "")
        }
    }

    @Test("to-one, to-many, ordered, many-to-many, many-to-nil and one-to-nil relationships survive a reopen")
    func relationshipKinds() throws {
        let url = try Support.temporaryStore()
        defer { Support.remove(url) }
        var container = try Support.container(url)
        let context = container.newBackgroundContext()
        let ids = try context.performAndWait {
            let ann = try context.insertObject(entityName: "Person")
            let bob = try context.insertObject(entityName: "Captain")
            let passport = try context.insertObject(entityName: "Passport")
            let team = try context.insertObject(entityName: "Team")
            let chess = try context.insertObject(entityName: "Club")
            let choir = try context.insertObject(entityName: "Club")
            let red = try context.insertObject(entityName: "Tag")
            let blue = try context.insertObject(entityName: "Tag")
            let playlist = try context.insertObject(entityName: "Playlist")
            let tracks = try (0..<4).map { _ in try context.insertObject(entityName: "Track") }
            try ann.setValue(passport, forKey: "passport")
            try ann.setValue(team, forKey: "team")
            try bob.setValue(team, forKey: "team")
            for club in [chess, choir] { try ann.add(club, to: "clubs") }
            try bob.add(chess, to: "clubs")
            // Many-to-nil: one tag in two people's lists (Core Data would move it).
            for person in [ann, bob] { try person.add(red, to: "tags") }
            try ann.add(blue, to: "tags")
            try bob.setValue(blue, forKey: "favourite")
            for (index, track) in tracks.enumerated() { try playlist.insert(track, at: index == 0 ? 0 : index / 2, in: "tracks") }
            try context.save()
            let order = (try playlist.value(forKey: "tracks") as? OrderedSet<ManagedObject>)?.map(\.objectID) ?? []
            return (ann: ann.objectID, bob: bob.objectID, passport: passport.objectID, team: team.objectID,
                    clubs: [chess.objectID, choir.objectID], tags: [red.objectID, blue.objectID], playlist: playlist.objectID, order: order)
        }
        container.close()
        container = try Support.container(url)
        defer { container.close() }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            func members(_ object: ManagedObject, _ key: String) throws -> Set<ObjectID> {
                Set(((try object.value(forKey: key) as? Set<ManagedObject>) ?? []).map(\.objectID))
            }
            let ann = try reader.existingObject(with: ids.ann)
            let bob = try reader.existingObject(with: ids.bob)
            #expect((try ann.value(forKey: "passport") as? ManagedObject)?.objectID == ids.passport)
            #expect((try reader.existingObject(with: ids.passport).value(forKey: "holder") as? ManagedObject)?.objectID == ids.ann)
            #expect(try members(reader.existingObject(with: ids.team), "members") == [ids.ann, ids.bob])
            #expect(try members(ann, "clubs") == Set(ids.clubs))
            #expect(try members(reader.existingObject(with: ids.clubs[0]), "people") == [ids.ann, ids.bob])
            #expect(try members(ann, "tags") == Set(ids.tags))
            #expect(try members(bob, "tags") == [ids.tags[0]], "a many-to-nil member shared by two sources stays with both")
            #expect((try bob.value(forKey: "favourite") as? ManagedObject)?.objectID == ids.tags[1])
            let order = (try reader.existingObject(with: ids.playlist).value(forKey: "tracks") as? OrderedSet<ManagedObject>)?.map(\.objectID)
            #expect(order == ids.order)
            #expect(ids.order.count == 4 && ids.order != ids.order.sorted { $0.primaryKey! < $1.primaryKey! }, "the order is not key order")
        }
    }

    @Test("user metadata, the store identifier and key counters survive a reopen; a new store exists on disk at once")
    func metadataRoundTrip() throws {
        let url = try Support.temporaryStore()
        defer { Support.remove(url) }
        var container = try Support.container(url)
        #expect(FileManager.default.fileExists(atPath: url.path))
        let identifier = try Support.contents(container).metadata.storeIdentifier
        #expect(try BinaryFileStore.metadata(at: url).storeIdentifier == identifier)
        let store = container.coordinator.persistentStores[0]
        var changes = StoreChangeSet()
        changes.userMetadata = ["k\u{0}ey": "välue", "": ""]
        try store.save(changes)
        _ = try store.allocatePrimaryKeys(rootEntity: "Tag", count: 5)
        try store.save(StoreChangeSet())  // the counters are written with the next save
        container.close()
        #expect(!FileManager.default.fileExists(atPath: url.path + ".lock"), "closing removes the lock file")
        container = try Support.container(url)
        defer { container.close() }
        let metadata = try Support.contents(container).metadata
        #expect(metadata.storeIdentifier == identifier)
        #expect(metadata.userInfo == ["k\u{0}ey": "välue", "": ""])
        #expect(try Support.contents(container).nextPrimaryKey["Tag"] == 6)
    }

    @Test("references to another store's objects keep that store's identifier")
    func foreignReferences() throws {
        let url = try Support.temporaryStore()
        defer { Support.remove(url) }
        var container = try Support.container(url)
        let store = container.coordinator.persistentStores[0]
        let person = try #require(FuzzInput.model.entity(named: "Person"))
        let favourite = try #require(person.relationship(named: "favourite"))
        let tags = try #require(person.relationship(named: "tags"))
        let foreign = ObjectID(entityName: "Tag", storeIdentifier: "another-store", primaryKey: -7)
        let id = ObjectID(entityName: "Person", storeIdentifier: store.identifier, primaryKey: try store.allocatePrimaryKeys(rootEntity: "Person", count: 1))
        var toOne = [ObjectID?](repeating: nil, count: person.toOneRelationships.count)
        toOne[favourite.slot] = foreign
        var changes = StoreChangeSet()
        changes.inserted = [RowSnapshot(objectID: id, version: 1, attributes: Array(repeating: .null, count: person.attributes.count), toOne: toOne)]
        changes.toMany = [ToManyChange(source: id, relationship: tags, added: [foreign], removed: [], order: nil)]
        try store.save(changes)
        container.close()
        container = try Support.container(url)
        defer { container.close() }
        let row = try #require(try Support.contents(container).tables["Person"]?[id.primaryKey!])
        #expect(row.toOne[favourite.slot] == foreign)
        #expect(row.toMany[tags.slot] == [foreign])
    }

    @Test("CRC-32 gives the standard check value, in one piece or fed in parts")
    func crcCheckValue() {
        let bytes = Array("123456789".utf8)
        #expect(bytes.withUnsafeBytes { CRC32.checksum($0) } == 0xCBF4_3926)
        let long = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var parts = CRC32()
        long.withUnsafeBytes { buffer in
            parts.update(UnsafeRawBufferPointer(rebasing: buffer[0..<13]))
            parts.update(UnsafeRawBufferPointer(rebasing: buffer[13...]))
        }
        #expect(parts.value == long.withUnsafeBytes { CRC32.checksum($0) })
        #expect(parts.value != 0)
    }
}
