import Foundation
import ObjectGraph
import Testing

/// An objects-did-change observer may use the context that posted it (Core Data delivers the
/// notification synchronously, on the context's queue, and observers commonly fetch or save
/// from it): the outer processing must not depend on state the observer's own processing
/// consumed.
@Suite struct ReentrantObserverTests {
    @Test("an observer processing pending changes after a delete event does not trap, and its own delete is processed")
    func observerProcessesAfterDelete() throws {
        let container = try KeeperPetFixture.container()
        let seeded = try KeeperPetFixture.seed(container)
        let context = container.newBackgroundContext(name: "reentrant")
        let reacted = Box(false)
        try context.performAndWait {
            let keeper = try context.existingObject(with: seeded.keeper)
            let petID = seeded.pets[1]
            let token = NotificationCenter.default.addObserver(forName: .objectGraphObjectsDidChange, object: context, queue: nil) { _ in
                guard !reacted.withLock({ $0 }) else { return }
                reacted.withLock { $0 = true }
                // Reacting to the deletion: delete another object and process it now.
                guard let pet = try? context.existingObject(with: petID) else { return }
                context.delete(pet)
                try? context.processPendingChanges()
            }
            defer { NotificationCenter.default.removeObserver(token) }
            context.delete(try context.existingObject(with: seeded.pets[0]))
            try context.processPendingChanges()
            #expect(reacted.withLock { $0 })
            #expect(context.deletedObjects.count == 2)
            // Nothing left pending: a later event must not apply the rules again.
            try context.processPendingChanges()
            try context.save()
            _ = keeper
        }
        let check = container.newBackgroundContext(name: "check")
        try check.performAndWait {
            let keeper = try #require(try check.existingObject(with: seeded.keeper) as? Keeper)
            #expect(keeper.pets.isEmpty)
        }
    }
}
