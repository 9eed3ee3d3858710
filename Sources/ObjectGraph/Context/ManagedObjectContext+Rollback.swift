import Foundation

/// Discarding changes: Core Data's `rollback()` and `reset()`, and what they tell observers.
///
/// Both end the current event without posting it: its changes are gone, so reporting them
/// (and then their reversal) would name objects for nothing. What they post instead describes
/// the context as it is afterwards, measured against what earlier notifications told
/// observers.
extension ManagedObjectContext {
    /// Discards every unsaved change: inserted objects leave the context, changed and deleted
    /// ones become faults again holding what the store holds.
    ///
    /// Then posts ``Foundation/Notification/Name/objectGraphObjectsDidChange`` (when it has
    /// anything to say), as Core Data does, so that a list kept from those notifications
    /// stays right:
    /// - ``ObjectsDidChange/deleted``: the inserted objects that leave the context, those an
    ///   earlier notification listed as inserted (one inserted in the current event was never
    ///   announced, so its going is not either: the rule for an object inserted and deleted in
    ///   one event);
    /// - ``ObjectsDidChange/inserted``: the deleted objects that come back, those an earlier
    ///   notification listed as deleted;
    /// - ``ObjectsDidChange/refreshed``: every other object whose unsaved changes were dropped
    ///   (it shows the stored values again, as after ``refresh(_:mergeChanges:)`` without
    ///   merging), and every object refreshed earlier in the current event that the rollback
    ///   does not already name: that event's notification would have listed it, and the
    ///   rollback ends the event in its place.
    ///
    /// Core Data documents only that a change notification is posted; which key carries which
    /// object is its observed behaviour (what its fetched-results controller relies on to
    /// drop the rows of rolled-back inserts). Listing reverted updates as refreshed rather than
    /// updated is a choice: they hold no unsaved change afterwards.
    public func rollback() {
        requireQueue("rollback()")
        // Built as a taken change log: the sets are only made if an observer reads them.
        var reported: [ManagedObject] = []
        var marks: [UInt8] = []
        for object in insertedStorage where object.changeLogMarks & ChangeLog.Mark.inserted == 0 {
            reported.append(object)
            marks.append(ChangeLog.Mark.deleted)
        }
        for object in deletedStorage {
            reported.append(object)
            let announced = object.changeLogMarks & ChangeLog.Mark.deleted == 0
            marks.append(announced ? ChangeLog.Mark.inserted : ChangeLog.Mark.refreshed)
        }
        for object in updatedStorage.values {
            reported.append(object)
            marks.append(ChangeLog.Mark.refreshed)
        }
        // An object with unsaved changes is named above (or, inserted in this event, never
        // announced), whatever a refresh did to it.
        changeLog.forEachRefreshed { object in
            guard !object.isInsertedStorage, !object.isUpdatedStorage, !object.isDeletedStorage else { return }
            reported.append(object)
            marks.append(ChangeLog.Mark.refreshed)
        }
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
        guard !reported.isEmpty else { return }
        post(ObjectsDidChange(ChangeLog.Taken(objects: reported, marks: marks)))
    }

    /// Forgets every object: the context returns to its freshly created state. Objects the app
    /// still holds are detached (touching them throws or stops with "objectInaccessible").
    ///
    /// Then, if the context had registered objects, posts
    /// ``Foundation/Notification/Name/objectGraphObjectsDidChange`` with
    /// ``ObjectsDidChange/invalidatedAll`` set and empty sets, as Core Data posts
    /// `NSInvalidatedAllObjectsKey`: every object an observer holds from this context is
    /// invalid, and listing them one by one would cost a set as large as the context for what
    /// one flag says. (Whether Core Data posts for a context with no objects is undocumented;
    /// here nothing is posted then, there being nothing to invalidate.)
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
        let live = liveRegisteredObjects()
        for object in live {
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
        guard !live.isEmpty else { return }
        var changes = ObjectsDidChange(ChangeLog.Taken(objects: [], marks: []))
        changes.invalidatedAll = true
        post(changes)
    }

    private func post(_ changes: ObjectsDidChange) {
        NotificationCenter.default.post(name: .objectGraphObjectsDidChange, object: self, userInfo: [ObjectsDidChange.key: changes])
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
