import Foundation
import OrderedCollections

/// Saving (rolling back and resetting are in ManagedObjectContext+Rollback.swift).
extension ManagedObjectContext {
    /// Saves every pending change in one atomic change set per store.
    ///
    /// Order of work: apply delete rules; post
    /// ``Foundation/Notification/Name/objectGraphContextWillSave`` (and process what its
    /// observers changed); call ``ManagedObject/willSave()`` once on every
    /// object the save stores, including those another object's `willSave` (or the delete
    /// rules it set off) inserted, changed or deleted, and save the changes made there too;
    /// validate everything and throw one ``ValidationError`` with every violation; give
    /// inserted objects permanent IDs; send the change set; on success update every object,
    /// call ``ManagedObject/didSave()`` and post
    /// ``Foundation/Notification/Name/objectGraphContextDidSave``. If validation or the store
    /// fails, the store is unchanged and the context keeps its changes (roll back or fix them).
    /// A save spanning several stores is atomic per store only: a version conflict in one
    /// store's part that the merge policy resolves is sent again to the stores that have not
    /// saved yet; any other failure of a later store's part leaves the earlier parts saved.
    public func save() throws {
        try checkQueue("save()")
        try processPendingChanges()
        guard !insertedStorage.isEmpty || !updatedStorage.isEmpty || !deletedStorage.isEmpty else { return }
        NotificationCenter.default.post(name: .objectGraphContextWillSave, object: self)
        // What an observer changed is processed as any change (its deletions' rules applied,
        // its own objects-did-change posted) before the save lists what it stores.
        try processPendingChanges()
        guard !insertedStorage.isEmpty || !updatedStorage.isEmpty || !deletedStorage.isEmpty else { return }
        try pairOneToOnes()
        try callWillSave()
        let dropped = dropReferencesToDiscardedInserts()

        let insertedBefore = insertedInSaveOrder()
        // A failed save keeps the context's changes: the references it dropped are put back
        // (they were recorded under these IDs, which a failure after the permanent IDs were
        // obtained has replaced).
        // (Kept only when there is something to put back: the IDs of a 100,000-object insert
        // would be an array copied for nothing.)
        let temporaryIDs = dropped == nil ? [] : insertedBefore.map(\.objectID)
        do {
            var inserted = insertedBefore
            var updated = inSaveOrder(updatedStorage)
            var deleted = deletedInSaveOrder()
            // Uniqueness conflicts are resolved here by the merge policy (+Uniqueness), which
            // may merge inserted objects away and so change the lists.
            try validateForSave(&inserted, &updated, &deleted)

            try checkOneWayToOnes(inserted, updated)
            try obtainPermanentIDs(for: inserted, areAllInserted: true)
            // Version conflicts are resolved by the merge policy (ManagedObjectContext+Conflicts).
            var races = 0
            while true {
                do {
                    try sendSave(inserted: inserted, updated: updated, deleted: deleted)
                    break
                } catch let race as UniquenessRaceLost {
                    // Another save stored a row with this save's values after it was validated:
                    // validated again, the save merges into that row (a third racer in the
                    // meantime makes it try again, a few times).
                    races += 1
                    guard races < 3 else { throw race.error }
                    inserted = insertedInSaveOrder()
                    updated = inSaveOrder(updatedStorage)
                    deleted = deletedInSaveOrder()
                    try validateForSave(&inserted, &updated, &deleted)
                }
            }
        } catch {
            if let dropped {
                let remapped = zip(temporaryIDs, insertedBefore).filter { $0.0.isTemporary && $0.0 != $0.1.objectID }
                if !remapped.isEmpty { dropped.remap(TemporaryIDMap(remapped.map(\.0), to: remapped.map(\.1.objectID))) }
                restoreUnrecorded(dropped)
            }
            throw error
        }
    }

