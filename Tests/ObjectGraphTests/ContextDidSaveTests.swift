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
}
