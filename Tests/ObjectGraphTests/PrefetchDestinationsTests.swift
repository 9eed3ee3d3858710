import Foundation
@testable import ObjectGraph
import ObjectGraphInMemory
import Testing

/// Prefetching tells destinations apart before loading them (one object and one row per
/// destination, however many sources share it), through a memo of recent IDs in front of a
/// set: IDs that share the memo's slot, or an entity's key with another entity's, must still
/// each be loaded once.
@Suite("Prefetch destinations")
struct PrefetchDestinationsTests {
    /// 900 owners; owner i has pet (i % 300) + 1 and toys (i % 300) + 1 and ((i + 7) % 300) + 1:
    /// pets and toys both have keys 1…300, so keys 1 and 257 (and 2 and 258, …) share a slot of
    /// the memo, and a pet and a toy share every key.
    static func owners() throws -> (PersistentContainer, petIDs: [ObjectID], toyIDs: [ObjectID]) {
        let model = try ManagedObjectModel { m in
            m.entity("Owner") { e in
                e.attribute("n", .integer64)
                e.toOne("pet", "Pet", inverse: "owners")
                e.toMany("toys", "Toy", inverse: "owners")
            }
            m.entity("Pet") { e in
                e.attribute("name", .string)
                e.toMany("owners", "Owner", inverse: "pet")
            }
            m.entity("Toy") { e in
                e.attribute("name", .string)
                e.toMany("owners", "Owner", inverse: "toys")
            }
        }
        let container = try PersistentContainer(model: model, stores: [.inMemory()])
        let writer = container.newBackgroundContext()
        let (pets, toys) = try writer.performAndWait {
            let pets = try (1...300).map { n in
                let pet = try writer.insertObject(entityName: "Pet")
                try pet.setValue("pet \(n)", forKey: "name")
                return pet
            }
            let toys = try (1...300).map { n in
                let toy = try writer.insertObject(entityName: "Toy")
                try toy.setValue("toy \(n)", forKey: "name")
                return toy
            }
            for i in 0..<900 {
                let owner = try writer.insertObject(entityName: "Owner")
                try owner.setValue(Int64(i), forKey: "n")
                try owner.setValue(pets[i % 300], forKey: "pet")
                try owner.add(toys[i % 300], to: "toys")
                try owner.add(toys[(i + 7) % 300], to: "toys")
            }
            try writer.save()
            return (pets.map(\.objectID), toys.map(\.objectID))
        }
        return (container, pets, toys)
    }

    @Test("every destination is loaded once per key path, whatever slot or key it shares with another")
    func sharedDestinationsAreLoadedOnce() throws {
        let (container, petIDs, toyIDs) = try Self.owners()
        #expect(Set(petIDs.map { $0.primaryKey }) == Set(toyIDs.map { $0.primaryKey }), "pets and toys share their keys")
        #expect(petIDs.contains { $0.primaryKey == 1 } && petIDs.contains { $0.primaryKey == 257 }, "keys that share a memo slot")
        let context = container.newBackgroundContext()
        try context.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Owner")
            request.returnsObjectsAsFaults = false
            request.relationshipKeyPathsForPrefetching = ["pet", "toys"]
            let owners = try context.fetch(request)
            #expect(owners.count == 900)
            let stats = context.statistics
            // (Rows the writer's save left in the coordinator's cache are read from there.)
            #expect(stats.storeRoundTrips <= 1 + 1 + 2, "at most the fetch, the pets' rows, the toys' members and rows")
            #expect(stats.faultsFired == 900 + 300 + 300, "each owner, pet and toy loaded once")
            for id in petIDs + toyIDs {
                let object = try #require(context.registeredObject(for: id), "\(id) was prefetched")
                #expect(!object.isFault, "\(id) is loaded")
            }
            // Reading them now goes to the store no more.
            for owner in owners {
                let n = try #require(owner.value(forKey: "n") as? Int64)
                let pet = try #require(owner.value(forKey: "pet") as? ManagedObject)
                #expect(pet.objectID == petIDs[Int(n) % 300])
                let toys = try #require(owner.value(forKey: "toys") as? Set<ManagedObject>)
                #expect(Set(toys.map(\.objectID)) == [toyIDs[Int(n) % 300], toyIDs[(Int(n) + 7) % 300]])
            }
            #expect(context.statistics.storeRoundTrips == stats.storeRoundTrips, "no round trip after the prefetch")
            #expect(context.statistics.faultsFired == stats.faultsFired, "and no fault")
        }
    }
}
