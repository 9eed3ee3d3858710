/// Undo and redo through the context's ``ContextUndoStack``.
extension ManagedObjectContext {
    /// Undoes the last group of changes (pending changes are processed first, ending the open
    /// group). Does nothing without an undo stack or with nothing to undo.
    public func undo() throws {
        try checkQueue("undo()")
        guard let stack = undoStackStorage else { return }
        try processPendingChanges()
        stack.closeGroup()
        guard let group = stack.undoGroups.last else { return }
        let reached = try reachedByDeletions(in: group)
        stack.undoGroups.removeLast()
        let inverse = replay(group, on: stack)
        stack.redoGroups.append(inverse)
        try applyDeleteRules(reaching: reached, recordingIn: inverse, on: stack)
    }

    /// Redoes the last undone group.
    public func redo() throws {
        try checkQueue("redo()")
        guard let stack = undoStackStorage else { return }
        try processPendingChanges()
        stack.closeGroup()
        guard let group = stack.redoGroups.last else { return }
        let reached = try reachedByDeletions(in: group)
        stack.redoGroups.removeLast()
        let redoGroups = stack.redoGroups
        let inverse = replay(group, on: stack)
        stack.undoGroups.append(inverse)
        stack.redoGroups = redoGroups
        try applyDeleteRules(reaching: reached, recordingIn: inverse, on: stack)
    }

    /// Starts a group that lasts until the matching ``endUndoGrouping()``, across perform
    /// blocks and processed changes. Groups nest; the outermost one is recorded.
    public func beginUndoGrouping() throws {
        try checkQueue("beginUndoGrouping()")
        guard let stack = undoStackStorage else { return }
        if stack.explicitDepth == 0 {
            try processPendingChanges()
            stack.closeGroup()
        }
        stack.explicitDepth += 1
    }

    /// Ends a group started by ``beginUndoGrouping()`` (delete rules of the group's deletes are
    /// applied first, so their effects belong to it).
    public func endUndoGrouping() throws {
        try checkQueue("endUndoGrouping()")
        guard let stack = undoStackStorage, stack.explicitDepth > 0 else { return }
        if stack.explicitDepth == 1 { try processPendingChanges() }
        stack.explicitDepth -= 1
        if stack.explicitDepth == 0 { stack.closeGroup() }
    }

    /// Records `object`'s state before a change: for undo (without an undo stack, nothing),
    /// and at its first change in the event, for ``ManagedObject/changedValuesForCurrentEvent()``
    /// (an object inserted in this event needs nothing: all it holds is new).
    @inline(__always)
    func noteUndoableChange(_ object: ManagedObject) {
        undoStackStorage?.willChange(object, in: self)
        noteChangeInEvent(object)
    }

    /// Ends the automatic group when pending changes have been processed.
    func endAutomaticUndoGroup() {
        guard let stack = undoStackStorage, stack.groupsByEvent, stack.explicitDepth == 0 else { return }
        stack.closeGroup()
    }

    /// Puts back the states `group` recorded and returns a group holding the states replaced.
    private func replay(_ group: UndoGroup, on stack: ContextUndoStack) -> UndoGroup {
        stack.isReplaying = true
        defer { stack.isReplaying = false }
        let inverse = UndoGroup()
        for (object, _) in group.states.values { inverse.record(object, in: self) }
        for (object, state) in group.states.values { restore(object, to: state) }
        return inverse
    }

    /// What the delete rules of the objects `group` deletes (alive now; an undone saved
    /// insert, a redone deletion) reach outside the group, read before it is put back: objects
    /// related to them now — by a merge or a resolved conflict, say — that the group's states
    /// know nothing of. (Without them, a message another context added to a chat whose insert
    /// was then undone kept naming the chat, and the save left it naming a deleted row.) The
    /// group's own objects are left as their states put them, and the relationships are the
    /// objects' current ones, not the recorded: those may be older than changes undone since.
    private func reachedByDeletions(in group: UndoGroup) throws -> [(object: ManagedObject, relationship: RelationshipDescription, destination: ManagedObject)] {
        var reached: [(object: ManagedObject, relationship: RelationshipDescription, destination: ManagedObject)] = []
        for (object, state) in group.states.values
        where state.inContext && state.isDeleted && !state.isDiscardedInsert && object.contextStorage === self && !object.isDeletedStorage {
            // (A fault's to-ones are read too: `destinations(of:_:)` finds none on a fault.)
            try fulfillFaultIfNeeded(object)
            for relationship in object.entity.deletePlan.acting {
                for destination in try destinations(of: object, relationship)
                where group.states[ObjectIdentifier(destination)] == nil && !destination.isDeletedStorage {
                    reached.append((object, relationship, destination))
                }
            }
        }
        return reached
    }

