import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Synchronization
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

    /// A permanent ID never changes, so it may be read on any thread while its context works on
    /// the object — changes, undo, saves of other objects. (Run under ThreadSanitizer; before,
    /// undoing a change wrote the ID back, equal, racing such a read.)
    @Test func permanentIDsReadOnAnotherThreadWhileTheContextWorks() throws {
        let (context, pet) = try ConcurrencyFixture.petOutsideItsQueue()
        let id = context.performAndWait { pet.objectID }
        context.undoStack = ContextUndoStack()
        nonisolated(unsafe) let held = pet
        // Atomics, not a `Box`: ThreadSanitizer does not see `Mutex`'s futex as ordering.
        let reading = ReaderFlags()
        let reader = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            while !reading.stop.load(ordering: .acquiring) {
                if held.objectID != id { reading.mismatches.add(1, ordering: .relaxed) }
            }
            reader.signal()
        }
        for index in 0..<50 {
            try context.performAndWait {
                pet.name = "name \(index)"
                try context.processPendingChanges()
                try context.undo()
                let other = try context.insert(Pet.self)
                other.name = "other \(index)"
                try context.save()
            }
        }
        reading.stop.store(true, ordering: .releasing)
        reader.wait()
        #expect(reading.mismatches.load(ordering: .relaxed) == 0)
        #expect(context.performAndWait { pet.name } == "Rex")
    }

    /// A batched result's IDs, read off its context's queue, stop (before: they were read,
    /// racing the save that gives its unsaved matches permanent IDs).
    @Test func batchedObjectIDsOffTheQueueStopTheProcess() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (context, _) = try ConcurrencyFixture.petOutsideItsQueue()
            let results = try context.performAndWait {
                var request = FetchRequest<Pet>()
                request.fetchBatchSize = 10
                return try context.fetchBatched(request)
            }
            _ = results.objectIDs
        }
        let text = ConcurrencyFixture.text(result)
        #expect(text.contains("concurrency violation") && text.contains("objectIDs"))
        #expect(text.contains("'pets'") && text.contains("thread"))
    }

    /// The throwing entry points ConcurrencyTests does not list, each refused off the queue
    /// with the context and thread named (all were already; kept so a new one stays checked).
    @Test func otherThrowingEntryPointsRefuseOffTheQueue() throws {
        let (context, pet) = try ConcurrencyFixture.petOutsideItsQueue()
        let saved = Box<ContextDidSave?>(nil)
        let (keeper, batched) = try context.performAndWait { () -> (Keeper, BatchedFetchResults<Pet>) in
            let keeper = try context.insert(Keeper.self)
            let observer = NotificationCenter.default.addObserver(forName: .objectGraphContextDidSave, object: context, queue: nil) { note in
                let payload = note.userInfo?[ContextDidSave.key] as? ContextDidSave
                saved.withLock { $0 = payload }
            }
            try context.save()
            NotificationCenter.default.removeObserver(observer)
            var request = FetchRequest<Pet>()
            request.fetchBatchSize = 10
            return (keeper, try context.fetchBatched(request))
        }
        let refused: [(String, () throws -> Void)] = [
            ("committedValues", { _ = try pet.committedValues() }),
            ("validateForInsert", { try pet.validateForInsert() }),
            ("validateForUpdate", { try pet.validateForUpdate() }),
            ("validateForDelete", { try pet.validateForDelete() }),
            ("validateValue", { try pet.validateValue("Max", forKey: "name") }),
            ("add", { try keeper.add(pet, to: "pets") }),
            ("remove", { try keeper.remove(pet, from: "pets") }),
            ("setValue to-one", { try pet.setValue(keeper, forKey: "owner") }),
            ("processPendingChanges", { try context.processPendingChanges() }),
            ("obtainPermanentIDs", { try context.obtainPermanentIDs(for: [pet]) }),
            ("fetchBatched", { _ = try context.fetchBatched(FetchRequest<Pet>()) }),
            ("fetchObjectIDs", { _ = try context.fetchObjectIDs(FetchRequest<Pet>()) }),
            ("fetchDictionaries", { _ = try context.fetchDictionaries(FetchRequest<Pet>()) }),
            ("batch(at:)", { _ = try batched.batch(at: 0) }),
            ("mergeChanges", { try context.mergeChanges(fromContextDidSave: #require(saved.withLock { $0 })) }),
            ("undo", { try context.undo() }),
            ("redo", { try context.redo() }),
            ("beginUndoGrouping", { try context.beginUndoGrouping() }),
            ("endUndoGrouping", { try context.endUndoGrouping() }),
            ("insert", { try context.insert(Pet(entity: pet.entity, insertInto: nil)) }),
        ]
        for (name, call) in refused {
            let error = #expect(throws: ObjectGraphError.self, "\(name)") { try call() }
            #expect(error?.code == .concurrencyViolation, "\(name): \(String(describing: error))")
            #expect(error?.message.contains("'pets'") == true && error?.message.contains("thread") == true, "\(name)")
        }
        #expect(context.performAndWait { keeper.pets.isEmpty && pet.owner == nil }, "nothing was changed")
    }
}

/// What a reading thread and a test share: whether to stop, and what it saw.
private final class ReaderFlags: Sendable {
    let stop = Atomic<Bool>(false)
    let mismatches = Atomic<Int>(0)
}
