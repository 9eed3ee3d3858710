import Foundation
import ObjectGraph
import Testing

/// An object a merged save deleted leaves the context's current event too: the merge's own
/// notification lists it as invalidated, and the next objects-did-change must not list it
/// again as updated (an observer reading it would touch an inaccessible object).
@Suite struct MergeChangeLogTests {
    @Test("an object changed in this event and then deleted by a merged save is not listed as updated afterwards")
    func invalidatedObjectLeavesTheEvent() throws {
        let container = try KeeperPetFixture.container()
        let seeded = try KeeperPetFixture.seed(container)
        let context = container.newBackgroundContext(name: "mine")
        let recorder = Recorder(context, label: "mine")
        try context.performAndWait {
            let pet = try context.existingObject(with: seeded.pets[0]) as! Pet
            pet.name = "renamed"  // an update in the current event, not yet processed
            let payload = try KeeperPetFixture.deleteElsewhere(container, seeded.pets[0])
            try context.mergeChanges(fromContextDidSave: payload)
            #expect(pet.managedObjectContext == nil)
            try context.processPendingChanges()
        }
        let log = recorder.take()
        let gone = seeded.pets[0].description
        #expect(log.contains { $0.contains("inv[\(gone)]") }, "\(log)")
        #expect(!log.contains { $0.contains("upd[") && $0.contains("upd[\(gone)") }, "\(log)")
        #expect(!context.performAndWait { context.hasChanges })
    }
}
