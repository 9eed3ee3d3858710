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

    @Test("the container's background tasks run on a private context of their own and save")
    func backgroundTasks() async throws {
        let container = try KeeperPetFixture.container()
        let (name, wasOnQueue) = try await container.performBackgroundTask { context in
            let keeper = try context.insert(Keeper.self)
            keeper.name = "from a task"
            try context.save()
            return (context.name, context.ownsQueue())
        }
        #expect(name == "backgroundTask" && wasOnQueue, "the block ran on its context's queue")
        let done = DispatchSemaphore(value: 0)
        container.enqueueBackgroundTask { context in
            defer { done.signal() }
            let keeper = try? context.insert(Keeper.self)
            keeper?.name = "enqueued"
            try? context.save()
        }
        #expect(done.wait(timeout: .now() + 30) == .success, "the enqueued task ran")
        let reader = container.newBackgroundContext(name: "reader")
        let stored = try reader.performAndWait { try reader.fetch(FetchRequest<Keeper>()).compactMap(\.name).sorted() }
        #expect(stored == ["enqueued", "from a task"], "both tasks' saves reached the store")
    }
}
