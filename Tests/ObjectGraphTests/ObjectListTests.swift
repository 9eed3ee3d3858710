import Foundation
@testable import ObjectGraph
import ObjectGraphInMemory
import Testing

/// A context's inserted and deleted objects keep list order through removals, compaction and
/// re-insertion, and a save still orders them by creation (inserts) or key (deletions).
@Suite("Inserted and deleted objects")
struct InsertedObjectsTests {
    static func notes(_ count: Int) throws -> [ManagedObject] {
        let model = try ManagedObjectModel { m in m.entity("Note") { e in e.attribute("n", .integer64) } }
        let entity = try model.requireEntity("Note")
        return (0..<count).map { _ in ManagedObject(entity: entity, insertInto: nil) }
    }

    @Test("insertion order survives removals, compaction and inserting again")
    func orderAndMembership() throws {
        let objects = try Self.notes(300)
        var list = InsertedObjects()
        for object in objects { list.insert(object) }
        list.insert(objects[7])
        #expect(list.count == 300, "inserting a member again adds nothing")
        // Removing two thirds compacts the list (holes over half of it).
        let removed = objects.indices.filter { $0 % 3 != 0 }
        for index in removed { list.remove(objects[index]) }
        list.remove(objects[1])
        let kept = objects.indices.filter { $0 % 3 == 0 }.map { objects[$0] }
        #expect(list.count == kept.count)
        #expect(Array(list).map(ObjectIdentifier.init) == kept.map(ObjectIdentifier.init))
        #expect(kept.allSatisfy(list.contains), "positions were renumbered by the compaction")
        #expect(!list.contains(objects[1]))
        // A removed object comes back at the end.
        list.insert(objects[1])
        #expect(Array(list).last === objects[1])
        #expect(list.count == kept.count + 1)
        list.removeAll()
        #expect(list.isEmpty && !list.contains(objects[0]))
        list.insert(objects[0])
        #expect(Array(list).count == 1, "a stale position from before removeAll is not trusted")
    }

    @Test("a loop over the list is not disturbed by changes made during it")
    func iterationWorksOnACopy() throws {
        let objects = try Self.notes(10)
        var list = InsertedObjects()
        for object in objects.prefix(5) { list.insert(object) }
        var seen = 0
        for object in list {
            seen += 1
            list.remove(object)
            list.insert(objects[5 + seen - 1])
        }
        #expect(seen == 5)
        #expect(Array(list).map(ObjectIdentifier.init) == objects.suffix(5).map(ObjectIdentifier.init))
    }

    @Test("a save orders inserts by creation, also when they were inserted in another order")
    func saveOrderIsCreationOrder() throws {
        let model = try ManagedObjectModel { m in m.entity("Note") { e in e.attribute("n", .integer64) } }
        let entity = try model.requireEntity("Note")
        let container = try PersistentContainer(model: model, stores: [.inMemory()])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let created = (0..<100).map { _ in ManagedObject(entity: entity, insertInto: nil) }
            // Inserted in reverse: the insertion order is not the save order.
            for object in created.reversed() { try context.insert(object) }
            #expect(context.insertedInSaveOrder().map(\.objectID) == created.map(\.objectID))
            for (n, object) in created.enumerated() { try object.setValue(Int64(n), forKey: "n") }
            try context.save()
            // In order of creation, inserted forward: the insertion order is the save order.
            let forward = (0..<100).map { _ in ManagedObject(entity: entity, insertInto: context) }
            #expect(context.insertedInSaveOrder().map(ObjectIdentifier.init) == forward.map(ObjectIdentifier.init))
            context.rollback()
            var request = FetchRequest<ManagedObject>(entityName: "Note")
            request.sortKeys = [SortKey("n")]
            let keys = try context.fetch(request).map { $0.objectID.primaryKey ?? -1 }
            #expect(keys == keys.sorted() && keys.count == 100)
        }
    }

    @Test("an object's places in the inserted and the deleted list are kept apart")
    func listsKeepTheirOwnPositions() throws {
        let objects = try Self.notes(5)
        var inserted = InsertedObjects()
        var deleted = DeletedObjects()
        for object in objects { inserted.insert(object) }
        for object in objects.reversed() { deleted.insert(object) }
        #expect(objects.allSatisfy { inserted.contains($0) && deleted.contains($0) })
        inserted.remove(objects[0])
        #expect(!inserted.contains(objects[0]) && deleted.contains(objects[0]))
        #expect(Array(deleted).map(ObjectIdentifier.init) == objects.reversed().map(ObjectIdentifier.init))
        var lent: [ObjectIdentifier] = []
        deleted.forEachUnretained { lent.append(ObjectIdentifier($0)) }
        #expect(lent == Array(deleted).map(ObjectIdentifier.init))
    }

    @Test("deletions: undone ones leave the list, fetches with pending changes skip the rest, the save deletes exactly them")
    func deletedObjectsThroughUndoFetchAndSave() throws {
        let model = try ManagedObjectModel { m in m.entity("Note") { e in e.attribute("n", .integer64) } }
        let container = try PersistentContainer(model: model, stores: [.inMemory()])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for n in 0..<40 { try ManagedObject(entity: try model.requireEntity("Note"), insertInto: context).setValue(Int64(n), forKey: "n") }
            try context.save()
            context.undoStack = ContextUndoStack()
            let notes = try context.fetch(FetchRequest<ManagedObject>(entityName: "Note", sortKeys: [SortKey("n")]))
            // Deleted from the highest down: the list's order is not the save order.
            for note in notes.reversed() where ((try? note.value(forKey: "n")) as? Int64 ?? 0) % 2 == 0 { context.delete(note) }
            try context.processPendingChanges()
            #expect(context.deletedObjects.count == 20)
            try context.undo()
            #expect(context.deletedObjects.isEmpty, "undoing the deletions empties the list")
            try context.redo()
            #expect(context.deletedObjects.count == 20)
            #expect(context.deletedInSaveOrder().map { $0.objectID.primaryKey ?? -1 } == notes.enumerated().filter { $0.offset % 2 == 0 }.map { $0.element.objectID.primaryKey ?? -1 })
            let visible = try context.fetch(FetchRequest<ManagedObject>(entityName: "Note", sortKeys: [SortKey("n")]))
            #expect(visible.compactMap { (try? $0.value(forKey: "n")) as? Int64 } == (0..<40).filter { $0 % 2 == 1 }.map(Int64.init))
            try context.save()
            #expect(context.deletedObjects.isEmpty)
            let fresh = container.newBackgroundContext()
            let stored = try fresh.performAndWait { try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Note", sortKeys: [SortKey("n")])).compactMap { (try? $0.value(forKey: "n")) as? Int64 } }
            #expect(stored == (0..<40).filter { $0 % 2 == 1 }.map(Int64.init))
        }
    }
}
