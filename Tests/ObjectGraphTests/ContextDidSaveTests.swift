import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Testing

@Suite("Did-save payload")
struct ContextDidSaveTests {
    /// The payload of the next save of `context`.
    static func payload(of context: ManagedObjectContext, _ body: () throws -> Void) throws -> ContextDidSave? {
        nonisolated(unsafe) var saved: ContextDidSave?
        let observer = NotificationCenter.default.addObserver(forName: .objectGraphContextDidSave, object: context, queue: nil) { note in
            saved = note.userInfo?[ContextDidSave.key] as? ContextDidSave
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try body()
        return saved
    }

    @Test("IDs come in save order, each once; the sets and equality ignore order")
    func listsAndSets() throws {
        let (_, context) = try makeContext { m in
            m.entity("Note") { e in e.attribute("text", .string) }
        }
        try context.performAndWait {
            var notes: [ManagedObject] = []
            let first = try #require(try Self.payload(of: context) {
                for text in ["a", "b", "c"] {
                    let note = try context.insertObject(entityName: "Note")
                    try note.setValue(text, forKey: "text")
                    notes.append(note)
                }
                try context.save()
            })
            let ids = notes.map(\.objectID)
            #expect(first.insertedIDs == ids)
            #expect(first.inserted == Set(ids) && first.updated.isEmpty && first.deletedIDs.isEmpty)
            let second = try #require(try Self.payload(of: context) {
                try notes[2].setValue("C", forKey: "text")
                try notes[0].setValue("A", forKey: "text")
                context.delete(notes[1])
                try context.save()
            })
            #expect(second.updatedIDs == [ids[0], ids[2]] && second.deletedIDs == [ids[1]])
            #expect(second.updated == [ids[2], ids[0]] && second.deleted == [ids[1]] && second.insertedIDs.isEmpty)
            #expect(second != first && second == second)
            #expect(Set([first, second, first]).count == 2)
        }
    }

    @Test("deletions are saved in key order however they were made, undone ones left out")
    func deletionOrder() throws {
        let (_, context) = try makeContext { m in
            m.entity("Note") { e in e.attribute("text", .string) }
        }
        context.undoStack = ContextUndoStack()
        try context.performAndWait {
            var notes: [ManagedObject] = []
            for text in ["a", "b", "c", "d", "e", "f"] {
                let note = try context.insertObject(entityName: "Note")
                try note.setValue(text, forKey: "text")
                notes.append(note)
            }
            try context.save()
            let ids = notes.map(\.objectID)
            #expect(ids.map(\.primaryKey) == (1...6).map { Optional(Int64($0)) })
            // Out of order, and one deletion undone: the deleted list has a hole and is not in key order.
            let first = try #require(try Self.payload(of: context) {
                context.delete(notes[4])
                context.delete(notes[1])
                try context.processPendingChanges()
                context.delete(notes[3])
                try context.processPendingChanges()
                try context.undo()
                context.delete(notes[5])
                try context.save()
            })
            #expect(first.deletedIDs == [ids[1], ids[4], ids[5]])
            #expect(!notes[3].isDeleted && notes[3].managedObjectContext === context)
            // Out of order with nothing undone: taken from the log, sorted all the same.
            let second = try #require(try Self.payload(of: context) {
                context.delete(notes[2])
                context.delete(notes[0])
                try context.save()
            })
            #expect(second.deletedIDs == [ids[0], ids[2]])
        }
    }
}
