import Foundation

/// Optimistic locking at save: versions for every written row, and the merge policies.
extension ManagedObjectContext {
    /// Sends the save's change set; on a version conflict, resolves it by ``mergePolicy``,
    /// validates the resolved changes again and retries with the new versions — again while
    /// other writers' saves keep landing in between (each retry follows one's success; Core
    /// Data's policy saves do not fail). A conflict that repeats unchanged is thrown.
    func sendSave(inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject]) throws {
        var inserted = inserted
        var updated = updated
        var deleted = deleted
        try loadVersionsForMembershipChanges(&updated)
        // (That may drop objects deleted elsewhere, which only ever shrinks the storage.)
        if deleted.count != deletedStorage.count { deleted = deletedInSaveOrder() }
        var historyBase = try readHistoryBaseForSave(updated: updated, deleted: deleted)
        var changes = try buildChangeSet(inserted: inserted, updated: updated, deleted: deleted)
        // The stores whose part of this save landed: a conflict in one store's part leaves
        // the parts of the stores before it saved, and sending them again would fail.
        var landed: Set<String> = []
        var resolved: Set<ConflictSighting>?
        while true {
            do {
                try send(changes, landed: &landed)
                break
            } catch let error as StoreError where error.code == .conflict {
                let sightings = Set(error.conflicts.map(ConflictSighting.init))
                guard mergePolicyStorage != .error, sightings != resolved else {
                    throw MergeConflictError(conflicts: try describe(error), policy: mergePolicyStorage, underlying: error)
                }
                resolved = sightings
                try resolve(error.conflicts)
                updated = inSaveOrder(updatedStorage)
                deleted = deletedInSaveOrder()
                // The resolution changed what is saved: merged values, and deletions applied
                // again to the rows as stored now, whose relationships may hold objects the
                // save's validation never saw (a member another context added to a deny
                // relationship was deleted past its rule, leaving it naming a row that is
                // gone). So the resolved changes are validated again, as any save's are.
                try validateForSave(&inserted, &updated, &deleted)
                // The members stored before this save are now those of the newer rows (read
                // before the first attempt, a member the other save added looked like one this
                // save removed, and undo dropped it from one end of the pair).
                if historyBase != nil { historyBase = try readHistoryBaseForSave(updated: updated, deleted: deleted) }
                changes = try buildChangeSet(inserted: inserted, updated: updated, deleted: deleted)
            }
        }
        let saved = historyBase.map { savedChangesForHistory($0, inserted: inserted, updated: updated, deleted: deleted) }
        commitSave(&changes, inserted: inserted, updated: updated, deleted: deleted)
        // The history is kept (as Core Data keeps it): undo takes saved changes back as new
        // unsaved ones.
        if let saved { undoStackStorage?.rebase(after: saved, in: self) }
    }

    /// Sends `changes` to the coordinator. A uniqueness violation its re-check inside the
    /// store's write found, before any store of the save wrote, is a race the merge policy may
    /// still resolve: it is thrown as ``UniquenessRaceLost`` for ``save()`` to validate again.
    private func send(_ changes: StoreChangeSet, landed: inout Set<String>) throws {
        statisticsStorage.storeRoundTrips += 1
        do {
            try coordinator.save(changes, landed: &landed)
        } catch let error as ValidationError where mergePolicyStorage != .error && landed.isEmpty && error.violations.allSatisfy({ $0.code == .uniquenessConstraint }) {
            throw UniquenessRaceLost(error: error)
        }
    }

    /// A membership change is a change of both ends' rows: it bumps their versions, so a
    /// concurrent delete of either end is detected (otherwise a message added to a chat that
    /// another context deletes would be left pointing at nothing). A changed object still a
    /// fault has no values or version loaded: its row is read now, in one round trip. One whose row is gone
    /// only had an inverse end updated (say, leaving a no-action owner deleted long ago): it is
    /// dropped — unless this save's changes point at it, which under the error policy is a
    /// conflict and otherwise clears those references.
    private func loadVersionsForMembershipChanges(_ updated: inout [ManagedObject]) throws {
        let unread = updated.filter { $0.isFaultStorage && Self.hasPersistentMembershipChanges($0) }
        guard !unread.isEmpty else { return }
        try fulfillFaults(unread)
        let gone = Set(unread.filter(\.isFaultStorage).map(\.objectID))
        guard !gone.isEmpty else { return }
        let referred = changesRefer(to: gone)
        if mergePolicyStorage == .error && referred {
            let error = StoreError(.conflict, "\(gone.count) object\(gone.count == 1 ? "" : "s") changed here were deleted by another save", conflicts: gone.map {
                StoreError.Conflict(objectID: $0, expectedVersion: 0, storedVersion: nil, storedSnapshot: nil)
            })
            throw MergeConflictError(conflicts: try describe(error), policy: mergePolicyStorage, underlying: error)
        }
        // Rows gone long since (no new reference here): other objects' stored to-ones naming
        // them are what the store holds, and stay. Cleared, they diverged from the store, and
        // the save wrote the cleared value for any object it updated for another reason.
        try dropObjectsDeletedElsewhere(gone, keepingStoredToOnes: !referred)
        updated = inSaveOrder(updatedStorage)
    }

    /// Whether an inserted or changed object's new values point at one of `ids`: an inserted
    /// object's to-ones, a changed object's changed to-ones. (A changed object's other to-ones
    /// are as the store holds them; one naming a row gone long since — a no-action inverse left
    /// by a delete — is no new reference, and counting it failed the save with a conflict.)
    private func changesRefer(to ids: Set<ObjectID>) -> Bool {
        for object in Array(insertedStorage) + Array(updatedStorage.values) where !ids.contains(object.objectID) {
            if !object.isFaultStorage, object.toOneValues.indices.contains(where: { slot in
                (object.isInsertedStorage || object.changedToOneSlots.contains(slot)) && (object.toOneValues[slot].map(ids.contains) ?? false)
            }) { return true }
            if object.toManyStates.contains(where: { !$0.added.isDisjoint(with: ids) }) { return true }
        }
        return false
    }

    static func hasPersistentMembershipChanges(_ object: ManagedObject) -> Bool {
        object.toManyStates.indices.contains { object.toManyStates[$0].hasChanges && !object.entity.toManyRelationships[$0].isTransient }
    }

    // MARK: Describing conflicts

    private func describe(_ error: StoreError) throws -> [MergeConflictError.ObjectConflict] {
        try error.conflicts.map { conflict in
            let object = registeredLive(conflict.objectID)
            var result = MergeConflictError.ObjectConflict(
                objectID: conflict.objectID, readVersion: object?.committedVersion,
                storedVersion: conflict.storedVersion, contextDeletes: object?.isDeletedStorage ?? false, properties: [])
            guard let object, let read = object.committedSnapshot, let stored = try storedRow(conflict) else { return result }
            for attribute in object.entity.attributes where !attribute.isTransient {
                let mine = object.attributeValues[attribute.slot]
                let theirs = stored.attributes[attribute.slot]
                guard mine != theirs else { continue }
                result.properties.append(.init(key: attribute.name, contextValue: .attribute(mine), storedValue: .attribute(theirs), readValue: .attribute(read.attributes[attribute.slot])))
            }
            for relationship in object.entity.toOneRelationships where !relationship.isTransient {
                let mine = object.toOneValues[relationship.slot]
                let theirs = stored.toOne[relationship.slot]
                guard mine != theirs else { continue }
                result.properties.append(.init(key: relationship.name, contextValue: .object(mine), storedValue: .object(theirs), readValue: .object(read.toOne[relationship.slot])))
            }
            return result
        }
    }

    /// The row the store holds now for a conflict (read again when the store did not send it).
    private func storedRow(_ conflict: StoreError.Conflict) throws -> RowSnapshot? {
        guard conflict.storedVersion != nil else { return nil }
        if let stored = conflict.storedSnapshot { return stored }
        statisticsStorage.storeRoundTrips += 1
        return try coordinator.snapshot(for: conflict.objectID, caching: false)
    }

    // MARK: Resolving conflicts

    private func resolve(_ conflicts: [StoreError.Conflict]) throws {
        var goneIDs: Set<ObjectID> = []
        var redelete: [ManagedObject] = []
        var cascaded: [ManagedObject] = []
        for conflict in conflicts {
            guard let object = registeredLive(conflict.objectID) else { continue }
            let stored = try storedRow(conflict)
            if object.isDeletedStorage {
                guard let stored else {
                    object.committedSnapshot = nil  // already gone: delete without a version check
                    continue
                }
                if object.isDeletedByCascadeStorage { cascaded.append(object) } else { redelete.append(object) }
                deletedStorage.remove(object)
                object.isDeletedStorage = false
                object.changedAttributeSlots = []
                object.changedToOneSlots = []
                undoStackStorage?.rebase(object, onto: stored)
                object.install(stored)
                object.toManyStates = object.entity.faultToManyStates
            } else if let stored {
                try merge(object, with: stored)
            } else {
                goneIDs.insert(object.objectID)
            }
        }
        if !goneIDs.isEmpty { try dropObjectsDeletedElsewhere(goneIDs) }
        // An object a cascade deleted is deleted again only if the cascade still reaches it in
        // the stored row: one the other save moved to an owner not deleted here is spared
        // (deleting it anyway lost it from its new owner, silently, under every policy).
        let redeleted = Set(redelete.map(\.objectID))
        for object in cascaded {
            if cascadeReaches(object, redeleted: redeleted) { redelete.append(object) } else { restoreInverses(of: object) }
        }
        // Deleting again applies the delete rules to what the store holds now. It is the same
        // deletion, whose prepareForDeletion ran when the object was first deleted: calling it
        // again repeated the app's own side effects (its hooks ran twice for one delete).
        let byCascade = Set(cascaded.map(\.objectID))
        for object in redelete { markDeleted(object, preparing: false, byCascade: byCascade.contains(object.objectID)) }
        try processPendingChanges()
    }

    /// Whether an object a cascade deleted is still reached by one: a stored to-one of it names
    /// an owner deleted here (or being deleted again) whose inverse relationship cascades. A
    /// cascade that could have come another way (a many-to-many, a relationship without an
    /// inverse) counts as reaching it, as before.
    private func cascadeReaches(_ object: ManagedObject, redeleted: Set<ObjectID>) -> Bool {
        let entity = object.entity
        for relationship in entity.toManyRelationships where relationship.inverseSlot != nil {
            if model.inverse(of: relationship)?.deleteRule == .cascade { return true }
        }
        var cascadingInverses = 0
        for relationship in entity.toOneRelationships where relationship.inverseSlot != nil {
            guard model.inverse(of: relationship)?.deleteRule == .cascade else { continue }
            cascadingInverses += 1
            guard let ownerID = object.toOneValues[relationship.slot] else { continue }
            if redeleted.contains(ownerID) { return true }
            if let owner = registeredLive(ownerID), owner.isDeletedStorage { return true }
        }
        return cascadingInverses == 0
    }

    /// Undoes, in the other objects of the context, what a spared object's own delete rules
    /// did when the cascade deleted it: it is taken out of no to-many and cleared from no
    /// to-one after all (saved, a recorded removal dropped a link the store still holds).
    private func restoreInverses(of object: ManagedObject) {
        let id = object.objectID
        for other in liveRegisteredObjects() where other !== object && !other.isDeletedStorage {
            for relationship in other.entity.toManyRelationships where relationship.inverseSlot != nil {
                var state = other.toManyStates[relationship.slot]
                guard state.removed.contains(id) else { continue }
                state.removed.remove(id)
                if state.members != nil { state.members?.append(id) }
                other.toManyStates[relationship.slot] = state
            }
            guard !other.isFaultStorage, let committed = other.committedSnapshot else { continue }
            for relationship in other.entity.toOneRelationships where relationship.inverseSlot != nil {
                let slot = relationship.slot
                guard other.changedToOneSlots.contains(slot), other.toOneValues[slot] == nil, committed.toOne[slot] == id else { continue }
                other.toOneValues[slot] = id
                other.changedToOneSlots.remove(slot)
            }
        }
    }

    /// Applies the merge policy to one object whose row another save changed.
    private func merge(_ object: ManagedObject, with stored: RowSnapshot) throws {
        let read = object.committedSnapshot ?? stored
        if mergePolicyStorage != .overwrite {
            for attribute in object.entity.attributes where !attribute.isTransient {
                let slot = attribute.slot
                let changedHere = object.changedAttributeSlots.contains(slot)
                let changedThere = !read.attributes[slot].isIdentical(to: stored.attributes[slot])
                if !changedHere || takesStored(changedThere: changedThere) {
                    object.attributeValues[slot] = stored.attributes[slot]
                    object.changedAttributeSlots.remove(slot)
                }
            }
            for relationship in object.entity.toOneRelationships where !relationship.isTransient {
                let slot = relationship.slot
                let changedHere = object.changedToOneSlots.contains(slot)
                let changedThere = read.toOne[slot] != stored.toOne[slot]
                if !changedHere {
                    unloadInverseMembers(relationship, leaving: object.toOneValues[slot], joining: stored.toOne[slot])
                    object.toOneValues[slot] = stored.toOne[slot]
                } else if takesStored(changedThere: changedThere), object.toOneValues[slot] != stored.toOne[slot] {
                    // Going back to the stored destination through the mutation path keeps
                    // the inverse ends this context changed consistent.
                    try setToOne(object, relationship, stored.toOne[slot].map(registeredOrFault))
                }
            }
        }
        try keepOneToOnesPaired(object, stored: stored)
        // What the other save wrote is not this context's to undo: the recorded states take it
        // where they had not changed it, as after a merge (kept, undoing a saved change put
        // the other save's values back as they were before it, and the next save stored them).
        undoStackStorage?.rebase(object, onto: stored)
        object.committedSnapshot = stored
        // The newer row may come with other members (another save's membership change is what
        // bumped its version): loaded members are read again, this context's additions and
        // removals replayed on them. Kept as loaded, a roster filled to its maximum by both
        // saves passed validation with this context's stale count and stored one over it.
        for slot in object.toManyStates.indices { object.toManyStates[slot].unload() }
        // The order of an ordered to-many is one of its properties: the rollback policy drops
        // this context's order, store-trump drops it if the other save reordered the members
        // too (checked as they load). Kept under both, the save stored this context's order
        // over the other save's, the policy notwithstanding (an audit).
        switch mergePolicyStorage {
        case .rollback:
            for relationship in object.entity.toManyRelationships where relationship.isOrdered {
                object.toManyStates[relationship.slot].dropLocalOrder()
            }
        case .storeTrumps:
            for relationship in object.entity.toManyRelationships where relationship.isOrdered {
                object.toManyStates[relationship.slot].yieldOrderIfStoreReordered()
            }
        case .objectTrumps, .overwrite, .error:
            break
        }
    }

    /// A to-one taking the other save's destination without going through the mutation path
    /// (it is the stored state, not a change to record) leaves the loaded members of the
    /// owners it left and joined as this context read them: kept, the owner it left still
    /// listed it after the save while its to-one named another (a graph the store no longer
    /// holds). Their members are read again when next touched, recorded changes replayed.
    private func unloadInverseMembers(_ relationship: RelationshipDescription, leaving old: ObjectID?, joining new: ObjectID?) {
        guard old != new, relationship.hasInverse, relationship.inverseIsToMany, let inverse = model.inverse(of: relationship) else { return }
        for id in [old, new] {
            guard let id, let end = registeredLive(id) else { continue }
            end.toManyStates[inverse.slot].unload()
        }
    }

    /// Makes the other ends of `object`'s one-to-one relationships agree with what this save
    /// writes when that differs from the stored row: the other save's destination names
    /// `object` back and lets go of it, and the destination written here names `object`. (A
    /// one-to-many's lists follow the to-ones in every store; a one-to-one is two to-ones, so
    /// without this, objectTrumps or overwrite stored two students naming one address.) An end
    /// with no changes here is read again first, so it is saved at its current version.
    private func keepOneToOnesPaired(_ object: ManagedObject, stored: RowSnapshot) throws {
        for relationship in object.entity.toOneRelationships where !relationship.isTransient && relationship.hasInverse && !relationship.inverseIsToMany {
            let slot = relationship.slot
            let written = object.toOneValues[slot]
            guard written != stored.toOne[slot], let inverse = model.inverse(of: relationship) else { continue }
            if let theirs = stored.toOne[slot], let end = try currentEnd(theirs), end.toOneValues[inverse.slot] == object.objectID {
                assignToOne(end, inverse, nil)
            }
            guard let written, let end = try currentEnd(written), end.toOneValues[inverse.slot] != object.objectID else { continue }
            // Its previous partner, in turn, no longer has it.
            if let previous = end.toOneValues[inverse.slot], let partner = try currentEnd(previous), partner.toOneValues[slot] == written {
                assignToOne(partner, relationship, nil)
            }
            assignToOne(end, inverse, object.objectID)
        }
    }

    /// The object for `id`, loaded, with the stored row when it has no changes here; `nil` when
    /// the record is gone or the object is deleted here.
    private func currentEnd(_ id: ObjectID) throws -> ManagedObject? {
        let end = registeredOrFault(id)
        guard !end.isDeletedStorage, !end.isInaccessibleStorage else { return nil }
        if !end.isFaultStorage && !end.isUpdatedStorage && !end.isInsertedStorage {
            statisticsStorage.storeRoundTrips += 1
            guard let row = try coordinator.snapshot(for: id, caching: false) else { return nil }
            if row.version > (end.committedVersion ?? 0) { install(row, keepingChangesOf: end) }
        }
        do { try fulfillFaultIfNeeded(end) } catch let error as ObjectGraphError where error.code == .objectNotFound { return nil }
        return end
    }

    /// Whether a property this context changed takes the stored value under the policy.
    private func takesStored(changedThere: Bool) -> Bool {
        switch mergePolicyStorage {
        case .rollback: return true
        case .storeTrumps: return changedThere
        case .objectTrumps, .overwrite, .error: return false
        }
    }

    /// Objects this context changed whose records another save deleted: the deletion wins.
    /// Their changes are dropped, references to them from this context's other changes are
    /// cleared (so nothing saved points at a missing record), and they become inaccessible.
    ///
    /// One deleted here whose delete rules have not run yet (a merge between `delete(_:)` and
    /// the end of the block, or on a main-queue context used directly) leaves the pending
    /// deletes too: the save that deleted its record applied its rules in the store, and
    /// running them here would reach its members as this context last loaded them — a cascade
    /// then deleted objects the other save had moved away (their fresh faults read rows with
    /// current versions, so no conflict stopped the save: silent data loss).
    /// `keepingStoredToOnes`: see ``clearReferences(to:keepingStoredToOnes:)``. `rowsDeleted`:
    /// the rows were deleted (false for upsert losers merged into another row), so a later
    /// `delete(_:)` of the objects is already done (see ``ManagedObject/leftAsDeletedInStore``).
    func dropObjectsDeletedElsewhere(_ ids: Set<ObjectID>, keepingStoredToOnes: Bool = false, rowsDeleted: Bool = true) throws {
        if !pendingDeletes.isEmpty { pendingDeletes.removeAll { ids.contains($0.objectID) } }
        for id in ids {
            guard let object = registeredLive(id) else { continue }
            updatedStorage.removeValue(forKey: id)
            deletedStorage.remove(object)
            object.isUpdatedStorage = false
            object.isDeletedStorage = false
            batchGroups.removeValue(forKey: id)
            changeLog.forget(object)
            unregister(object)
            object.contextStorage = nil
            object.isInaccessibleStorage = true
            if rowsDeleted { object.deletedPosition = ManagedObject.deletedInStorePosition }
        }
        clearReferences(to: ids, keepingStoredToOnes: keepingStoredToOnes)
        undoStackStorage?.forget(ids)
    }

    /// Removes `ids` from the values of every registered object: unsaved references are
    /// cleared as changes, loaded stored ones silently (the store already dropped them).
    /// `keepingStoredToOnes` leaves loaded to-ones that are not unsaved changes as they are.
    func clearReferences(to ids: Set<ObjectID>, keepingStoredToOnes: Bool = false) {
        // Objects the app let go of are skipped: they are replaced by fresh faults when next
        // reached, which read what the store holds now.
        for object in liveRegisteredObjects() {
            if !object.isFaultStorage {
                for relationship in object.entity.toOneRelationships {
                    guard let id = object.toOneValues[relationship.slot], ids.contains(id) else { continue }
                    if object.changedToOneSlots.contains(relationship.slot) || object.isInsertedStorage {
                        assignToOne(object, relationship, nil)
                    } else if !keepingStoredToOnes {
                        object.toOneValues[relationship.slot] = nil
                    }
                }
            }
            for slot in object.toManyStates.indices {
                var state = object.toManyStates[slot]
                guard state.members.map({ !$0.isDisjoint(with: ids) }) ?? false || !state.added.isDisjoint(with: ids) || !state.removed.isDisjoint(with: ids) else { continue }
                state.members?.removeAll { ids.contains($0) }
                state.added.removeAll { ids.contains($0) }
                state.removed.subtract(ids)
                object.toManyStates[slot] = state
            }
        }
    }
}