    /// Checks that every to-one without an inverse that `objects` set names a stored row. Such a
    /// to-one names its destination by ID alone: nothing moves when that row is deleted, so one
    /// set to an object another context had deleted was stored naming a missing row (and a typed
    /// read of it stopped the process). A to-one with an inverse is checked through the
    /// destination's version instead (its to-many changes). Destinations still faults are read
    /// in one round trip; a loaded one had its row when it was read.
    private func checkOneWayToOnes(_ inserted: [ManagedObject], _ updated: [ManagedObject]) throws {
        var references: [(source: ManagedObject, relationship: RelationshipDescription, destination: ManagedObject)] = []
        // Most entities have no one-way to-one: a bulk insert's objects are then skipped after
        // one test each, touching no captured state (a per-entity cache here, read through the
        // closure's box, cost two dynamic exclusivity checks per saved object).
        func visit(_ object: ManagedObject) {
            let oneWay = object.entity.oneWayToOnes
            guard !oneWay.isEmpty, !object.isFaultStorage else { return }
            for relationship in oneWay {
                guard object.isInsertedStorage || object.changedToOneSlots.contains(relationship.slot),
                      let id = object.toOneValues[relationship.slot], !id.isTemporary else { continue }
                let destination = registeredOrFault(id)
                if destination.isFaultStorage { references.append((object, relationship, destination)) }
            }
        }
        inserted.forEachUnretained(visit)
        updated.forEachUnretained(visit)
        guard !references.isEmpty else { return }
        try fulfillFaults(references.map(\.destination))
        if let gone = references.first(where: { $0.destination.isFaultStorage }) {
            throw ObjectGraphError(
                .objectNotFound, objectID: gone.source.objectID, key: gone.relationship.name,
                "\(gone.source.objectID).\(gone.relationship.name) names \(gone.destination.objectID), which the store no longer holds (deleted by another context?)")
        }
    }

    /// Clears references to objects inserted and deleted before this save.
    ///
    /// Such an object never has a record, so nothing in the store may name it: its temporary
    /// ID would be written as a dangling key that no record (or, in another process, an
    /// unrelated new object) answers to. Relationships with an inverse were already nullified
    /// by the delete rules; this clears the others — one-to-nil, many-to-nil, and inverses of
    /// ``DeleteRule/noAction`` — as if nullified, before validation (so a required one left
    /// empty reports 1570). A deleted object that *was* saved keeps a no-action reference to
    /// its record, as in Core Data.
    ///
    /// Returns the states of the objects it changed, before the change, for a failed save to
    /// put back; `nil` when it changed nothing. The change is not recorded for undo: a save
    /// that succeeds clears the history, and one that fails takes it back (recorded, it was a
    /// group of its own that cleared the redo history, and the to-many part was not recorded
    /// at all, so undoing the delete brought the object back without the references).
    private func dropReferencesToDiscardedInserts() -> UndoGroup? {
        guard !discardedInserts.isEmpty else { return nil }
        let discarded = Set(discardedInserts.values.map(\.objectID))
        let stack = undoStackStorage
        undoStackStorage = nil
        defer { undoStackStorage = stack }
        let before = UndoGroup()
        // Only objects with changes can refer to an unsaved object.
        for object in Array(insertedStorage) + Array(updatedStorage.values) {
            if !object.isFaultStorage {
                for relationship in object.entity.toOneRelationships {
                    if let id = object.toOneValues[relationship.slot], discarded.contains(id) {
                        before.record(object, in: self)
                        assignToOne(object, relationship, nil)
                    }
                }
            }
            for slot in object.toManyStates.indices {
                let state = object.toManyStates[slot]
                let members = state.added.union(state.members ?? [])
                for id in members where discarded.contains(id) {
                    before.record(object, in: self)
                    object.toManyStates[slot].remove(id)
                }
            }
        }
        return before.isEmpty ? nil : before
    }

    /// Gives `objects` permanent IDs now (Core Data's `obtainPermanentIDs(for:)`), so their IDs
    /// can be handed to other contexts before the save. Keys come from the store in one call
    /// per entity hierarchy.
    public func obtainPermanentIDs(for objects: [ManagedObject]) throws {
        try checkQueue("obtainPermanentIDs(for:)")
        try obtainPermanentIDs(for: objects, areAllInserted: false)
    }

