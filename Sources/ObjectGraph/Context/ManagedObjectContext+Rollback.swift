/// Discarding changes: Core Data's `rollback()` and `reset()`.
extension ManagedObjectContext {
    /// Discards every unsaved change: inserted objects leave the context, changed and deleted
    /// ones become faults again holding what the store holds.
    public func rollback() {
        requireQueue("rollback()")
        for object in insertedStorage {
            unregister(object)
            object.contextStorage = nil
            object.isInsertedStorage = false
        }
        for object in discardedInserts.values {
            unregister(object)
            object.contextStorage = nil
            object.isDeletedStorage = false
        }
        for object in Array(updatedStorage.values) + Array(deletedStorage) {
            object.isUpdatedStorage = false
            object.isDeletedStorage = false
            object.turnIntoFaultCallingHooks()
        }
        forgetPendingChanges()
        undoStackStorage?.removeAllActions()
    }

    /// Forgets every object: the context returns to its freshly created state. Objects the app
    /// still holds are detached (touching them throws or stops with "objectInaccessible").
    public func reset() {
        requireQueue("reset()")
        // Unsaved changes are forgotten with the objects: a detached object is no longer
        // inserted, updated or deleted (it kept saying so, with `hasChanges` true, though no
        // save can ever store it), as rollback leaves the objects it detaches.
        for object in Array(insertedStorage) + Array(updatedStorage.values) + Array(deletedStorage) + Array(discardedInserts.values) {
            object.isInsertedStorage = false
            object.isUpdatedStorage = false
            object.isDeletedStorage = false
        }
        for object in liveRegisteredObjects() {
            object.contextStorage = nil
            object.isInaccessibleStorage = true
        }
        // Released after the registry is empty again (see ObjectRegistry).
        let registered = registry.removeAll()
        recentlyReached = []
        recentlyReachedNext = 0
        reachedCache.removeAll()
        batchGroups = [:]
        retained = [:]
        sweepThreshold = 4096
        undoStackStorage?.removeAllActions()
        forgetPendingChanges()
        withExtendedLifetime(registered) {}
    }

    /// Empties the lists of pending changes and the current event's log; the objects in them
    /// were put back or detached by the caller.
    private func forgetPendingChanges() {
        insertedStorage.removeAll()
        updatedStorage = [:]
        deletedStorage.removeAll()
        pendingDeletes = []
        discardedInserts = [:]
        uniquenessMerges = []
        handedOverIDs = [:]
        changeLog.discard()
    }
}
