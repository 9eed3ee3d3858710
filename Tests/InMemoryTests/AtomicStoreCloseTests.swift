import Dispatch
import Foundation
import ObjectGraph
import Synchronization
import Testing

/// An atomic store whose persist step waits, when asked, until the test lets it go: a save
/// can then be held in progress while the store closes.
final class PausingAtomicStore: AtomicStore, @unchecked Sendable {
    let pausing = Atomic<Bool>(false)
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let persisted = Atomic<Int>(0)

    init(request: StoreOpenRequest) {
        super.init(request: request, contents: .empty(for: request, identifier: UUID().uuidString), capabilities: [])
    }

    override func persist(_ contents: AtomicStoreContents) throws {
        if pausing.load(ordering: .sequentiallyConsistent) {
            entered.signal()
            proceed.wait()
        }
        persisted.add(1, ordering: .sequentiallyConsistent)
    }
}

@Suite("Atomic store: closing during a save")
struct AtomicStoreCloseTests {
    @Test("close() waits for the save in progress, which lands; a save after it throws closed")
    func closeWaitsForTheSaveInProgress() throws {
        let model = try ManagedObjectModel { m in m.entity("Note") { e in e.attribute("text", .string) } }
        let coordinator = PersistentStoreCoordinator(model: model)
        let store = try coordinator.addPersistentStore(StoreDescription(type: "pausing") { PausingAtomicStore(request: $0) }) as! PausingAtomicStore
        let context = ManagedObjectContext(coordinator: coordinator)
        store.pausing.store(true, ordering: .sequentiallyConsistent)
        let saved = Atomic<Bool>(false)
        let saveDone = DispatchSemaphore(value: 0)
        Thread {
            do {
                try context.performAndWait { () throws in
                    try context.insertObject(entityName: "Note").setValue("held", forKey: "text")
                    try context.save()
                }
                saved.store(true, ordering: .sequentiallyConsistent)
            } catch {}
            saveDone.signal()
        }.start()
        store.entered.wait()  // The save is inside persist, past its open check.
        let closeDone = DispatchSemaphore(value: 0)
        Thread {
            store.close()
            closeDone.signal()
        }.start()
        // (Bounded only so that a broken close cannot hang the run; a close that waits
        // correctly can never return early, however slow the machine.)
        let waitedForSave = closeDone.wait(timeout: .now() + .milliseconds(300)) == .timedOut
        #expect(waitedForSave, "close() returned while a save was writing")
        store.proceed.signal()
        if waitedForSave { closeDone.wait() }
        saveDone.wait()
        let landed = saved.load(ordering: .sequentiallyConsistent)
        let persisted = store.persisted.load(ordering: .sequentiallyConsistent)
        #expect(landed, "the save in progress lands")
        #expect(persisted == 1)
        let error = #expect(throws: StoreError.self) {
            try context.performAndWait { () throws in
                try context.insertObject(entityName: "Note").setValue("late", forKey: "text")
                try context.save()
            }
        }
        #expect(error?.code == .closed)
    }
}