    /// `areAllInserted`: `objects` are exactly the inserted objects, each once (a save's). Each
    /// one's references are then remapped in the pass that gives it its ID, instead of in
    /// another pass over all of them.
    func obtainPermanentIDs(for objects: [ManagedObject], areAllInserted: Bool) throws {
        // The objects are lent, and a save's list is used as it is (all of its objects have
        // temporary IDs): copying it retained and released every object (atomic updates).
        var oldIDs: [ObjectID] = []
        oldIDs.reserveCapacity(objects.count)
        var allTemporary = true
        objects.forEachUnretained { object in
            if object.objectID.isTemporary && object.belongs(to: self) { oldIDs.append(object.objectID) } else { allTemporary = false }
        }
        guard !oldIDs.isEmpty else { return }
        let temporary = allTemporary ? objects : objects.filter { $0.objectID.isTemporary && $0.belongs(to: self) }
        statisticsStorage.storeRoundTrips += 1
        let assigned = try coordinator.permanentIDs(for: oldIDs)
        // Inserted objects that already had permanent IDs are not among `temporary`.
        let map = remapIDs(temporary, from: oldIDs, to: assigned, coversInserted: areAllInserted && temporary.count == objects.count)
        undoStackStorage?.remap(map)
    }

    /// Gives `objects` the IDs `ids` (aligned with `oldIDs`, their current ones), replacing
    /// their temporary IDs everywhere they occur in the context: registry and the relationships
    /// of changed objects (only objects with changes can refer to an unsaved object).
    /// `coversInserted`: `objects` include every inserted object.
    @discardableResult
    func remapIDs(_ objects: [ManagedObject], from oldIDs: [ObjectID], to ids: [ObjectID], coversInserted: Bool) -> TemporaryIDMap {
        let map = TemporaryIDMap(oldIDs, to: ids)
        func remapReferences(_ object: ManagedObject) {
            for slot in object.toOneValues.indices {
                if let id = object.toOneValues[slot], id.isTemporary, let new = map[id] { object.toOneValues[slot] = new }
            }
            for slot in object.toManyStates.indices where object.toManyStates[slot].hasChanges || object.isInsertedStorage {
                object.toManyStates[slot].remap(map)
            }
        }
        var next = 0
        objects.forEachUnretained { object in
            // (Aligned as `zip` would align them: objects past the last ID keep theirs.)
            guard next < ids.count else { return }
            let new = ids[next]
            next += 1
            if !retained.isEmpty, retained.removeValue(forKey: object.objectID) != nil { retained[new] = object }
            object.objectID = new
            if coversInserted { remapReferences(object) }
        }
        registry.rekey(objects, oldIDs: oldIDs, map: map)
        releaseDroppedObjects()
        if !coversInserted {
            insertedStorage.forEachUnretained { remapReferences($0) }
        }
        for object in updatedStorage.values { remapReferences(object) }
        deletedStorage.forEachUnretained { remapReferences($0) }
        return map
    }

