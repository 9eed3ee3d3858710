import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Synchronization
import Testing

final class Pet: ManagedObject {
    @Attribute var name: String?
    @Relationship var owner: Keeper?
}

final class Keeper: ManagedObject {
    @Attribute var name: String?
    @Relationship var pets: Set<Pet>
}

/// A value shared with blocks running on other queues.
final class Box<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}

/// Builds what the tests misuse. Exit-test bodies cannot capture values, so they call these.
enum ConcurrencyFixture {
    /// Keepers and their pets (`cascade`: deleting a keeper deletes its pets; else nullify).
    static func model(cascade: Bool = false) throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Pet", as: Pet.self) { e in
                e.attribute("name", .string, optional: true)
                e.toOne("owner", "Keeper", inverse: "pets")
            }
            m.entity("Keeper", as: Keeper.self) { e in
                e.attribute("name", .string, optional: true)
                e.toMany("pets", "Pet", inverse: "owner", deleteRule: cascade ? .cascade : .nullify)
            }
        }
    }

    static func context(name: String? = nil) throws -> ManagedObjectContext {
        let container = try PersistentContainer(model: model(), stores: [.inMemory()])
        return container.newBackgroundContext(name: name)
    }

    /// A saved pet, returned out of its context's queue with the context (objects hold their
    /// context weakly, so the caller keeps it alive).
    static func petOutsideItsQueue() throws -> (ManagedObjectContext, Pet) {
        let context = try context(name: "pets")
        let pet = try context.performAndWait {
            let pet = try context.insert(Pet.self)
            pet.name = "Rex"
            try context.save()
            return pet
        }
        return (context, pet)
    }

    /// What an exit test's child process wrote to standard error.
    static func text(_ result: ExitTest.Result?) -> String {
        String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    }
}

