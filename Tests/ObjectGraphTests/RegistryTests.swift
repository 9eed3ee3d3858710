import Foundation
@testable import ObjectGraph
import ObjectGraphInMemory
import Synchronization
import Testing

/// An object the app lets go of is gone for its context, as in Core Data (the registry holds
/// objects strongly and counts one only it holds as released), and the entries of such objects
/// are swept when the registry has grown.
@Suite("Registry")
struct RegistryTests {
    static func notes(_ count: Int) throws -> (PersistentContainer, [ObjectID]) {
        let model = try ManagedObjectModel { m in m.entity("Note") { e in e.attribute("n", .integer64) } }
        let container = try PersistentContainer(model: model, stores: [.inMemory()])
        let writer = container.newBackgroundContext()
        let ids = try writer.performAndWait {
            let notes = try (0..<count).map { index in
                let note = try writer.insertObject(entityName: "Note")
                try note.setValue(Int64(index), forKey: "n")
                return note
            }
            try writer.save()
            return notes.map(\.objectID)
        }
        return (container, ids)
    }

    @Test("faults the app drops are swept: the registry stays bounded however many IDs are visited")
    func droppedObjectsAreSwept() throws {
        let (container, ids) = try Self.notes(20_000)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            var largest = 0
            for id in ids {
                _ = try context.existingObject(with: id).value(forKey: "n")
                largest = max(largest, context.registry.count)
            }
            #expect(largest <= 2 * 4096 + 1, "the registry grew to \(largest) entries")
            #expect(context.registeredObjects.isEmpty, "nothing the app holds")
        }
    }

    @Test("a run of fetches whose objects the app drops keeps the registry bounded")
    func fetchRunsAreSwept() throws {
        let (container, _) = try Self.notes(6_000)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            var largest = 0
            for start in stride(from: 0, to: 6_000, by: 100) {
                var request = FetchRequest<ManagedObject>(entityName: "Note", predicate: .key("n") >= start && .key("n") < start + 100)
                request.returnsObjectsAsFaults = false
                let fetched = try context.fetch(request).count
                #expect(fetched == 100)
                largest = max(largest, context.registry.count)
            }
            // Each fetch registers 100 objects the loop then drops; without sweeps between
            // fetches the registry would end with all 6,000 entries.
            #expect(largest <= 4096 + 100, "the registry grew to \(largest) entries")
        }
    }

    @Test("an object only the registry holds counts as gone: it is dropped, and a new one loads the current row")
    func releasedObjectIsReplaced() throws {
        let (container, ids) = try Self.notes(1)
        let reader = container.newBackgroundContext()
        let writer = container.newBackgroundContext()
        weak var first: ManagedObject?
        try reader.performAndWait {
            let note = try reader.existingObject(with: ids[0])
            #expect(try note.value(forKey: "n") as? Int64 == 0)
            first = note
            #expect(first != nil)
        }
        try writer.performAndWait {
            try writer.existingObject(with: ids[0]).setValue(Int64(7), forKey: "n")
            try writer.save()
        }
        try reader.performAndWait {
            #expect(reader.registeredObject(for: ids[0]) == nil, "the app let it go")
            #expect(first == nil, "and looking it up dropped it")
            let again = try reader.existingObject(with: ids[0])
            #expect(try again.value(forKey: "n") as? Int64 == 7, "a new object, with the current row")
        }
    }

    @Test("with retainsRegisteredObjects the registry keeps everything it registered")
    func retainingContextKeepsObjects() throws {
        let (container, ids) = try Self.notes(5_000)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            context.retainsRegisteredObjects = true
            for id in ids { _ = try context.existingObject(with: id) }
            #expect(context.registeredObjects.count == 5_000)
        }
    }

    @Test("turning retainsRegisteredObjects off lets go of what it held; objects with changes stay")
    func retainingTurnedOffReleases() throws {
        let (container, ids) = try Self.notes(100)
        let context = container.newBackgroundContext()
        weak var released: ManagedObject?
        try context.performAndWait {
            context.retainsRegisteredObjects = true
            for id in ids { _ = try context.existingObject(with: id).value(forKey: "n") }
            try context.existingObject(with: ids[1]).setValue(Int64(-1), forKey: "n")
            released = context.registeredObject(for: ids[0])
            #expect(context.registeredObjects.count == 100, "held while retaining")
            context.retainsRegisteredObjects = false
            #expect(context.registeredObjects.map(\.objectID) == [ids[1]], "only the object with changes is held now")
            #expect(context.registeredObject(for: ids[0]) == nil, "the others count as let go")
        }
        #expect(released == nil, "and are freed")
        let writer = container.newBackgroundContext()
        try writer.performAndWait {
            try writer.existingObject(with: ids[2]).setValue(Int64(200), forKey: "n")
            try writer.save()
        }
        try context.performAndWait {
            let n = try context.existingObject(with: ids[2]).value(forKey: "n") as? Int64
            #expect(n == 200, "a let-go object comes back with the stored values")
            try context.save()
        }
        try writer.performAndWait {
            writer.reset()
            let n = try writer.existingObject(with: ids[1]).value(forKey: "n") as? Int64
            #expect(n == -1, "the kept change was saved")
        }
    }

    @Test("turning retainsRegisteredObjects on holds the objects already registered")
    func retainingTurnedOnHoldsRegistered() throws {
        let (container, ids) = try Self.notes(3)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            var held: [ManagedObject]? = try ids.map { try context.existingObject(with: $0) }
            context.retainsRegisteredObjects = true
            held = nil
            #expect(held == nil && context.registeredObjects.count == 3, "the context holds them now")
        }
    }

    /// Objects of a one-entity model, each under a permanent ID, without a context.
    static func looseObjects(_ count: Int, firstKey: Int = 1) throws -> [ManagedObject] {
        let model = try ManagedObjectModel { m in m.entity("Note") { e in e.attribute("n", .integer64) } }
        let entity = try model.requireEntity("Note")
        return (0..<count).map { index in
            let object = ManagedObject(entity: entity, insertInto: nil)
            object.objectID = ObjectID(entityName: "Note", storeIdentifier: "S", primaryKey: Int64(index + firstKey))
            return object
        }
    }

    @Test("a sweep drops released objects, compacts, and every held object stays under its ID")
    func sweepCompactsAndKeepsPositions() throws {
        var objects = try Self.looseObjects(1_000)
        var registry = ObjectRegistry()
        for object in objects { registry.insert(object) }
        let ids = objects.map(\.objectID)
        do {
            let set = Set(objects)
            #expect(set.count == 1_000 && objects.allSatisfy(set.contains), "objects hash by identity")
        }
        weak let released = objects[1]
        // Keep every 10th object; the rest are held only by the registry.
        objects = stride(from: 0, to: objects.count, by: 10).map { objects[$0] }
        #expect(released != nil, "the registry still holds it")
        registry.sweep()
        #expect(released != nil, "swept, but kept until the caller takes the dropped objects")
        #expect(registry.dropped.count == 900)
        _ = registry.takeDropped()
        #expect(released == nil, "deallocated once taken")
        #expect(registry.dropped.isEmpty)
        #expect(registry.count == 100)
        for (offset, id) in ids.enumerated() {
            let found = registry.live(id)
            if offset % 10 == 0 {
                #expect(found === objects[offset / 10], "\(id) found after compaction")
            } else {
                #expect(found == nil)
            }
        }
        // New entries reuse the storage and are found too.
        let more = try Self.looseObjects(200, firstKey: 1_001)
        for object in more { registry.insert(object) }
        #expect(registry.count == 300)
        #expect(more.allSatisfy { registry.live($0.objectID) === $0 })
        #expect(registry.liveObjects().count == 300)
    }

    @Test("new objects registered pending are found under their IDs through a sweep's compaction, a partial re-keying, a removal and emptying")
    func pendingRegistrations() throws {
        var loaded = try Self.looseObjects(100)
        let entity = loaded[0].entity
        var registry = ObjectRegistry()
        for object in loaded { registry.insert(object) }
        let inserted = (0..<50).map { _ in ManagedObject(entity: entity, insertInto: nil) }
        for object in inserted { registry.insertPending(object) }
        #expect(inserted.allSatisfy { $0.objectID.isTemporary })
        #expect(registry.count == 150)
        // 90 loaded objects released: the sweep drops them and compacts the storage, moving
        // the pending objects' positions.
        loaded = stride(from: 0, to: 100, by: 10).map { loaded[$0] }
        registry.sweep()
        _ = registry.takeDropped()
        #expect(registry.count == 60)
        #expect(inserted.allSatisfy { registry.live($0.objectID) === $0 }, "pending objects found after compaction")
        #expect(loaded.allSatisfy { registry.live($0.objectID) === $0 })
        // More pending ones, then ten of them made permanent (the save's bulk path).
        let more = (0..<20).map { _ in ManagedObject(entity: entity, insertInto: nil) }
        for object in more { registry.insertPending(object) }
        let saved = Array(more.prefix(10))
        let old = saved.map(\.objectID)
        let new = (0..<10).map { ObjectID(entityName: "Note", storeIdentifier: "S", primaryKey: Int64(5_000 + $0)) }
        for (object, id) in zip(saved, new) { object.objectID = id }
        registry.rekey(saved, oldIDs: old, map: TemporaryIDMap(old, to: new))
        #expect(saved.allSatisfy { registry.live($0.objectID) === $0 }, "found under their permanent IDs")
        #expect(old.allSatisfy { registry.live($0) == nil }, "not under their temporary ones")
        #expect(more.suffix(10).allSatisfy { registry.live($0.objectID) === $0 }, "the others still under theirs")
        #expect(registry.count == 80)
        #expect(registry.liveObjects().count == 80, "each object registered once")
        // A pending object removed by its temporary ID (a rollback) is gone.
        let rolledBack = ManagedObject(entity: entity, insertInto: nil)
        registry.insertPending(rolledBack)
        registry.remove(rolledBack.objectID)
        _ = registry.takeDropped()
        #expect(registry.live(rolledBack.objectID) == nil)
        #expect(registry.count == 80)
        let emptied = registry.removeAll()
        #expect(emptied.objects.compactMap { $0 }.count == 80)
        #expect(registry.count == 0 && registry.live(inserted[0].objectID) == nil)
    }

    @Test("a sweep releasing a few entries removes just theirs, even one whose object's ID moved on")
    func sweepOfAFewKeepsTheRest() throws {
        var objects = try Self.looseObjects(1_000)
        var registry = ObjectRegistry()
        for object in objects { registry.insert(object) }
        let ids = objects.map(\.objectID)
        // The object at 5 takes another ID without its entry being moved: its entry is still
        // under its old ID, and has to go when the object is released.
        objects[5].objectID = ObjectID(entityName: "Note", storeIdentifier: "S", primaryKey: 50_000)
        let kept = objects.indices.filter { $0 % 10 != 5 }
        objects = kept.map { objects[$0] }
        registry.sweep()
        #expect(registry.takeDropped().count == 100)
        #expect(registry.count == 900)
        for (offset, id) in ids.enumerated() {
            if offset % 10 == 5 {
                #expect(registry.live(id) == nil, "\(id) released")
            } else {
                #expect(registry.live(id) === objects[kept.firstIndex(of: offset)!], "\(id) kept")
            }
        }
        #expect(registry.liveObjects().count == 900)
    }

    @Test("removing many entries at once, a few or most of them, leaves exactly the others")
    func bulkRemoval() throws {
        for removedCount in [3, 90] {
            let objects = try Self.looseObjects(100)
            var registry = ObjectRegistry()
            for object in objects { registry.insert(object) }
            let removed = objects.prefix(removedCount).map(\.objectID)
            registry.remove(removed)
            #expect(registry.count == 100 - removedCount, "\(removedCount) removed")
            #expect(registry.takeDropped().count == removedCount)
            for (index, object) in objects.enumerated() {
                if index < removedCount {
                    #expect(registry.live(object.objectID) == nil, "\(object.objectID) removed")
                } else {
                    #expect(registry.live(object.objectID) === object, "\(object.objectID) kept")
                }
            }
            // The freed positions are used again.
            let more = try Self.looseObjects(5, firstKey: 500)
            for object in more { registry.insert(object) }
            #expect(more.allSatisfy { registry.live($0.objectID) === $0 })
            #expect(registry.count == 105 - removedCount)
        }
    }

    @Test("re-keying moves an entry; removing and emptying let objects only the registry held go")
    func rekeyRemoveAndEmpty() throws {
        let objects = try Self.looseObjects(3)
        var registry = ObjectRegistry()
        for object in objects { registry.insert(object) }
        let old = objects[0].objectID
        let new = ObjectID(entityName: "Note", storeIdentifier: "S", primaryKey: 99)
        objects[0].objectID = new
        registry.rekey(old, to: new, object: objects[0])
        #expect(registry.live(old) == nil)
        #expect(registry.live(new) === objects[0])
        #expect(registry.count == 3)
        registry.remove(objects[1].objectID)
        #expect(registry.live(objects[1].objectID) == nil)
        #expect(registry.count == 2)

        var onlyRegistered: [ManagedObject]? = try Self.looseObjects(5, firstKey: 10)
        weak let dropped = onlyRegistered?[4]
        for object in onlyRegistered ?? [] { registry.insert(object) }
        onlyRegistered = nil
        #expect(dropped != nil)
        var emptied: (objects: [ManagedObject?], dropped: [ManagedObject])? = registry.removeAll()
        #expect(emptied?.objects.count == 5 + 2, "every slot in registration order: \(emptied?.objects.count ?? -1)")
        #expect(emptied?.dropped.count == 1, "and the removed object: \(emptied?.dropped.count ?? -1)")
        #expect(dropped != nil, "held by what removeAll returned")
        emptied = nil
        #expect(dropped == nil, "releasing what the registry returned deallocates what only it held")
        #expect(registry.count == 0)
        #expect(objects[2].objectID.primaryKey == 3, "objects the app holds are untouched")
    }

    @Test("an object whose deinit uses its context is released outside every registry change")
    func deinitMayUseTheContext() throws {
        let model = try ManagedObjectModel { m in m.entity("Note", as: ContextTouchingNote.self) { e in e.attribute("n", .integer64) } }
        let container = try PersistentContainer(model: model, stores: [.inMemory()])
        let context = container.newBackgroundContext()
        let before = ContextTouchingNote.deinits.load(ordering: .relaxed)
        try context.performAndWait {
            let ids = try (0..<6_000).map { index -> ObjectID in
                let note = try context.insertObject(entityName: "Note")
                try note.setValue(Int64(index), forKey: "n")
                return note.objectID
            }
            try context.save()
            context.reset()
            // Faults the app drops at once: dropped on the next registration, by sweeps, and
            // when looked up again; then the rest at a reset. Each deinit reads the registry.
            for id in ids { _ = context.object(with: id) }
            for id in ids.prefix(100) { #expect(context.registeredObject(for: id) == nil) }
            context.reset()
        }
        #expect(ContextTouchingNote.deinits.load(ordering: .relaxed) - before >= 6_000)
    }

    @Test("a save re-keys its inserted objects in the registry, one by one or rebuilding the map, with the same answers")
    func savesRekeyBothWays() throws {
        let (container, ids) = try Self.notes(300)
        for (held, inserted) in [(300, 10), (0, 200)] {
            // 300 loaded objects and 10 inserts take the one-by-one path; 200 inserts alone
            // rebuild the map.
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let loaded = try ids.prefix(held).map { try context.existingObject(with: $0) }
                let notes = try (0..<inserted).map { index -> ManagedObject in
                    let note = try context.insertObject(entityName: "Note")
                    try note.setValue(Int64(1_000 + index), forKey: "n")
                    return note
                }
                let temporary = notes.map(\.objectID)
                try context.save()
                for (note, old) in zip(notes, temporary) {
                    #expect(!note.objectID.isTemporary)
                    #expect(context.registeredObject(for: note.objectID) === note, "registered under its permanent ID")
                    #expect(context.registeredObject(for: old) == nil, "no longer under its temporary ID")
                    #expect(try context.existingObject(with: note.objectID) === note)
                }
                for object in loaded { #expect(context.registeredObject(for: object.objectID) === object, "objects not saved keep their entries") }
                #expect(context.registry.count == held + inserted)
            }
        }
        // The map rebuilt with a permanent ID already registered: the re-keyed object wins and
        // the other entry's object is dropped, as in the one-by-one path.
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let note = try context.insertObject(entityName: "Note")
            let old = note.objectID
            let permanent = ids[0]
            let stale = try context.existingObject(with: permanent)
            note.objectID = permanent
            context.registry.rekey([note], oldIDs: [old], map: TemporaryIDMap([old], to: [permanent]))
            #expect(context.registry.dropped.contains { $0 === stale }, "the entry it replaced is dropped")
            #expect(context.registry.count == 1)
            #expect(context.registeredObject(for: permanent) === note)
            note.objectID = old
            context.registry.remove(permanent)
            context.releaseDroppedObjects()

            // An object whose temporary ID has no entry is registered under its new one,
            // replacing the object there, on both paths.
            context.registry.remove(old)
            context.releaseDroppedObjects()
            let other = try context.existingObject(with: permanent)
            note.objectID = permanent
            context.registry.rekey([note], oldIDs: [old], map: TemporaryIDMap([old], to: [permanent]))
            #expect(context.registry.dropped.contains { $0 === other }, "the object it replaced is dropped")
            #expect(context.registeredObject(for: permanent) === note, "registered under its new ID")
            note.objectID = old
            context.registry.remove(permanent)
            context.releaseDroppedObjects()
        }
    }
}

