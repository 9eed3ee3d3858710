import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Testing

/// Object state read off the queue, the description, and the context's configuration
/// properties set from other threads (ConcurrencyTests covers values, fetches and saves).
@Suite("Concurrency: object state and context configuration")
struct ConfinementTests {
    /// An object's state, read off its context's queue, stops naming the flag, the object, the
    /// context and the thread (before: each flag answered, racing the block that changes it).
    @Test(arguments: ["isFault", "isInserted", "isUpdated", "isDeleted", "hasChanges"])
    func stateFlagOffTheQueueStopsTheProcess(flag: String) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [flag] in
            let (context, pet) = try ConcurrencyFixture.petOutsideItsQueue()
            withExtendedLifetime(context) {
                switch flag {
                case "isFault": _ = pet.isFault
                case "isInserted": _ = pet.isInserted
                case "isUpdated": _ = pet.isUpdated
                case "isDeleted": _ = pet.isDeleted
                default: _ = pet.hasChanges
                }
            }
        }
        let text = ConcurrencyFixture.text(result)
        #expect(text.contains("concurrency violation"))
        #expect(text.contains("Pet/p1.\(flag)"))
        #expect(text.contains("'pets'"))
        #expect(text.contains("thread"))
    }

    @Test("state flags answer on the queue, and anywhere for an object in no context")
    func stateFlagsWhereTheyMayBeRead() throws {
        var (context, pet): (ManagedObjectContext?, Pet) = try ConcurrencyFixture.petOutsideItsQueue()
        let state = context!.performAndWait { () -> [Bool] in
            pet.name = "Max"
            return [pet.isFault, pet.isInserted, pet.isUpdated, pet.isDeleted, pet.hasChanges]
        }
        #expect(state == [false, false, true, false, true])
        let loose = Pet(entity: pet.entity, insertInto: nil)
        #expect(!loose.isInserted && !loose.hasChanges)
        context = nil
        #expect(pet.managedObjectContext == nil)
        #expect(!pet.isFault && !pet.isDeleted)
    }

    /// The description is printed anywhere (logs, debuggers, failed expectations), so it does
    /// not stop; off the queue it leaves the values out instead of reading them while the
    /// queue may be changing them (before: it read them).
    @Test func descriptionOffTheQueueLeavesTheValuesOut() throws {
        let (context, pet) = try ConcurrencyFixture.petOutsideItsQueue()
        let onQueue = context.performAndWait { pet.description }
        #expect(onQueue.contains("Rex"))
        let offQueue = pet.description
        #expect(offQueue.contains("Pet/p1"))
        #expect(!offQueue.contains("Rex"))
        #expect(offQueue.contains("'pets'") && offQueue.contains("thread"))
    }

    /// Configuration set from another thread while a block runs waits for the block, which
    /// sees one value throughout (before: the setters wrote while the block read them).
    @Test func configurationSetFromAnotherThreadWaitsForTheRunningBlock() throws {
        let context = try ConcurrencyFixture.context(name: "configured")
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let seen = Box<[String]>([])
        context.enqueue {
            entered.signal()
            release.wait()
            let values = "\(context.mergePolicy) \(context.retainsRegisteredObjects) \(context.automaticallyMergesChangesFromParent) \(context.undoStack != nil)"
            seen.withLock { $0.append(values) }
            finished.signal()
        }
        entered.wait()
        let setterDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            context.mergePolicy = .overwrite
            context.retainsRegisteredObjects = true
            context.automaticallyMergesChangesFromParent = true
            context.undoStack = ContextUndoStack()
            setterDone.signal()
        }
        // The setters wait for the block.
        let waited = setterDone.wait(timeout: .now() + 0.2) == .timedOut
        #expect(waited)
        release.signal()
        finished.wait()
        if waited { setterDone.wait() }
        #expect(seen.withLock { $0 } == ["\(MergePolicy.error) false false false"])
        #expect(context.mergePolicy == .overwrite)
        #expect(context.retainsRegisteredObjects)
        #expect(context.automaticallyMergesChangesFromParent)
        #expect(context.undoStack != nil)
    }
}
