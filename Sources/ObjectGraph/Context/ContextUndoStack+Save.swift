import OrderedCollections

// Undo across saves. As in Core Data, a save does not clear the undo history: undoing a saved
// change makes it an unsaved change again — an undone insert becomes a deletion, an undone
// deletion an insertion under the same ID, an undone update an update back — which the next
// save stores. Recorded states are relative to what the context had committed when they were
// recorded; a save moves that baseline, so every state of an object the save stored is
// rebased on the rows it stored.

/// The members a save's objects had in the store before it, read for the undo history (by
/// object, then to-many slot).
struct StoredMembersBeforeSave {
    var members: [ObjectIdentifier: [Int: OrderedSet<ObjectID>]] = [:]
}

/// What one save changed about one object the undo history records, read before the save's
/// commit forgets it.
struct SavedObjectChange {
    var wasInserted: Bool
    var wasDeleted: Bool
    /// The committed row before the save: the values of a state recorded while a fault.
    var rowBefore: RowSnapshot?
    /// Per to-many slot: whether the save stored a change of it.
    var changedSlots: [Bool]
    /// Per to-many slot: the members before the save, where read for the history (`[]` for
    /// an inserted object's).
    var storedBefore: [OrderedSet<ObjectID>?]
    /// Per to-many slot: the members the save stored (loaded before it for every changed slot).
    var membersAfter: [OrderedSet<ObjectID>?]
}

extension ManagedObjectContext {
    /// Before a save is sent, reads what rebasing the history will need once the save has
    /// moved what is committed: the stored members of every to-many the save changes on an
    /// object the history records (and of every to-many of a recorded object it deletes, which
    /// undo inserts again whole), loading those still faults; and the values of recorded
    /// deleted objects still faults. `nil` without a history (no work, no round trip).
    func readHistoryBaseForSave(updated: [ManagedObject], deleted: [ManagedObject]) throws -> StoredMembersBeforeSave? {
        guard let stack = undoStackStorage, stack.hasHistory else { return nil }
        let recorded = stack.recordedObjects
        var faults: [ManagedObject] = []
        var needed: [ObjectIdentifier: (relationship: RelationshipDescription, objects: [ManagedObject])] = [:]
        func need(_ relationship: RelationshipDescription, _ object: ManagedObject) {
            needed[ObjectIdentifier(relationship), default: (relationship, [])].objects.append(object)
        }
        for object in deleted where recorded.contains(ObjectIdentifier(object)) && !object.objectID.isTemporary {
            if object.isFaultStorage { faults.append(object) }
            for relationship in object.entity.toManyRelationships where !relationship.isTransient { need(relationship, object) }
        }
        for object in updated where recorded.contains(ObjectIdentifier(object)) && !object.objectID.isTemporary {
            for relationship in object.entity.toManyRelationships where !relationship.isTransient && object.toManyStates[relationship.slot].hasChanges {
                need(relationship, object)
            }
        }
        if !faults.isEmpty { try fulfillFaults(faults) }
        var base = StoredMembersBeforeSave()
        for (relationship, objects) in needed.values {
            statisticsStorage.storeRoundTrips += 1
            let related = try coordinator.relatedIDs(for: relationship, of: objects.map(\.objectID))
            for (object, stored) in zip(objects, related) {
                let members = OrderedSet(stored)
                base.members[ObjectIdentifier(object), default: [:]][relationship.slot] = members
                if object.toManyStates[relationship.slot].isFault { object.toManyStates[relationship.slot].load(stored: stored) }
            }
        }
        return base
    }

    /// Just before a save's commit: what it changed about each object the history records.
    func savedChangesForHistory(_ base: StoredMembersBeforeSave, inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject]) -> [ObjectIdentifier: SavedObjectChange] {
        guard let stack = undoStackStorage else { return [:] }
        let recorded = stack.recordedObjects
        var changes: [ObjectIdentifier: SavedObjectChange] = [:]
        func note(_ object: ManagedObject, deleted: Bool) {
            let key = ObjectIdentifier(object)
            guard recorded.contains(key) else { return }
            let states = object.toManyStates
            let stored = base.members[key] ?? [:]
            let inserted = object.isInsertedStorage
            changes[key] = SavedObjectChange(
                wasInserted: inserted, wasDeleted: deleted, rowBefore: object.committedSnapshot,
                changedSlots: states.map { inserted ? !($0.members?.isEmpty ?? true) : $0.hasChanges },
                storedBefore: states.indices.map { inserted ? [] : stored[$0] },
                membersAfter: states.map(\.members))
        }
        for object in inserted { note(object, deleted: false) }
        for object in updated { note(object, deleted: false) }
        for object in deleted { note(object, deleted: true) }
        return changes
    }
}