/// The cache of reached objects in front of the registry (see `ReachedObjectCache`).
@Suite("Reached-object cache")
struct ReachedObjectCacheTests {
    @Test("an entry answers only its own ID, and only until the registry drops or replaces an entry")
    func entriesAndGenerations() throws {
        let (container, ids) = try RegistryTests.notes(3)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let note = try context.existingObject(with: ids[0])
            var cache = ReachedObjectCache()
            #expect(cache.object(for: ids[0], generation: 0) == nil, "empty")
            cache.store(note, generation: 7)
            #expect(cache.object(for: ids[0], generation: 7) === note)
            #expect(cache.object(for: ids[0], generation: 8) == nil, "the registry changed since")
            #expect(cache.object(for: ids[1], generation: 7) == nil, "another ID")
            let slots = (0..<ReachedObjectCache.capacity + 1).map { ObjectID(entityName: "Note", storeIdentifier: "s", primaryKey: Int64($0)) }
            for id in slots { #expect(cache.object(for: id, generation: 7) == nil) }
            cache.removeAll()
            #expect(cache.object(for: ids[0], generation: 7) == nil, "emptied")

            // The registry's generation moves whenever an entry is dropped or replaced, and
            // not when one is added.
            let start = context.registry.generation
            _ = try context.existingObject(with: ids[1])
            #expect(context.registry.generation == start, "an added entry keeps it")
            context.registry.remove(ids[1])
            context.releaseDroppedObjects()
            #expect(context.registry.generation != start, "a dropped entry moves it")
            let before = context.registry.generation
            _ = try context.insertObject(entityName: "Note")
            #expect(context.registry.generation == before, "an inserted object's entry keeps it")
        }
    }

