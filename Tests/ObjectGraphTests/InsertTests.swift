import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Testing

/// `insert(_:)` of an object the context already holds: left alone when it is alive there
/// (inserting it again used to reset its values and queue its row for a second insert), refused
/// with a typed error when it is deleted there, or when it was saved and then let go.
@Suite("Inserting objects again")
struct InsertTests {
    static func build(_ m: ModelBuilder) {
        m.entity("Note") { e in e.attribute("n", .integer64) }
    }

    /// A new note holding `n`, inserted into `context`.
    static func note(_ n: Int64, in context: ManagedObjectContext) throws -> ManagedObject {
        let note = try context.insertObject(entityName: "Note")
        try note.setValue(n, forKey: "n")
        return note
    }

    @Test("an object fetched or saved in the context keeps its values and is saved once")
    func insertingAnObjectAlreadyInTheContext() throws {
        let (container, context) = try makeContext(Self.build)
        try context.performAndWait {
            let note = try Self.note(7, in: context)
            try context.insert(note)
            #expect(context.insertedObjects.count == 1, "an inserted object is inserted once")
            try context.save()
            try context.insert(note)
            #expect(!note.isInserted && !context.hasChanges, "a saved object stays saved")
            #expect(try note.value(forKey: "n") as? Int64 == 7)
            try context.save()
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Note")) == 1)
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let fetched = try #require(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Note")).first)
            try reader.insert(fetched)
            #expect(!fetched.isInserted && !reader.hasChanges)
            #expect(try fetched.value(forKey: "n") as? Int64 == 7)
        }
    }

    @Test("an object deleted in the context is refused with objectDeleted; undoing the deletion keeps it")
    func insertingADeletedObject() throws {
        let (_, context) = try makeContext(Self.build)
        try context.performAndWait {
            context.undoStack = ContextUndoStack()
            let saved = try Self.note(1, in: context)
            try context.save()
            let fresh = try Self.note(2, in: context)
            context.delete(saved)
            context.delete(fresh)
            for object in [saved, fresh] {
                let error = try #require(throws: ObjectGraphError.self) { try context.insert(object) }
                #expect(error.code == .objectDeleted)
                #expect(error.objectID == object.objectID)
                #expect(error.description.contains("deleted in this context"))
            }
            #expect(saved.isDeleted && !saved.isInserted, "the refused insert changed nothing")
            try context.undo()
            #expect(!saved.isDeleted)
            #expect(try saved.value(forKey: "n") as? Int64 == 1)
        }
    }

    @Test("a saved object let go by its context is refused with objectInaccessible; an unsaved one is inserted again")
    func insertingAnObjectLetGo() throws {
        let (container, context) = try makeContext(Self.build)
        try context.performAndWait {
            let kept = try Self.note(1, in: context)
            let gone = try Self.note(2, in: context)
            try context.save()
            context.delete(gone)
            try context.save()
            context.reset()
            for object in [kept, gone] {
                let error = try #require(throws: ObjectGraphError.self) { try context.insert(object) }
                #expect(error.code == .objectInaccessible)
                #expect(error.description.contains("let go by its context"))
                #expect(!object.isInserted)
            }
            #expect(!context.hasChanges)
            // Never saved: rolled back, it is a new object again.
            let draft = try Self.note(3, in: context)
            context.rollback()
            #expect(draft.managedObjectContext == nil)
            try context.insert(draft)
            #expect(draft.isInserted)
            try draft.setValue(Int64(3), forKey: "n")
            try context.save()
        }
        let reader = container.newBackgroundContext()
        let stored = try reader.performAndWait {
            try reader.fetch(FetchRequest<ManagedObject>(entityName: "Note", sortKeys: [SortKey("n")])).compactMap { (try? $0.value(forKey: "n")) as? Int64 }
        }
        #expect(stored == [1, 3])
    }
}
