import ObjectGraph
import Testing

@Suite("Context lifetime")
struct ContextLifetimeTests {
    @Test("objects do not keep their context alive, and one that outlives it sees none")
    func objectsOutliveTheirContext() throws {
        // (The helper's own context is dropped at once: the test watches a context of its own.)
        let container = try makeContext { m in
            m.entity("Note") { e in e.attribute("text", .string) }
        }.0
        var context: ManagedObjectContext? = container.newBackgroundContext()
        weak let gone = context
        let kept = try context!.performAndWait {
            let note = try context!.insertObject(entityName: "Note")
            try note.setValue("kept", forKey: "text")
            let other = try context!.insertObject(entityName: "Note")
            try other.setValue("dropped", forKey: "text")
            try context!.save()
            #expect(note.managedObjectContext === context)
            return note
        }
        #expect(kept.managedObjectContext != nil)
        context = nil
        #expect(gone == nil, "the objects let their context go")
        #expect(kept.managedObjectContext == nil)
        #expect(kept.objectID.primaryKey != nil && !kept.isFault)
    }
}
