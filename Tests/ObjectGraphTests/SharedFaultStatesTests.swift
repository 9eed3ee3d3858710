import Foundation
@testable import ObjectGraph
import ObjectGraphInMemory
import Testing

/// New objects and faults start with their entity's shared list of fault states, copied at the
/// first change: a change to one object's to-many must never reach its entity's list or
/// another object's.
@Suite("Shared fault states")
struct SharedFaultStatesTests {
    @Test("changing one object's to-many leaves the entity's list of faults and every other object as they were")
    func changesCopyTheSharedList() throws {
        let (container, petIDs, toyIDs) = try PrefetchDestinationsTests.owners()
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let owners = try context.fetch(FetchRequest<ManagedObject>(entityName: "Owner", sortKeys: [SortKey("n")]))
            let entity = owners[0].entity
            #expect(entity.faultToManyStates.count == 1 && entity.faultToManyStates.allSatisfy { $0.isFault })
            #expect(owners.allSatisfy { $0.toManyStates.count == 1 && $0.toManyStates[0].isFault })
            // Changed and unsaved on one owner (recorded on the fault); loaded on another.
            try owners[0].add(try context.existingObject(with: toyIDs[100]), to: "toys")
            let toys = try #require(try owners[1].value(forKey: "toys") as? Set<ManagedObject>)
            #expect(toys.count == 2)
            #expect(owners[0].toManyStates[0].hasChanges)
            #expect(!owners[1].toManyStates[0].isFault && !owners[1].toManyStates[0].hasChanges)
            #expect(owners[2...].allSatisfy { $0.toManyStates[0].isFault }, "the other owners' to-manys are still faults")
            #expect(entity.faultToManyStates.allSatisfy { $0.isFault && !$0.hasChanges }, "the entity's list is untouched")
            // A refreshed object starts over from the shared list.
            context.refresh(owners[1], mergeChanges: false)
            #expect(owners[1].toManyStates[0].isFault)
            let pet = try context.existingObject(with: petIDs[0])
            #expect(pet.toManyStates[0].isFault, "a pet's owners: its own entity's list")
            #expect(try (pet.value(forKey: "owners") as? Set<ManagedObject>)?.count == 3)
            #expect(pet.entity.faultToManyStates.allSatisfy { $0.isFault })
        }
    }
}
