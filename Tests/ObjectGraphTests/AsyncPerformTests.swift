import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Synchronization
import Testing

@Suite("await perform returns after the block ends")
struct AsyncPerformTests {
    @Test("await perform returns after the block's pending changes are processed and announced")
    func asyncPerformReturnsAfterObjectsDidChange() async throws {
        let container = try KeeperPetFixture.container()
        let context = container.newBackgroundContext(name: "async")
        let posted = Box(false)
        let token = NotificationCenter.default.addObserver(forName: .objectGraphObjectsDidChange, object: context, queue: nil) { _ in
            // A slow observer: the notification is posted synchronously, inside the block's end.
            Thread.sleep(forTimeInterval: 0.3)
            posted.withLock { $0 = true }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try await context.perform {
            let pet = try context.insert(Pet.self)
            pet.name = "x"
        }
        #expect(posted.withLock { $0 }, "perform returned before its block's objects-did-change was posted")
    }
}
