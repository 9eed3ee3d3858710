/// Undo and redo through the context's ``ContextUndoStack``.
extension ManagedObjectContext {
    /// Undoes the last group of changes (pending changes are processed first, ending the open
    /// group). Does nothing without an undo stack or with nothing to undo.
    public func undo() throws {
        try checkQueue("undo()")
        guard let stack = undoStackStorage else { return }
        try processPendingChanges()
        stack.closeGroup()
        guard let group = stack.undoGroups.popLast() else { return }
        stack.redoGroups.append(replay(group, on: stack))
    }

    /// Redoes the last undone group.
    public func redo() throws {
        try checkQueue("redo()")
        guard let stack = undoStackStorage else { return }
        try processPendingChanges()
        stack.closeGroup()
        guard let group = stack.redoGroups.popLast() else { return }
        let redoGroups = stack.redoGroups
        stack.undoGroups.append(replay(group, on: stack))
        stack.redoGroups = redoGroups
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

    /// Puts back the states `group` recorded, recording nothing: a failed save's own changes.
    func restoreUnrecorded(_ group: UndoGroup) {
        for (object, state) in group.states.values { restore(object, to: state) }
    }

    private func restore(_ object: ManagedObject, to state: ObjectState) {
        // Putting a state back changes the object in this event, as any change does.
        noteChangeInEvent(object)
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
        if state.isInserted { changeLog.inserted(object) } else { changeLog.updated(object) }
    }
}
