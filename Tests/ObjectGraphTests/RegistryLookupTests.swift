import Foundation
@testable import ObjectGraph
import ObjectGraphInMemory
import Testing

/// The registry's one-probe lookup (``ObjectRegistry/lookUpOrReserve(_:)``) and the objects a
/// fetch into an empty registry registers without entering their IDs
/// (``ObjectRegistry/appendUnindexed(_:)``): uniquing must hold across both, whichever
/// operation first needs the ID map.
@Suite("Registry lookups")
struct RegistryLookupTests {
    @Test("lookUpOrReserve answers a held object, reserves for a new ID, and reuses the entry of a released one")
    func lookUpOrReserve() throws {
        var objects = try RegistryTests.looseObjects(3)
        var registry = ObjectRegistry()
        registry.insert(objects[0])
        registry.insert(objects[2])
        if case .live(let found) = registry.lookUpOrReserve(objects[2].objectID) {
            #expect(found === objects[2])
        } else {
            Issue.record("a held object was not found")
        }
        #expect(registry.count == 2)
        // A new ID: a position is entered for it and filled by the caller.
        guard case .reserved(let position) = registry.lookUpOrReserve(objects[1].objectID) else {
            Issue.record("a new ID found an object")
            return
        }
        registry.fill(position, with: objects[1])
        #expect(registry.count == 3)
        #expect(registry.live(objects[1].objectID) === objects[1])
        // Released by the app: the lookup drops it and hands its entry over.
        let id = objects[0].objectID
        weak let released = objects[0]
        objects.removeFirst()
        guard case .reserved(let reused) = registry.lookUpOrReserve(id) else {
            Issue.record("a released object came back")
            return
        }
        #expect(registry.dropped.count == 1)
        _ = registry.takeDropped()
        #expect(released == nil, "the released object is gone")
        let replacement = ManagedObject(entity: objects[0].entity, insertInto: nil)
        replacement.objectID = id
        registry.fill(reused, with: replacement)
        #expect(registry.live(id) === replacement)
        #expect(registry.count == 3)
        #expect(registry.liveObjects().count == 3)
    }

    @Test("objects registered unindexed are found under their IDs by every operation that needs the map")
    func unindexedObjectsAreEnteredOnDemand() throws {
        var objects = try RegistryTests.looseObjects(500)
        var registry = ObjectRegistry()
        #expect(registry.isEmpty)
        registry.reserveUnindexed(objects.count)
        for object in objects { registry.appendUnindexed(object) }
        #expect(registry.count == 500 && !registry.isEmpty)
        #expect(registry.unindexedCount == 500, "no ID entered yet")
        // The first lookup enters them all.
        #expect(registry.live(objects[7].objectID) === objects[7])
        #expect(registry.unindexedCount == 0)
        #expect(objects.allSatisfy { registry.live($0.objectID) === $0 })

        // Each entering operation on a fresh batch: a lookup-or-reserve, an insert replacing one,
        // a removal, a sweep.
        func batch() throws -> (ObjectRegistry, [ManagedObject]) {
            let objects = try RegistryTests.looseObjects(100)
            var registry = ObjectRegistry()
            for object in objects { registry.appendUnindexed(object) }
            return (registry, objects)
        }
        do {
            var (registry, batch) = try batch()
            guard case .live(let found) = registry.lookUpOrReserve(batch[42].objectID) else {
                Issue.record("an unindexed object was not found")
                return
            }
            #expect(found === batch[42])
            #expect(registry.count == 100)
        }
        do {
            var (registry, batch) = try batch()
            let replacement = ManagedObject(entity: batch[0].entity, insertInto: nil)
            replacement.objectID = batch[3].objectID
            registry.insert(replacement)
            #expect(registry.live(batch[3].objectID) === replacement)
            #expect(registry.count == 100, "replaced, not added")
        }
        do {
            var (registry, batch) = try batch()
            registry.remove(batch[9].objectID)
            #expect(registry.live(batch[9].objectID) == nil)
            #expect(registry.count == 99)
        }
        do {
            var (registry, batch) = try batch()
            let kept = stride(from: 0, to: 100, by: 2).map { batch[$0] }
            batch = []
            registry.sweep()
            _ = registry.takeDropped()
            #expect(registry.count == 50)
            #expect(kept.allSatisfy { registry.live($0.objectID) === $0 })
        }
        objects = []
        _ = registry.removeAll()
        #expect(registry.isEmpty && registry.unindexedCount == 0)
    }