    func buildChangeSet(inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject]) throws -> StoreChangeSet {
        var changes = StoreChangeSet()
        changes.inserted.reserveCapacity(inserted.count)
        try inserted.forEachUnretained { object in
            changes.inserted.append(snapshot(of: object, version: 1))
            try appendToManyChanges(of: object, to: &changes)
        }
        // Sized once: grown by doublings, 10,000 updates were copied again and again (perf: a
        // tenth of building the change set, in memmove and page faults).
        changes.updated.reserveCapacity(updated.count)
        changes.deleted.reserveCapacity(deleted.count)
        for object in updated {
            let entity = object.entity
            let persistentChange = object.changedAttributeSlots.contains { !entity.transientAttributeSlots.contains($0) }
                || object.changedToOneSlots.contains { !entity.transientToOneSlots.contains($0) }
                || Self.hasPersistentMembershipChanges(object)
            // (An object without a committed row — a fault changed without being read, as one
            // whose to-ones a delete cleared — has no row to send an update against.)
            if persistentChange, let update = try object.withCommittedSnapshot({ committed -> RowUpdate in
                // The built-in stores refuse a row whose version lies outside 1..<Int64.max
                // when they read it; this catches a store that does not, where counting past
                // Int64.max stopped the process (the fuzz tests). The version written must be
                // one the stores read back, so it stays below Int64.max too.
                guard committed.version >= 1 && committed.version < Int64.max - 1 else {
                    throw StoreError(.corrupt, "\(object.objectID) was read at version \(committed.version), past which no update can be counted: its store is damaged")
                }
                return Self.update(from: committed, to: snapshot(of: object, version: committed.version + 1))
            }) {
                changes.updated.append(update)
            }
            try appendToManyChanges(of: object, to: &changes)
        }
        deleted.forEachUnretained { object in
            // An inaccessible fault the context deleted has no record: nothing to store.
            guard !object.isVanishedStorage else { return }
            changes.deleted.append(RowDeletion(objectID: object.objectID, expectedVersion: object.committedVersion))
        }
        return changes
    }

    /// The update from `committed` to `values`, naming the values that differ. They are found
    /// by comparing, not from the object's changed slots: a slot changed and changed back, or
    /// one a merge rebased, then writes exactly what differs from the row the store holds at
    /// the expected version. (An update that names every column made SQLite rewrite the
    /// foreign-key index entry of each updated row, measured.)
    /// (`values` is consumed: it moves into the update instead of being copied, which retained
    /// its arrays once more per updated object.)
    static func update(from committed: borrowing RowSnapshot, to values: consuming RowSnapshot) -> RowUpdate {
        guard committed.attributes.count == values.attributes.count, committed.toOne.count == values.toOne.count else {
            return RowUpdate(values: consume values, expectedVersion: committed.version)
        }
        var attributes = SlotSet()
        for slot in values.attributes.indices where !values.attributes[slot].isIdentical(to: committed.attributes[slot]) {
            attributes.insert(slot)
        }
        var toOne = SlotSet()
        for slot in values.toOne.indices where values.toOne[slot] != committed.toOne[slot] {
            toOne.insert(slot)
        }
        return RowUpdate(values: consume values, expectedVersion: committed.version, changedAttributes: attributes, changedToOne: toOne)
    }

    func snapshot(of object: ManagedObject, version: Int64) -> RowSnapshot {
        var attributes = object.attributeValues
        for slot in object.entity.transientAttributeSlots { attributes[slot] = .null }
        var toOne = object.toOneValues
        for slot in object.entity.transientToOneSlots { toOne[slot] = nil }
        return RowSnapshot(objectID: object.objectID, version: version, attributes: attributes, toOne: toOne)
    }

    private func appendToManyChanges(of object: ManagedObject, to changes: inout StoreChangeSet) throws {
        for relationship in object.entity.toManyRelationships where !relationship.isTransient {
            guard object.toManyStates[relationship.slot].hasChanges else { continue }
            var order: [ObjectID]? = nil
            if relationship.isOrdered {
                try loadToManyIfNeeded(object, relationship)
                order = Array(object.toManyStates[relationship.slot].members ?? [])
            }
            let state = object.toManyStates[relationship.slot]
            changes.toMany.append(ToManyChange(
                source: object.objectID, relationship: relationship,
                added: Array(state.added), removed: Array(state.removed), order: order))
        }
    }

    /// Makes a landed save the objects' committed state. The rows move out of `changes` into
    /// the objects (a copy retained each row's arrays, whose memory is cold by now).
    func commitSave(_ changes: inout StoreChangeSet, inserted: [ManagedObject], updated: [ManagedObject], deleted deletedObjects: [ManagedObject]) {
        var insertedIDs: [ObjectID] = []
        var updatedIDs: [ObjectID] = []
        insertedIDs.reserveCapacity(inserted.count)
        updatedIDs.reserveCapacity(updated.count)
        // Inserted rows are in the order of the inserted objects; updated rows follow the
        // updated objects in order, skipping those without stored changes, so a cursor pairs
        // them (a dictionary of 10,000 rows cost a twentieth of an update, measured). Rows the
        // cursor did not pair are looked up below.
        var nextUpdate = 0
        var unpaired: [ManagedObject] = []
        func commit(_ object: ManagedObject) {
            object.isInsertedStorage = false
            object.isUpdatedStorage = false
            object.changedAttributeSlots = []
            object.changedToOneSlots = []
            for slot in object.toManyStates.indices {
                if object.toManyStates[slot].isFault {
                    // The store now holds the recorded changes; reload when next touched.
                    object.toManyStates[slot] = .fault
                } else {
                    object.toManyStates[slot].commit()
                }
            }
        }
        // (The objects lent: the save's lists hold them.)
        var position = 0
        inserted.forEachUnretained { object in
            if position < changes.inserted.count && changes.inserted[position].objectID == object.objectID {
                object.adoptCommitted(Self.take(&changes.inserted[position]))
            } else {
                unpaired.append(object)
            }
            position += 1
            insertedIDs.append(object.objectID)
            commit(object)
        }
        updated.forEachUnretained { object in
            if nextUpdate < changes.updated.count && changes.updated[nextUpdate].values.objectID == object.objectID {
                object.adoptCommitted(Self.take(&changes.updated[nextUpdate].values))
                nextUpdate += 1
            } else {
                unpaired.append(object)
            }
            updatedIDs.append(object.objectID)
            commit(object)
        }
        if nextUpdate < changes.updated.count && !unpaired.isEmpty {
            let rows = Dictionary(changes.updated[nextUpdate...].map { ($0.values.objectID, $0.values) }, uniquingKeysWith: { a, _ in a })
            for object in unpaired { if let row = rows[object.objectID] { object.committedSnapshot = row } }
        }
        // `deletedObjects` is the save's ordered copy of `deletedStorage` (read from there,
        // not from the list again, which holds the same objects in deletion order).
        assert(deletedObjects.count == deletedStorage.count)
        var deletedIDs: [ObjectID] = []
        deletedIDs.reserveCapacity(deletedObjects.count)
        deletedObjects.forEachUnretained { object in
            deletedIDs.append(object.objectID)
            object.contextStorage = nil
            object.isInaccessibleStorage = true
        }
        if !registry.removeAllIfOnlyDeleted(count: deletedIDs.count) { registry.remove(deletedIDs) }
        if !retained.isEmpty { for id in deletedIDs { retained.removeValue(forKey: id) } }
        releaseDroppedObjects()
        if !model.manyToNilDestinations.isEmpty {
            let held = deletedIDs.filter { model.manyToNilDestinations.contains($0.entityName) }
            if !held.isEmpty { dropSavedDeletionsFromManyToNil(Set(held)) }
        }
        for object in discardedInserts.values {
            unregister(object)
            object.contextStorage = nil
            object.isInaccessibleStorage = true
            object.isDeletedStorage = false
        }
        insertedStorage.removeAll()
        updatedStorage = [:]
        deletedStorage.removeAll()
        discardedInserts = [:]
        inserted.forEachUnretained { $0.didSave() }
        updated.forEachUnretained { $0.didSave() }
        // As in Core Data, a saved deletion is a save too: didSave runs with isDeleted still
        // true, after which the object is no longer "deleted and not yet saved".
        deletedObjects.forEachUnretained { object in
            object.didSave()
            object.isDeletedStorage = false
        }
        handedOverIDs = [:]  // temporary IDs name nothing after the save that stored their objects
        let saved = ContextDidSave(insertedIDs: insertedIDs, updatedIDs: updatedIDs, deletedIDs: deletedIDs, mergedIDs: takeUniquenessMerges(), origin: coordinator.saveOrigin, savedInto: parentStorage?.token)
        NotificationCenter.default.post(name: .objectGraphContextDidSave, object: self, userInfo: [ContextDidSave.key: saved])
    }

    /// Removes objects whose deletion this save stored from the loaded members of to-manys
    /// without an inverse (many-to-nil). Nothing nullifies such a relationship when a member is
    /// deleted; the store drops the member with its row (a fresh context never sees it), so the
    /// saving context's loaded members must drop it too: they kept naming the deleted object,
    /// whose fault then failed when read (a typed read stopped the process). Every recorded
    /// change was committed just before, so the members are what the store holds.
    private func dropSavedDeletionsFromManyToNil(_ ids: Set<ObjectID>) {
        for object in liveRegisteredObjects() where !object.toManyStates.isEmpty {
            for relationship in object.entity.toManyRelationships where !relationship.hasInverse && !relationship.isTransient {
                guard let members = object.toManyStates[relationship.slot].members, !members.isDisjoint(with: ids) else { continue }
                object.toManyStates[relationship.slot].members?.removeAll { ids.contains($0) }
            }
        }
    }

    /// `row`'s value, leaving an empty row in its place.
    private static func take(_ row: inout RowSnapshot) -> RowSnapshot {
        var taken = RowSnapshot(objectID: row.objectID, version: 0, attributes: [], toOne: [])
        swap(&taken, &row)
        return taken
    }
}
