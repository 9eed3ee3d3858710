import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Testing

/// An atomic store whose persist step fails on demand, to prove a failed save changes nothing.
final class FailingAtomicStore: AtomicStore, @unchecked Sendable {
    nonisolated(unsafe) var failNextPersist = false

    init(request: StoreOpenRequest) {
        super.init(request: request, contents: .empty(for: request, identifier: UUID().uuidString), capabilities: [])
    }

    override func persist(_ contents: AtomicStoreContents) throws {
        if failNextPersist {
            failNextPersist = false
            throw StoreError(.io, "simulated disk failure")
        }
    }
}

@Suite("In-memory and atomic store")
struct AtomicStoreTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Note") { e in
                e.attribute("text", .string)
                e.toMany("links", "Note")
            }
        }
    }

    @Test("the in-memory store declares what it is: atomic, not persistent")
    func capabilities() throws {
        let container = try PersistentContainer(model: try Self.model(), stores: [.inMemory()])
        let store = try #require(container.coordinator.persistentStores.first)
        #expect(store.capabilities.contains(.atomic))
        #expect(!store.capabilities.contains(.persistent))
        #expect(try store.metadata().modelVersionHash == container.model.versionHash)
    }

    @Test("a save whose persist step fails leaves the store and the context's changes intact")
    func failedPersistChangesNothing() throws {
        let model = try Self.model()
        let coordinator = PersistentStoreCoordinator(model: model)
        let store = try coordinator.addPersistentStore(StoreDescription(type: "failing") { FailingAtomicStore(request: $0) }) as! FailingAtomicStore
        let context = ManagedObjectContext(coordinator: coordinator)
        try context.performAndWait {
            let note = try context.insertObject(entityName: "Note")
            try note.setValue("kept", forKey: "text")
            try context.save()
            try note.setValue("changed", forKey: "text")
            let other = try context.insertObject(entityName: "Note")
            try other.setValue("new", forKey: "text")
            store.failNextPersist = true
            let error = #expect(throws: StoreError.self) { try context.save() }
            #expect(error?.code == StoreError.Code.io)
            #expect(context.hasChanges, "the context keeps its changes after a failed save")
            let stored = try store.fetch(StoreFetchRequest(entity: try model.requireEntity("Note"), resultType: .snapshots))
            #expect(stored.snapshots.map(\.attributes[0]) == [.string("kept")], "the store holds only the first save")
            try context.save()
            let after = try store.fetch(StoreFetchRequest(entity: try model.requireEntity("Note"), sortKeys: [SortKey("text")], resultType: .snapshots))
            #expect(after.snapshots.map(\.attributes[0]) == [.string("changed"), .string("new")], "retrying the save lands everything")
        }
    }

    @Test("a stale version is reported as a conflict naming the object, and nothing is written")
    func conflictIsReported() throws {
        let container = try PersistentContainer(model: try Self.model(), stores: [.inMemory()])
        let first = container.newBackgroundContext()
        let second = container.newBackgroundContext()
        let id = try first.performAndWait {
            let note = try first.insertObject(entityName: "Note")
            try note.setValue("v1", forKey: "text")
            try first.save()
            return note.objectID
        }
        try second.performAndWait {
            let note = try second.existingObject(with: id)
            try note.setValue("from second", forKey: "text")
        }
        try first.performAndWait {
            let note = try first.existingObject(with: id)
            try note.setValue("from first", forKey: "text")
            try first.save()
        }
        second.performAndWait {
            // The context reports the store's conflict as a MergeConflictError (error policy).
            let error = #expect(throws: MergeConflictError.self) { try second.save() }?.underlying
            #expect(error?.code == .conflict)
            #expect(error?.conflicts.map(\.objectID) == [id])
            #expect(error?.conflicts.first?.expectedVersion == 1)
            #expect(error?.conflicts.first?.storedVersion == 2)
        }
        try first.performAndWait {
            first.refresh(try first.existingObject(with: id), mergeChanges: false)
            #expect(try first.existingObject(with: id).value(forKey: "text") as? String == "from first")
        }
    }

    @Test("many-to-nil memberships pointing at a deleted object are dropped, not left dangling")
    func danglingJoinRowsDropped() throws {
        let container = try PersistentContainer(model: try Self.model(), stores: [.inMemory()])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let a = try context.insertObject(entityName: "Note")
            let b = try context.insertObject(entityName: "Note")
            let c = try context.insertObject(entityName: "Note")
            for (note, text) in [(a, "a"), (b, "b"), (c, "c")] { try note.setValue(text, forKey: "text") }
            try a.add(b, to: "links")
            try a.add(c, to: "links")
            try context.save()
            context.delete(b)
            try context.save()
            let store = try #require(container.coordinator.persistentStores.first)
            let related = try store.relatedIDs(for: try #require(a.entity.relationship(named: "links")), of: [a.objectID])
            #expect(related == [[c.objectID]])
        }
    }
}

@Suite("Uniqueness constraints")
struct UniquenessTests {
    @Test("duplicates within a save and against stored rows fail with code 1551; nil never collides")
    func uniqueness() throws {
        let model = try ManagedObjectModel { m in
            m.entity("User") { e in
                e.attribute("email", .string, optional: true)
                e.unique("email")
            }
        }
        let container = try PersistentContainer(model: model, stores: [.inMemory()])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let a = try context.insertObject(entityName: "User")
            try a.setValue("a@x", forKey: "email")
            let b = try context.insertObject(entityName: "User")
            try b.setValue("a@x", forKey: "email")
            let error = #expect(throws: ObjectGraph.ValidationError.self) { try context.save() }
            #expect(error?.contains(.uniquenessConstraint, key: "email") == true)
            try b.setValue("b@x", forKey: "email")
            _ = try context.insertObject(entityName: "User")  // nil email
            _ = try context.insertObject(entityName: "User")  // nil email
            try context.save()
            let c = try context.insertObject(entityName: "User")
            try c.setValue("b@x", forKey: "email")
            let stored = #expect(throws: ObjectGraph.ValidationError.self) { try context.save() }
            #expect(stored?.violations.count == 1)
            // Freeing the value in the same save makes it available.
            try b.setValue("c@x", forKey: "email")
            try context.save()
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "User")) == 5)
        }
    }
}