@Suite("Concurrency: queue confinement")
struct ConcurrencyTests {
    @Test("stores attached and detached on one thread while others fault objects of another store")
    func routingWhileStoresChange() throws {
        let (container, writer) = try makeContext { m in
            m.entity("Note") { e in e.attribute("text", .string) }
        }
        let ids = try writer.performAndWait {
            let notes = try (0..<200).map { index in
                let note = try writer.insertObject(entityName: "Note")
                try note.setValue("note \(index)", forKey: "text")
                return note
            }
            try writer.save()
            return notes.map(\.objectID)
        }
        let coordinator = container.coordinator
        let mismatches = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 3) { worker in
            if worker == 0 {
                for _ in 0..<40 {
                    guard let store = try? coordinator.addPersistentStore(.inMemory()) else {
                        failures.add(1, ordering: .relaxed)
                        continue
                    }
                    coordinator.removePersistentStore(store)
                }
                return
            }
            let context = container.newBackgroundContext()
            context.performAndWait {
                for _ in 0..<5 {
                    for (index, id) in ids.enumerated() {
                        let text = try? context.object(with: id).value(forKey: "text") as? String
                        if text != "note \(index)" { mismatches.add(1, ordering: .relaxed) }
                    }
                    context.reset()
                }
            }
        }
        #expect(mismatches.load(ordering: .relaxed) == 0)
        #expect(failures.load(ordering: .relaxed) == 0)
        #expect(coordinator.persistentStores.count == 1)
    }

    @Test func throwingAPIsThrowOffTheQueue() throws {
        let (context, pet) = try ConcurrencyFixture.petOutsideItsQueue()
        #expect(pet.managedObjectContext === context)
        let id = pet.objectID.description
        #expect(!context.ownsQueue())
        let read = expectGraphError(.concurrencyViolation, mentioning: ["concurrency violation", id, "name", "thread", "pets"]) {
            _ = try pet.value(forKey: "name")
        }
        #expect(read?.description.contains("concurrencyViolation") == true)
        expectGraphError(.concurrencyViolation, mentioning: [id, "thread"]) { try pet.setValue("Max", forKey: "name") }
        expectGraphError(.concurrencyViolation, mentioning: ["save()", "thread"]) { try context.save() }
        expectGraphError(.concurrencyViolation, mentioning: ["fetch", "thread"]) {
            _ = try context.fetch(FetchRequest<Pet>())
        }
        expectGraphError(.concurrencyViolation, mentioning: ["count", "thread"]) {
            _ = try context.count(for: FetchRequest<Pet>())
        }
        expectGraphError(.concurrencyViolation, mentioning: ["Pet", "thread"]) { _ = try context.insertObject(entityName: "Pet") }
        expectGraphError(.concurrencyViolation, mentioning: [id, "thread"]) { _ = try context.existingObject(with: pet.objectID) }
        expectGraphError(.concurrencyViolation, mentioning: [id, "thread"]) { _ = try pet.changedValues() }
        // Nothing was changed by the refused calls.
        let name = try context.performAndWait { try pet.value(forKey: "name") as? String }
        #expect(name == "Rex")
    }

    @Test func typedGetterOffTheQueueStopsTheProcessWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (context, pet) = try ConcurrencyFixture.petOutsideItsQueue()
            withExtendedLifetime(context) { _ = pet.name }
        }
        let text = ConcurrencyFixture.text(result)
        #expect(text.contains("concurrency violation"))
        #expect(text.contains("Pet/p1.name"))
        #expect(text.contains("thread"))
        #expect(text.contains("pets"))
    }

    @Test func typedSetterOffTheQueueStopsTheProcessWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (context, pet) = try ConcurrencyFixture.petOutsideItsQueue()
            withExtendedLifetime(context) { pet.name = "Max" }
        }
        let text = ConcurrencyFixture.text(result)
        #expect(text.contains("concurrency violation"))
        #expect(text.contains("Pet/p1.name"))
    }

    @Test func typedRelationshipOffTheQueueStopsTheProcessWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (context, pet) = try ConcurrencyFixture.petOutsideItsQueue()
            withExtendedLifetime(context) { _ = pet.owner }
        }
        let text = ConcurrencyFixture.text(result)
        #expect(text.contains("concurrency violation"))
        #expect(text.contains("Pet/p1.owner"))
    }

    @Test func nonThrowingContextAPIOffTheQueueStopsTheProcess() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (context, _) = try ConcurrencyFixture.petOutsideItsQueue()
            _ = context.hasChanges
        }
        let text = ConcurrencyFixture.text(result)
        #expect(text.contains("concurrency violation"))
        #expect(text.contains("hasChanges"))
    }

    @Test func performAndWaitIsReentrant() throws {
        let context = try ConcurrencyFixture.context()
        let name: String? = try context.performAndWait {
            #expect(context.ownsQueue())
            return try context.performAndWait {
                #expect(context.ownsQueue())
                let pet = try context.insert(Pet.self)
                pet.name = "Inner"
                return context.performAndWait { pet.name }
            }
        }
        #expect(name == "Inner")
        #expect(!context.ownsQueue())
    }

    @Test func nestedPerformAndWaitMayTouchTheOuterContextsObjects() throws {
        let outer = try ConcurrencyFixture.context(name: "outer")
        let inner = ManagedObjectContext(coordinator: outer.coordinator, name: "inner")
        try outer.performAndWait {
            let pet = try outer.insert(Pet.self)
            pet.name = "Outer"
            try inner.performAndWait {
                #expect(inner.ownsQueue())
                #expect(outer.ownsQueue())
                #expect(pet.name == "Outer")
                try pet.setValue("Changed inside", forKey: "name")
                let keeper = try inner.insert(Keeper.self)
                keeper.name = "Inner keeper"
                try inner.save()
            }
            #expect(!inner.ownsQueue())
            #expect(pet.name == "Changed inside")
            try outer.save()
        }
        let count = try inner.performAndWait { try inner.count(for: FetchRequest<Pet>()) }
        #expect(count == 1)
    }

    @Test("while one thread runs a context's block, another thread using its objects is still refused")
    func anotherThreadIsRefusedWhileABlockRuns() throws {
        let (context, pet) = try ConcurrencyFixture.petOutsideItsQueue()
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        nonisolated(unsafe) let held = pet
        DispatchQueue.global().async {
            context.performAndWait {
                #expect(context.ownsQueue())
                #expect(held.name == "Rex")
                entered.signal()
                release.wait()
            }
            finished.signal()
        }
        entered.wait()
        // The block is running on the other thread, holding the context; this thread is not in it.
        #expect(!context.ownsQueue())
        expectGraphError(.concurrencyViolation, mentioning: [pet.objectID.description, "thread"]) {
            _ = try pet.value(forKey: "name")
        }
        release.signal()
        finished.wait()
        #expect(!context.ownsQueue())
        #expect(context.performAndWait { pet.name } == "Rex")
    }

    @Test func asyncPerformReturnsTheBlocksValue() async throws {
        let context = try ConcurrencyFixture.context()
        let count = try await context.perform {
            for name in ["a", "b", "c"] {
                let pet = try context.insert(Pet.self)
                pet.name = name
            }
            try context.save()
            return try context.count(for: FetchRequest<Pet>())
        }
        #expect(count == 3)
        let names: [String] = try await context.perform {
            try context.fetch(FetchRequest<Pet>(sortKeys: [SortKey("name", ascending: false)])).compactMap(\.name)
        }
        #expect(names == ["c", "b", "a"])
        let owns = try await context.perform { context.ownsQueue() }
        #expect(owns)
    }

    @Test func asyncPerformRethrowsTheBlocksError() async throws {
        let context = try ConcurrencyFixture.context()
        let error = await #expect(throws: ObjectGraphError.self) {
            try await context.perform { _ = try context.insertObject(entityName: "Unicorn") }
        }
        #expect(error?.code == .unknownEntity)
    }

    @Test func enqueueRunsTheBlocksInOrderOnTheQueue() async throws {
        let context = try ConcurrencyFixture.context()
        let log = Box<[String]>([])
        for index in 1...3 {
            context.enqueue {
                let pet = try? context.insert(Pet.self)
                pet?.name = "pet\(index)"
                log.withLock { $0.append(context.ownsQueue() ? "\(index)" : "off-queue") }
            }
        }
        let saved: Int = await withCheckedContinuation { continuation in
            context.enqueue {
                try? context.save()
                continuation.resume(returning: (try? context.count(for: FetchRequest<Pet>())) ?? -1)
            }
        }
        #expect(log.withLock { $0 } == ["1", "2", "3"])
        #expect(saved == 3)
    }

    @Test func enqueueReturnsBeforeTheBlockFinishes() throws {
        let context = try ConcurrencyFixture.context()
        let gate = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let ran = Box(false)
        context.enqueue {
            gate.wait()
            ran.withLock { $0 = true }
            done.signal()
        }
        // Still blocked on the gate, so enqueue returned without running it to the end.
        #expect(!ran.withLock { $0 })
        gate.signal()
        done.wait()
        #expect(ran.withLock { $0 })
    }

    @MainActor
    @Test func mainQueueContextIsUsableDirectlyOnTheMainThread() throws {
        let container = try PersistentContainer(model: ConcurrencyFixture.model(), stores: [.inMemory()])
        let context = container.viewContext
        #expect(context.concurrencyType == .mainQueue)
        #expect(context.ownsQueue())
        let pet = try context.insert(Pet.self)
        pet.name = "Main"
        try context.save()
        let fetched = try context.fetch(FetchRequest<Pet>())
        #expect(fetched.map(\.name) == ["Main"])
        let background = container.newBackgroundContext()
        let id = pet.objectID
        let name = try background.performAndWait { try background.existingObject(with: id).value(forKey: "name") as? String }
        #expect(name == "Main")
    }
}