    @Test("a lookup in another namespace leaves unindexed objects unindexed, and uniquing holds for both namespaces")
    func otherNamespacesLeaveUnindexedObjects() throws {
        var objects = try RegistryTests.looseObjects(200)
        var registry = ObjectRegistry()
        registry.reserveUnindexed(objects.count)
        for object in objects { registry.appendUnindexed(object) }
        // The same entity and key in another store: another namespace, never one of them.
        func foreign(_ key: Int64) -> ManagedObject {
            let object = ManagedObject(entity: objects[0].entity, insertInto: nil)
            object.objectID = ObjectID(entityName: "Note", storeIdentifier: "T", primaryKey: key)
            return object
        }
        let stranger = foreign(5)
        #expect(stranger.objectID.namespace != objects[4].objectID.namespace && stranger.objectID.primaryKey == objects[4].objectID.primaryKey)
        #expect(registry.live(stranger.objectID) == nil, "not one of the unindexed objects")
        guard case .reserved(let position) = registry.lookUpOrReserve(stranger.objectID) else {
            Issue.record("another namespace's ID found an unindexed object")
            return
        }
        registry.fill(position, with: stranger)
        let other = foreign(7)
        registry.insert(other)
        #expect(registry.unindexedCount == 200, "lookups in another namespace enter nothing")
        #expect(registry.count == 202)
        // A sweep that drops nothing leaves them unindexed too.
        registry.sweep()
        #expect(registry.unindexedCount == 200 && registry.count == 202)
        // Each namespace still finds exactly its own object.
        #expect(registry.live(stranger.objectID) === stranger && registry.live(other.objectID) === other)
        #expect(registry.unindexedCount == 200)
        if case .live(let found) = registry.lookUpOrReserve(objects[4].objectID) {
            #expect(found === objects[4], "the unindexed object under its own ID")
        } else {
            Issue.record("an unindexed object was not found after lookups in another namespace")
        }
        #expect(registry.unindexedCount == 0 && registry.count == 202)
        #expect(objects.allSatisfy { registry.live($0.objectID) === $0 })
        #expect(registry.live(stranger.objectID) === stranger)

        // A sweep that drops an unindexed object enters the rest and keeps them findable.
        var (fresh, batch) = (ObjectRegistry(), try RegistryTests.looseObjects(50))
        for object in batch { fresh.appendUnindexed(object) }
        fresh.insert(foreign(1))
        let kept = Array(batch.dropFirst())
        batch = []
        fresh.sweep()
        _ = fresh.takeDropped()
        #expect(fresh.unindexedCount == 0)
        #expect(fresh.count == 49, "the released unindexed object and the released foreign one are gone")
        #expect(kept.allSatisfy { fresh.live($0.objectID) === $0 })
        objects = []
    }

    @Test("a sweep that finds every object released empties the registry, keeping nothing findable, and it fills again")
    func sweepOfEverythingStartsOver() throws {
        var registry = ObjectRegistry()
        var batch = try RegistryTests.looseObjects(300)
        let ids = batch.map(\.objectID)
        for object in batch[..<100] { registry.insert(object) }
        for object in batch[100...] { registry.appendUnindexed(object) }
        let generation = registry.generation
        weak let first = batch[0]
        batch = []
        registry.sweep()
        #expect(registry.isEmpty && registry.count == 0 && registry.unindexedCount == 0)
        #expect(registry.dropped.count == 300)
        _ = registry.takeDropped()
        #expect(first == nil, "the released objects are gone")
        #expect(registry.generation != generation, "cached reaches are invalidated")
        #expect(ids.allSatisfy { registry.live($0) == nil })
        // Registered again (unindexed, as a fetch into an empty registry does) and found.
        var again = try RegistryTests.looseObjects(50)
        registry.reserveUnindexed(again.count)
        for object in again { registry.appendUnindexed(object) }
        #expect(registry.count == 50)
        #expect(again.allSatisfy { registry.live($0.objectID) === $0 })
        // A sweep with one object still held keeps that one.
        let kept = again.removeLast()
        again = []
        registry.sweep()
        _ = registry.takeDropped()
        #expect(registry.count == 1 && registry.live(kept.objectID) === kept)
    }

