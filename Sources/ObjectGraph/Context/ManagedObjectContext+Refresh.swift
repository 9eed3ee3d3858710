import OrderedCollections

/// Showing what the store holds now: Core Data's `refresh(_:mergeChanges:)` and
/// `refreshAllObjects()`.
///
/// A refresh also drops the refreshed objects' rows from the coordinator's row cache, which
/// every context shares: without that, a fault would fire again from the row the cache kept
/// (one another coordinator or process may have replaced in the store since), which is
/// exactly what the caller asked not to see.
extension ManagedObjectContext {
    /// Turns `object` back into a fault, or with `mergeChanges`, reloads what the store holds
    /// while keeping the object's own unsaved changes on top.
    ///
    /// Without `mergeChanges`, the object's unsaved changes are dropped (but for membership
    /// changes its members record too, which are one change with theirs: see
    /// `pairedMembershipChanges(of:)`; and but for a one-to-one change its partner records
    /// too, made again: see `keepOneToOnePairs(of:_:)`) and, if it held values, it is turned into a fault between ``ManagedObject/willTurnIntoFault()`` and
    /// ``ManagedObject/didTurnIntoFault()`` (a deleted object stays deleted). With
    /// `mergeChanges`, an object without changes is turned into a fault the same way; one with
    /// changes takes the stored values of the properties it did not change, and its read
    /// version becomes the stored one. A fault with changes (members added through an inverse
    /// while it was a fault) keeps them, and its loaded to-many members are read again when
    /// next touched, with the changes replayed on them. Inserted objects
    /// are left as they are: the store has nothing for them; so are deleted ones (their
    /// deletion is saved against the version read, so a change saved since is a conflict).
    ///
    /// The objects-did-change notification that ends the event lists the object in
    /// ``ObjectsDidChange/refreshed`` (Core Data's `NSRefreshedObjectsKey`). The loaded other
    /// sides of its one-to-many relationships follow what the refresh shows (see
    /// ManagedObjectContext+RefreshInverses), so the two sides never disagree.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        requireQueue("refresh(\(object.objectID))")
        guard object.belongs(to: self), !object.isInsertedStorage else { return }
        let shown = shownInverseSides(of: object)
        let merging = mergeChanges && object.hasChanges
        let pairs = merging ? [] : changedOneToOnes(of: object)
        coordinator.rowCache.remove(object.objectID)
        if !object.isDeletedStorage { changeLog.refreshed(object) }
        if merging {
            _ = try? reloadKeepingChanges([object])
        } else {
            discardChangesAndFault(object)
        }
        keepInversesInStep(afterRefreshing: object, shown: shown)
        keepOneToOnePairs(of: object, pairs)
    }

    /// Refreshes every registered object as ``refresh(_:mergeChanges:)`` with `mergeChanges`
    /// does: unsaved changes are kept (on top of the stored values, read again), objects
    /// without changes become faults, and their cached rows are dropped, so the next access
    /// reads what the store holds now. Objects with changes are read again in one round trip
    /// per store, however many they are. A main use, as in Core Data: letting go of the values
    /// of a large graph (turned into faults) without losing unsaved work. The notification
    /// that ends the event lists them all in ``ObjectsDidChange/refreshed`` (deleted ones
    /// aside, which stay as they are).
    public func refreshAllObjects() {
        requireQueue("refreshAllObjects()")
        let objects = liveRegisteredObjects().filter { !$0.isInsertedStorage }
        coordinator.rowCache.remove(objects.map(\.objectID))
        var changed: [ManagedObject] = []
        for object in objects {
            if !object.isDeletedStorage { changeLog.refreshed(object) }
            if object.hasChanges { changed.append(object) } else { discardChangesAndFault(object) }
        }
        _ = try? reloadKeepingChanges(changed)
    }

    /// A fetch's `shouldRefreshRefetchedObjects`: the objects it returned that were already
    /// loaded here (pending inserts and deletions aside) take the stored rows under their
    /// unsaved changes. Their cached rows are dropped first, so the rows are the store's now,
    /// not what the row cache kept from before. As in Core Data, the next objects-did-change
    /// notification lists the objects so refreshed (``ObjectsDidChange/refreshed``), as it
    /// lists those of ``refresh(_:mergeChanges:)``.
    func refreshRefetched(_ objects: [ManagedObject]) throws {
        let stored = objects.filter { !$0.isInsertedStorage && !$0.isDeletedStorage && !$0.objectID.isTemporary }
        guard !stored.isEmpty else { return }
        coordinator.rowCache.remove(stored.map(\.objectID))
        for object in try reloadKeepingChanges(stored) { changeLog.refreshed(object) }
    }

    /// Installs the stored rows of `objects` under their unsaved changes, in one read. An
    /// object whose row is gone (deleted by another context) is left as it is: the merge of
    /// that deletion, or this context's next save, says what became of it. So is an object
    /// deleted here, as a merge leaves it: its delete rules ran on the members it held then,
    /// and taking the stored version as read let the save pass over a member another context
    /// added since (stored naming the deleted row) instead of reporting the conflict.
    /// A failed read throws with nothing changed (a refresh, which cannot throw, then leaves
    /// the objects as they are). Returns the loaded objects that took a stored row.
    private func reloadKeepingChanges(_ objects: [ManagedObject]) throws -> [ManagedObject] {
        var loaded: [ManagedObject] = []
        for object in objects where !object.isDeletedStorage {
            if object.isFaultStorage { rereadLoadedMembers(ofFault: object) } else { loaded.append(object) }
        }
        guard !loaded.isEmpty else { return [] }
        let rows = try coordinator.snapshots(for: loaded.map(\.objectID))
        statisticsStorage.storeRoundTrips += 1
        var fresh: [ObjectID: RowSnapshot] = [:]
        fresh.reserveCapacity(rows.count)
        for row in rows { fresh[row.objectID] = row }
        var reloaded: [ManagedObject] = []
        reloaded.reserveCapacity(loaded.count)
        for object in loaded {
            guard let row = fresh[object.objectID] else { continue }
            install(row, keepingChangesOf: object)
            undoStackStorage?.rebase(object, onto: row)
            reloaded.append(object)
        }
        return reloaded
    }

    /// Drops the to-many members `object`, a fault, holds loaded, so that they are read again
    /// when next touched, with its recorded changes replayed on them (as a merge drops them).
    ///
    /// A fault's values are read when it fires, but its members may be loaded already: reading
    /// a to-many does not fire the object. Kept through a refresh or a refreshing fetch, they
    /// still showed what another context's save had changed since, and the next save stored
    /// this context's changes against them.
    func rereadLoadedMembers(ofFault object: ManagedObject) {
        guard object.toManyStates.contains(where: { !$0.isFault }) else { return }
        for slot in object.toManyStates.indices { object.toManyStates[slot].unload() }
        undoStackStorage?.rebase(object, onto: nil)
    }

    /// Drops `object`'s unsaved changes and turns it into a fault (a deleted object stays
    /// deleted, values and all: its deletion is still to be saved).
    private func discardChangesAndFault(_ object: ManagedObject) {
        if object.isUpdatedStorage {
            updatedStorage.removeValue(forKey: object.objectID)
            object.isUpdatedStorage = false
            changeLog.discardedUpdate(object)  // marked again below if paired changes are kept
        }
        if object.isDeletedStorage { return }
        // Undo puts a recorded state back whole, its read version included: one recorded before
        // another context's save brought back the replaced values (shown as unchanged) and the
        // old version (a conflict at the next save). Rebased on the row as stored now, as a
        // merge rebases them, undo takes back this context's changes only.
        if let stack = undoStackStorage, stack.records(object),
           let fresh = try? coordinator.snapshots(for: [object.objectID]).first {
            statisticsStorage.storeRoundTrips += 1
            stack.rebase(object, onto: fresh)
        }
        let kept = pairedMembershipChanges(of: object)
        object.turnIntoFaultCallingHooks()
        guard !kept.isEmpty else { return }
        for (slot, state) in kept { object.toManyStates[slot] = state }
        markUpdated(object)
    }

    /// The membership changes of `object` that its partners record too (in a many-to-many's
    /// other side, or in a one-to-many's members' to-ones), as fault states by slot: a refresh
    /// without merging keeps them. (An ordered list's own order is not kept: the kept members
    /// are appended to the stored ones, as the refreshed object's own changes are dropped.)
    ///
    /// A many-to-many is one relationship seen from two objects, and each side's change is
    /// stored (each direction has its join rows). Dropped from the refreshed side only, the
    /// save stored the partner's half of the pair: `student.subjects` held Math while
    /// `math.students` lacked the student, on every store. Core Data stores the pair once, so
    /// there the partner's change keeps the membership; kept on both sides here, it does too
    /// (so refreshing both sides keeps it as well). A change the partner no longer records
    /// (a merge policy resolved its conflict with the stored members) is dropped.
    private func pairedMembershipChanges(of object: ManagedObject) -> [(slot: Int, state: ToManyState)] {
        guard !object.toManyStates.isEmpty else { return [] }
        var kept: [(slot: Int, state: ToManyState)] = []
        for relationship in object.entity.toManyRelationships where relationship.hasInverse && !relationship.isTransient {
            let state = object.toManyStates[relationship.slot]
            guard state.hasChanges, let inverseSlot = relationship.inverseSlot else { continue }
            let added: [ObjectID]
            let removed: Set<ObjectID>
            if relationship.inverseIsToMany {
                func partnerRecords(_ id: ObjectID, _ records: (ToManyState) -> Bool) -> Bool {
                    guard let partner = registeredLive(id), partner.belongs(to: self), inverseSlot < partner.toManyStates.count else { return false }
                    return records(partner.toManyStates[inverseSlot])
                }
                added = state.added.filter { partnerRecords($0) { $0.added.contains(object.objectID) } }
                removed = state.removed.filter { partnerRecords($0) { $0.removed.contains(object.objectID) } }
            } else {
                // A one-to-many's membership is its members' to-ones, which the refresh keeps:
                // the list keeps the members whose unsaved to-one names the object, and lets
                // go of those whose to-one (or deletion) took them away. Dropped, the list
                // disagreed with those to-ones until the save stored them, and an ordered one
                // then wrote no position for a new member: first on SQLite, last elsewhere.
                func partnerChanged(_ id: ObjectID, _ named: (ObjectID?) -> Bool) -> Bool {
                    guard let partner = registeredLive(id), partner.belongs(to: self) else { return false }
                    if partner.isDeletedStorage { return named(nil) }
                    guard partner.changedToOneSlots.contains(inverseSlot), inverseSlot < partner.toOneValues.count else { return false }
                    return named(partner.toOneValues[inverseSlot])
                }
                added = state.added.filter { partnerChanged($0) { $0 == object.objectID } }
                removed = state.removed.filter { partnerChanged($0) { $0 != object.objectID } }
            }
            guard !added.isEmpty || !removed.isEmpty else { continue }
            kept.append((relationship.slot, .fault(recordingAdded: OrderedSet(added), removed: removed)))
        }
        return kept
    }
}
