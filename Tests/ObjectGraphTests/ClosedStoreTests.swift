import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Testing

/// Which error a context reports for a store that is gone: ``StoreError`` `.closed` once a
/// store was removed (as ``PersistentContainer/close()`` removes them all), ``ObjectGraphError``
/// `noStore` when the coordinator never had one for the entity. The conformance scenario
/// `container.close.everyStoreOperationThrowsClosed` checks every operation on every store.
@Suite("Closed stores")
struct ClosedStoreTests {
    private func expectClosed(mentioning words: [String] = [], sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
        let error = #expect(throws: StoreError.self, sourceLocation: sourceLocation) { try body() }
        #expect(error?.code == .closed, "expected closed, got \(String(describing: error))", sourceLocation: sourceLocation)
        for word in words {
            #expect(error?.message.contains(word) == true, "'\(error?.message ?? "")' does not mention '\(word)'", sourceLocation: sourceLocation)
        }
    }

    @Test func aCoordinatorThatNeverHadAStoreStillReportsNoStore() throws {
        let coordinator = PersistentStoreCoordinator(model: try ContainerTests.twoConfigurationModel())
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            expectGraphError(.noStore, mentioning: ["Note"]) { _ = try context.fetch(FetchRequest<ManagedObject>(entityName: "Note")) }
            let note = try context.insertObject(entityName: "Note")
            try note.setValue("nowhere", forKey: "text")
            expectGraphError(.noStore, mentioning: ["Note"]) { try context.save() }
        }
    }

    @Test func removingOneOfTwoStoresReportsItsEntitiesClosedAndLeavesTheOtherWorking() throws {
        let model = try ContainerTests.twoConfigurationModel()
        let container = try PersistentContainer(model: model, stores: [.inMemory(configuration: "Library"), .inMemory(configuration: "Scratch")])
        defer { container.close() }
        let scratch = container.coordinator.persistentStores[1]
        let context = container.newBackgroundContext()
        let noteID = try context.performAndWait {
            let note = try context.insertObject(entityName: "Note")
            try note.setValue("kept", forKey: "text")
            let author = try context.insertObject(entityName: "Author")
            try author.setValue("A", forKey: "name")
            try context.save()
            context.reset()
            return note.objectID
        }
        container.coordinator.removePersistentStore(scratch)
        try context.performAndWait {
            // The message names the removed store (an in-memory store has no path: its identifier).
            expectClosed(mentioning: [scratch.identifier, "closed"]) { _ = try context.existingObject(with: noteID) }
            expectClosed(mentioning: ["Note"]) { _ = try context.count(for: FetchRequest<ManagedObject>(entityName: "Note")) }
            let note = try context.insertObject(entityName: "Note")
            try note.setValue("late", forKey: "text")
            expectClosed { try context.assign(note, to: scratch) }
            expectClosed { try context.save() }
            context.rollback()
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Author")) == 1, "the other store still answers")
        }
    }
}