    @Test("a save that deletes every registered object empties the registry; one object kept registered keeps its entry")
    func saveOfOnlyDeletionsEmptiesTheRegistry() throws {
        let (container, ids) = try RegistryTests.notes(40)
        for keepOne in [false, true] {
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let notes = ids[(keepOne ? 0 : 20)..<(keepOne ? 20 : 40)].map { context.object(with: $0) }
                // An object let go and swept leaves a vacant slot among the deleted ones.
                _ = context.object(with: ids[keepOne ? 39 : 0])
                context.sweepReleasedObjects()
                #expect(context.registry.slotCount == 21 && context.registry.count == 20)
                let deleted = keepOne ? Array(notes.dropLast()) : notes
                for note in deleted { context.delete(note) }
                let generation = context.registry.generation
                try context.save()
                #expect(context.registry.generation != generation, "cached reaches are invalidated")
                #expect(deleted.allSatisfy { $0.managedObjectContext == nil }, "deleted objects leave the context")
                #expect(deleted.allSatisfy { context.registeredObject(for: $0.objectID) == nil })
                if keepOne, let kept = notes.last {
                    #expect(context.registry.count == 1)
                    #expect(context.object(with: kept.objectID) === kept, "the kept object is still the registered one")
                    #expect(try kept.value(forKey: "n") as? Int64 == 19)
                } else {
                    #expect(context.registry.isEmpty)
                    #expect(context.registry.slotCount == 0, "the storage starts over, vacant slot and all")
                }
                // The deleted rows are gone from the store; a lookup makes a new fault.
                #expect(throws: ObjectGraphError.self) { try context.existingObject(with: deleted[0].objectID) }
            }
        }
    }

    @Test("a fetch into an empty context registers without entering IDs; the same objects come back from every later lookup and fetch")
    func fetchIntoAnEmptyContextUniques() throws {
        let (container, ids) = try RegistryTests.notes(300)
        for asFaults in [false, true] {
            let context = container.newBackgroundContext()
            try context.performAndWait {
                var request = FetchRequest<ManagedObject>(entityName: "Note")
                request.returnsObjectsAsFaults = asFaults
                request.sortKeys = [SortKey("n")]
                let fetched = try context.fetch(request)
                #expect(fetched.count == 300)
                #expect(context.registry.unindexedCount == 300, "registered without hashing (asFaults \(asFaults))")
                #expect(fetched.map(\.objectID) == ids, "in key order")
                // Every path that needs the map finds the fetched objects.
                #expect(context.object(with: ids[17]) === fetched[17])
                #expect(context.registry.unindexedCount == 0)
                #expect(context.registeredObject(for: ids[250]) === fetched[250])
                #expect(try context.existingObject(with: ids[0]) === fetched[0])
                let again = try context.fetch(request)
                #expect(zip(again, fetched).allSatisfy { $0 === $1 }, "a second fetch returns the same objects")
                #expect(context.registeredObjects.count == 300)
                #expect(try fetched[5].value(forKey: "n") as? Int64 == 5)
            }
        }
    }

    @Test("objects inserted into a fresh context and saved are registered under their permanent IDs without hashing, and found by every lookup")
    func savedInsertsUnique() throws {
        let (container, _) = try RegistryTests.notes(0)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let notes = try (0..<120).map { index in
                let note = try context.insertObject(entityName: "Note")
                try note.setValue(Int64(index), forKey: "n")
                return note
            }
            let temporary = notes[7].objectID
            try context.save()
            #expect(context.registry.unindexedCount == 120, "rekeyed without hashing")
            #expect(!notes[7].objectID.isTemporary)
            #expect(context.object(with: notes[7].objectID) === notes[7])
            #expect(context.registry.unindexedCount == 0)
            #expect(context.registeredObject(for: temporary) == nil, "the temporary ID names nothing now")
            var request = FetchRequest<ManagedObject>(entityName: "Note")
            request.sortKeys = [SortKey("n")]
            let fetched = try context.fetch(request)
            #expect(fetched.count == 120 && zip(fetched, notes).allSatisfy { $0 === $1 })
            // A second insert and save, with the first objects keyed: the usual rekeying.
            let more = try context.insertObject(entityName: "Note")
            try more.setValue(Int64(500), forKey: "n")
            try context.save()
            #expect(try context.existingObject(with: more.objectID) === more)
        }
    }

    @Test("objects of a fetch into an empty context are deleted, saved and let go like any others")
    func unindexedObjectsThroughDeleteAndSave() throws {
        let (container, ids) = try RegistryTests.notes(50)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Note")
            request.sortKeys = [SortKey("n")]
            var fetched = try context.fetch(request)
            #expect(context.registry.unindexedCount == 50)
            context.delete(fetched[3])
            try fetched[4].setValue(Int64(400), forKey: "n")
            try context.save()
            #expect(context.registeredObject(for: ids[3]) == nil, "the deleted object left the registry")
            #expect(context.registeredObject(for: ids[4]) === fetched[4])
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Note")) == 49)
            // Let go of all of them: a sweep drops every entry.
            let kept = fetched[10]
            fetched = []
            context.sweepReleasedObjects()
            #expect(context.registry.count == 1)
            #expect(context.object(with: ids[10]) === kept)
        }
    }
    @Test("a loop of fetches whose objects the app lets go registers each into an emptied registry; a kept object is still the one fetched again")
    func fetchLoopsStartOver() throws {
        let (container, ids) = try RegistryTests.notes(1_000)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            func fetch(_ start: Int) throws -> [ManagedObject] {
                var request = FetchRequest<ManagedObject>(entityName: "Note", predicate: .key("n") >= start && .key("n") < start + 100)
                request.returnsObjectsAsFaults = false
                request.sortKeys = [SortKey("n")]
                return try context.fetch(request)
            }
            for start in stride(from: 0, to: 1_000, by: 100) {
                let fetched = try fetch(start)
                #expect(fetched.count == 100)
                #expect(context.registry.unindexedCount == 100, "fetch at \(start) registered into an emptied registry")
                #expect(context.object(with: ids[start + 50]) === fetched[50])
            }
            // One object kept: the next fetch looks every ID up, and finds that one.
            let kept = try fetch(0)[10]
            let again = try fetch(0)
            #expect(context.registry.unindexedCount == 0, "not empty: every ID was looked up")
            #expect(again[10] === kept)
            #expect(again.count == 100 && Set(again.map(ObjectIdentifier.init)).count == 100)
        }
    }
}