    /// Applies the delete rules found by ``reachedByDeletions(in:)`` once the group is put
    /// back, recording what they change in `inverse`, so that undoing or redoing the replay
    /// brings it back too.
    private func applyDeleteRules(reaching reached: [(object: ManagedObject, relationship: RelationshipDescription, destination: ManagedObject)], recordingIn inverse: UndoGroup, on stack: ContextUndoStack) throws {
        guard !reached.isEmpty else { return }
        stack.replayTarget = inverse
        defer { stack.replayTarget = nil }
        for (object, relationship, destination) in reached where !destination.isDeletedStorage {
            if relationship.hasInverse { try unlinkInverse(of: relationship, at: destination, from: object) }
            if relationship.deleteRule == .cascade { markDeleted(destination, byCascade: true) }
        }
        // The cascaded objects' own rules.
        try processPendingChanges()
    }

    /// Puts back the states `group` recorded, recording nothing: a failed save's own changes.
    func restoreUnrecorded(_ group: UndoGroup) {
        for (object, state) in group.states.values { restore(object, to: state) }
    }

    private func restore(_ object: ManagedObject, to state: ObjectState) {
        // Putting a state back changes the object in this event, as any change does.
        noteChangeInEvent(object)
        let (wasInserted, wasDeleted) = (object.isInsertedStorage, object.isDeletedStorage)
        insertedStorage.remove(object)
        updatedStorage.removeValue(forKey: object.objectID)
        deletedStorage.remove(object)
        discardedInserts.removeValue(forKey: ObjectIdentifier(object))
        pendingDeletes.removeAll { $0 === object }
        if registeredLive(object.objectID) === object { unregister(object) }
        // Written only when it differs (a temporary ID given back): a permanent ID never
        // changes, which is what lets other threads read it (see ManagedObject.objectID);
        // writing it back, equal, raced those reads.
        if object.objectID != state.objectID { object.objectID = state.objectID }
        object.attributeValues = state.attributeValues
        object.toOneValues = state.toOneValues
        object.toManyStates = state.toManyStates
        object.committedSnapshot = state.committedSnapshot
        object.changedAttributeSlots = state.changedAttributeSlots
        object.changedToOneSlots = state.changedToOneSlots
        object.isFaultStorage = state.isFault
        object.isInsertedStorage = state.isInserted
        object.isUpdatedStorage = state.isUpdated
        object.isDeletedStorage = state.isDeleted
        guard state.inContext else {
            object.contextStorage = nil
            changeLog.deleted(object)
            return
        }
        object.contextStorage = self
        // An object whose deletion was saved comes back (undone) as an insert under its ID.
        object.isInaccessibleStorage = false
        if state.isInserted { object.isDeletedByCascadeStorage = false }
        register(object)
        if state.isInserted { insertedStorage.insert(object) }
        if state.isUpdated {
            updatedStorage[object.objectID] = object
            updatedEntries &+= 1
        }
        if state.isDiscardedInsert {
            discardedInserts[ObjectIdentifier(object)] = object
        } else if state.isDeleted {
            deletedStorage.insert(object)
        }
        announceRestored(object, to: state, wasInserted: wasInserted, wasDeleted: wasDeleted)
    }

    /// Lists a restored `object` in the event as what the restore did to it, as Core Data's
    /// undo reports it: a deletion undone brings the object back (inserted), one redone takes
    /// it away again (deleted), as does an insert redone (inserted); other states changed it
    /// (updated, an unsaved insert too, as ``markUpdated(_:)`` reports one). Reported as
    /// updated, an observer keeping a list from the notifications never saw an undone
    /// deletion come back nor a redone one go. (Undone and redone in one event, the object is
    /// in neither set: the change log's rule for an insert deleted in its own event.)
    private func announceRestored(_ object: ManagedObject, to state: ObjectState, wasInserted: Bool, wasDeleted: Bool) {
        if state.isDeleted && !wasDeleted {
            changeLog.deleted(object)
        } else if (state.isInserted && !wasInserted) || (wasDeleted && !state.isDeleted) {
            changeLog.inserted(object)
        } else {
            changeLog.updated(object)
        }
    }
}