    @Test("a reached object is the registered one across its save, a reset and its deletion")
    func reachedAcrossSaveResetDelete() throws {
        let (container, context) = try makeContext { m in
            m.entity("Chat") { e in
                e.attribute("title", .string)
                e.toMany("messages", "Message", inverse: "chat")
            }
            m.entity("Message") { e in e.toOne("chat", "Chat", inverse: "messages") }
        }
        try context.performAndWait {
            let chat = try context.insertObject(entityName: "Chat")
            try chat.setValue("t", forKey: "title")
            let message = try context.insertObject(entityName: "Message")
            try message.setValue(chat, forKey: "chat")
            #expect(try message.value(forKey: "chat") as? ManagedObject === chat)
            try context.save()
            #expect(!chat.objectID.isTemporary)
            let reached = try #require(try message.value(forKey: "chat") as? ManagedObject)
            #expect(reached === chat, "the same object under its permanent ID")
            #expect(context.registeredObject(for: chat.objectID) === reached)

            let messageID = message.objectID, chatID = chat.objectID
            context.reset()
            let again = try context.existingObject(with: messageID)
            let chatAgain = try #require(try again.value(forKey: "chat") as? ManagedObject)
            #expect(chatAgain !== chat, "a reset lets go of what was reached before it")
            #expect(chatAgain.objectID == chatID)
            #expect(context.registeredObject(for: chatID) === chatAgain)
            #expect(try chatAgain.value(forKey: "title") as? String == "t")

            context.delete(chatAgain)
            try context.save()
            #expect(try again.value(forKey: "chat") == nil, "nullified with the deleted chat")
            let fresh = container.newBackgroundContext()
            try fresh.performAndWait {
                let message = try fresh.existingObject(with: messageID)
                #expect(try message.value(forKey: "chat") == nil)
            }
        }
    }
}

/// Reads its context's registered objects while being deallocated.
final class ContextTouchingNote: ManagedObject {
    static let deinits = Atomic<Int>(0)
    deinit {
        if let context = managedObjectContext { _ = context.registeredObjects.count }
        Self.deinits.add(1, ordering: .relaxed)
    }
}