extension ContextUndoStack {
    /// Whether any group holds a state.
    var hasHistory: Bool { canUndo || canRedo }

    /// The objects some group holds a state of.
    var recordedObjects: Set<ObjectIdentifier> {
        var keys = Set<ObjectIdentifier>()
        for group in allGroups { keys.formUnion(group.states.keys) }
        return keys
    }

    /// Rebases every state of an object `saved` describes on what the save stored.
    func rebase(after saved: [ObjectIdentifier: SavedObjectChange], in context: ManagedObjectContext) {
        guard !saved.isEmpty else { return }
        for group in allGroups {
            for key in Array(group.states.keys) {
                guard let change = saved[key], let entry = group.states[key] else { continue }
                var state = entry.state
                if state.rebase(after: change, of: entry.object, in: context) {
                    group.states[key] = (entry.object, state)
                } else {
                    group.states.removeValue(forKey: key)
                }
            }
        }
        undoGroups.removeAll(where: \.isEmpty)
        redoGroups.removeAll(where: \.isEmpty)
    }
}

extension ObjectState {
    /// Rebases the state on what a save stored for its object (`object`, now committed);
    /// false when the state cannot be kept (a deleted object's values were never read).
    mutating func rebase(after change: SavedObjectChange, of object: ManagedObject, in context: ManagedObjectContext) -> Bool {
        let relationships = object.entity.toManyRelationships
        if change.wasDeleted {
            if !inContext || isDeleted {
                // Deleted in this state too, and now gone from the store: restoring it leaves
                // the object out of the context.
                inContext = false
                isInserted = false; isUpdated = false; isDeleted = false; isDiscardedInsert = false
                return true
            }
            // Alive in this state: undo inserts it again, under its ID, whole.
            if isFault {
                guard let row = change.rowBefore else { return false }
                attributeValues = row.attributes
                toOneValues = row.toOne
                isFault = false
            }
            for relationship in relationships {
                let slot = relationship.slot
                let members = toManyStates[slot].members(applyingChangesTo: change.storedBefore[slot] ?? [])
                toManyStates[slot] = .inserted(holding: members)
            }
            committedSnapshot = nil
            changedAttributeSlots = []
            changedToOneSlots = []
            isInserted = true; isUpdated = false; isDeleted = false; isDiscardedInsert = false
            return true
        }
        if change.wasInserted && (!inContext || isDiscardedInsert) {
            // Undoing the insert now deletes the saved object. So does putting back a state
            // that deleted it while it was new (a redo of that deletion, after an undo of it
            // and a save): left a discarded insert, the restore made it no deletion at all,
            // and the next save kept the stored row.
            self = ObjectState(of: object, in: context)
            isDeleted = true
            return true
        }
        if isFault, let row = change.rowBefore {
            attributeValues = row.attributes
            toOneValues = row.toOne
            isFault = false
        }
        let committed = object.committedSnapshot
        if !isFault, let committed, committed.attributes.count == attributeValues.count, committed.toOne.count == toOneValues.count {
            var attributes = SlotSet()
            for attribute in object.entity.attributes {
                let slot = attribute.slot
                let differs = attribute.isTransient ? changedAttributeSlots.contains(slot) : !attributeValues[slot].isIdentical(to: committed.attributes[slot])
                if differs { attributes.insert(slot) }
            }
            var toOnes = SlotSet()
            for relationship in object.entity.toOneRelationships {
                let slot = relationship.slot
                let differs = relationship.isTransient ? changedToOneSlots.contains(slot) : toOneValues[slot] != committed.toOne[slot]
                if differs { toOnes.insert(slot) }
            }
            changedAttributeSlots = attributes
            changedToOneSlots = toOnes
        }
        committedSnapshot = committed
        for relationship in relationships where change.changedSlots[relationship.slot] && !relationship.isTransient {
            let slot = relationship.slot
            guard let after = change.membersAfter[slot] else { continue }
            let members: OrderedSet<ObjectID>
            if let loaded = toManyStates[slot].members {
                members = loaded
            } else if let before = change.storedBefore[slot] {
                members = toManyStates[slot].members(applyingChangesTo: before)
            } else {
                continue
            }
            toManyStates[slot] = .holding(members, committed: after, ordered: relationship.isOrdered)
        }
        isInserted = false
        // A deleted state is no update, as a deletion makes it (`markDeleted`): its values are
        // older than the save, and put back as an update too, they were sent with the deletion —
        // a parent context assigned them before deleting, and its delete rules cascaded along
        // a to-one the child had cleared and saved.
        isUpdated = !isDeleted && (!changedAttributeSlots.isEmpty || !changedToOneSlots.isEmpty || toManyStates.contains(where: \.hasChanges))
        return true
    }
}
