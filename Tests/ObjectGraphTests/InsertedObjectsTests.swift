import Foundation
@testable import ObjectGraph
import ObjectGraphInMemory
import Testing

/// A context's inserted objects keep insertion order through removals, compaction and
/// re-insertion, and a save still orders them by creation when insertion order differs.
@Suite("Inserted objects")
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
}
