import Foundation
@testable import ObjectGraph
import Testing

/// An in-memory store with a chosen identifier: saves send each store's part in identifier order.
final class NamedMemoryStore: AtomicStore, @unchecked Sendable {
    static func description(_ identifier: String, configuration: String) -> StoreDescription {
        StoreDescription(type: "named-memory", configuration: configuration) { request in
            NamedMemoryStore(request: request, contents: .empty(for: request, identifier: identifier), capabilities: [])
        }
    }
}

@Suite("Saves spanning several stores")
struct SeveralStoresSaveTests {
    /// Stores A (Library: authors) and B (Scratch: notes), and a note saved in B.
    static func containerWithASavedNote() throws -> (PersistentContainer, ObjectID) {
        let model = try ContainerTests.twoConfigurationModel()
        let container = try PersistentContainer(model: model, stores: [
            NamedMemoryStore.description("A", configuration: "Library"), NamedMemoryStore.description("B", configuration: "Scratch"),
        ])
        let setup = container.newBackgroundContext()
        let noteID = try setup.performAndWait {
            let note = try setup.insertObject(entityName: "Note")
            try note.setValue("first", forKey: "text")
            try setup.save()
            return note.objectID
        }
        return (container, noteID)
    }

    /// A conflict in the second store's part, resolved by the merge policy: the save is sent
    /// again, but the first store already holds its part (an insert sent twice failed with
    /// "a row with that key exists", and the save could never succeed).
    @Test func aConflictInALaterStoreIsResolvedWithoutSendingTheLandedPartsAgain() throws {
        let (container, noteID) = try Self.containerWithASavedNote()
        let mine = container.newBackgroundContext()
        mine.mergePolicy = .objectTrumps
        try mine.performAndWait {
            try mine.existingObject(with: noteID).setValue("mine", forKey: "text")
            try mine.insertObject(entityName: "Author").setValue("Ursula", forKey: "name")  // store A: sent first
        }
        let other = container.newBackgroundContext()
        try other.performAndWait {
            try other.existingObject(with: noteID).setValue("theirs", forKey: "text")
            try other.save()
        }
        try mine.performAndWait {
            try mine.save()
            #expect(!mine.hasChanges)
        }
        let reader = container.newBackgroundContext()
        let (authors, text) = try reader.performAndWait {
            (try reader.count(for: FetchRequest<ManagedObject>(entityName: "Author")),
             try reader.existingObject(with: noteID).value(forKey: "text") as? String)
        }
        #expect(authors == 1)
        #expect(text == "mine")
    }
}
