import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Synchronization
import Testing

@Suite("performAndWait on the main queue ends like any outermost block")
struct MainQueuePerformTests {
    @MainActor
    @Test("performAndWait on the view context from the main queue processes pending changes at its end, as from any other thread")
    func viewPerformAndWaitOnMainProcessesPendingChanges() throws {
        let container = try KeeperPetFixture.container()
        let (keeperID, petIDs) = try KeeperPetFixture.seed(container)
        let view = container.viewContext
        let rec = Recorder(view, label: "V")
        view.performAndWait {
            let keeper = try? view.existingObject(with: keeperID)
            if let keeper { view.delete(keeper) }
        }
        let log = rec.take()
        let cascaded = view.performAndWait { view.deletedObjects.map(\.objectID) }
        print("view main:", log, cascaded)
        #expect(log.count == 1, "\(log)")
        #expect(Set(cascaded) == Set(petIDs + [keeperID]), "the cascade ran at the end of the outermost block")
    }
}
