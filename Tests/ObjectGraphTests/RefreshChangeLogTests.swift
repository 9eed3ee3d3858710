import Foundation
import ObjectGraph
import Testing

/// A refresh that discards an object's changes takes them out of the current event too.
@Suite struct RefreshChangeLogTests {
    @Test("an object changed and then refreshed without merging changes is not listed as updated")
    func discardedChangesLeaveTheEvent() throws {
        let container = try KeeperPetFixture.container()
        let seeded = try KeeperPetFixture.seed(container)
        let context = container.newBackgroundContext(name: "mine")
        let recorder = Recorder(context, label: "mine")
        try context.performAndWait {
            let pet = try context.existingObject(with: seeded.pets[0]) as! Pet
            pet.name = "renamed"
            context.refresh(pet, mergeChanges: false)
            #expect(!pet.hasChanges)
            try context.processPendingChanges()
        }
        let log = recorder.take()
        #expect(!log.contains { $0.contains("upd[\(seeded.pets[0].description)") }, "\(log)")
    }
}
