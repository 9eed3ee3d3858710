import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Synchronization
import Testing

@Suite("merging the deletion of an object whose deletion is pending here")
struct MergePendingDeleteTests {
    @Test("merging the deletion of an object whose own deletion is pending here leaves nothing to save")
    func mergeOfAPendingDeletion() throws {
        let container = try KeeperPetFixture.container()
        let (keeperID, _) = try KeeperPetFixture.seed(container)
        let context = container.newBackgroundContext(name: "mine")
        try context.performAndWait {
            let keeper = try context.existingObject(with: keeperID) as! Keeper
            _ = keeper.pets.count  // members loaded
            context.delete(keeper)  // rules pending until the block ends
            let payload = try KeeperPetFixture.deleteElsewhere(container, keeperID)
            try context.mergeChanges(fromContextDidSave: payload)
        }
        let state = context.performAndWait {
            "hasChanges \(context.hasChanges) deleted \(context.deletedObjects.map(\.objectID)) updated \(context.updatedObjects.map(\.objectID)) registered \(context.registeredObjects.map(\.objectID))"
        }
        #expect(state.hasPrefix("hasChanges false"), "\(state)")
        #expect(throws: Never.self) { try context.performAndWait { try context.save() } }
    }

    @Test("a merged deletion of a keeper deleted here does not cascade, over stale members, to pets moved away before it")
    func mergedDeletionDoesNotCascadeOverStaleMembers() throws {
        let container = try KeeperPetFixture.container()
        let (keeperID, petIDs) = try KeeperPetFixture.seed(container)
        let setup = container.newBackgroundContext(name: "setup")
        let otherKeeperID = try setup.performAndWait {
            let other = try setup.insert(Keeper.self)
            other.name = "K2"
            try setup.save()
            return other.objectID
        }
        let context = container.newBackgroundContext(name: "mine")
        try context.performAndWait {
            let keeper = try context.existingObject(with: keeperID) as! Keeper
            #expect(keeper.pets.count == 2)  // members loaded: [a, b]
            context.delete(keeper)  // its cascade runs when the block ends
            // Meanwhile another context moves the pets to K2, deletes K and saves.
            let other = container.newBackgroundContext(name: "other")
            let payload = Box<ContextDidSave?>(nil)
            let token = NotificationCenter.default.addObserver(forName: .objectGraphContextDidSave, object: other, queue: nil) { note in
                let changes = note.userInfo?[ContextDidSave.key] as? ContextDidSave
                payload.withLock { $0 = changes }
            }
            try other.performAndWait {
                let k2 = try other.existingObject(with: otherKeeperID) as! Keeper
                for id in petIDs { (try other.existingObject(with: id) as! Pet).owner = k2 }
                other.delete(try other.existingObject(with: keeperID))
                try other.save()
            }
            NotificationCenter.default.removeObserver(token)
            try context.mergeChanges(fromContextDidSave: try #require(payload.withLock { $0 }))
        }
        try context.performAndWait { try context.save() }
        let check = container.newBackgroundContext(name: "check")
        let pets = try check.performAndWait {
            try check.fetch(FetchRequest<Pet>()).map { "\($0.name ?? "?")->\($0.owner?.name ?? "nil")" }.sorted()
        }
        #expect(pets == ["a->K2", "b->K2"])
    }
}
