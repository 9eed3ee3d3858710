import Foundation

/// Merging what other contexts saved, by object ID, manually or automatically.
extension ManagedObjectContext {
    /// Whether the context merges, on its own queue, what other contexts save into the same
    /// target — the same coordinator for root contexts, the same parent for child contexts —
    /// and what a child's parent saves (Core Data's name; a root's "parent" is its coordinator).
    ///
    /// Each such ``Foundation/Notification/Name/objectGraphContextDidSave`` schedules ``mergeChanges(fromContextDidSave:)`` on this context's queue
    /// (like ``enqueue(_:)``), so the merge has happened once a later `perform` or
    /// `performAndWait` block runs. A merge that fails to read the store leaves the objects as
    /// they were (they are refreshed when next refreshed or merged). Settable from any thread,
    /// as the rest of the configuration (ManagedObjectContext+Configuration): it is applied on
    /// the context's queue.
    public var automaticallyMergesChangesFromParent: Bool {
        get { onQueue { automaticMerge != nil } }
        set {
            onQueue {
                guard newValue != (automaticMerge != nil) else { return }
                automaticMerge = newValue ? AutomaticMerge(self) : nil
            }
        }
    }

    /// Brings another context's save into this one (call on this context's queue; the payload
    /// is `Sendable`, so it may come from any thread).
    ///
    /// - Updated objects registered here with loaded values take the stored values, keeping
    ///   this context's own unsaved changes on top; their read version becomes the stored one
    ///   (so saving them later does not conflict with the merged save). Loaded to-many
    ///   relationships are reloaded when next touched.
    /// - Deleted objects leave the context: their unsaved changes here are dropped, references
    ///   to them from other objects are cleared, and touching one afterwards through key-value
    ///   access throws ``ObjectGraphError/Code/objectInaccessible``; its typed accessors read
    ///   no destinations (and empty values, if it was still a fault) — never a crash. A new
    ///   fault for such an ID, fired, becomes a deleted object with empty values (or fails with
    ///   ``ObjectGraphError/Code/objectNotFound``: see ``shouldDeleteInaccessibleFaults``).
    /// - Inserted objects are registered here as faults, as Core Data's merge "faults in"
    ///   newly inserted objects (fetches would find them in the store anyway): that is what
    ///   lets the notification name them.
    ///
    /// Afterwards ``Foundation/Notification/Name/objectGraphObjectsDidChange`` lists, as Core
    /// Data's merge does, the inserted objects that were not registered here before the merge
    /// in ``ObjectsDidChange/inserted`` (one already registered was announced when it came),
    /// the deleted (and uniqueness-merged) objects that were registered in
    /// ``ObjectsDidChange/deleted`` and, since they left the context, in
    /// ``ObjectsDidChange/invalidated`` as well, and the updated objects given the stored values
    /// in ``ObjectsDidChange/refreshed``. An observer keeping a list of objects from these
    /// notifications sees the other context's inserts and deletions (it saw neither before).
    ///
    /// A child's save merged into its own parent does nothing: the parent holds those changes
    /// already, as unsaved ones. A child merging a sibling's save (both save into one parent,
    /// as ``automaticallyMergesChangesFromParent`` does) sees the parent's objects: the IDs
    /// are permanent (a child obtains them from the store when it saves), and the inserts
    /// are faults read from the parent; one the parent discarded since (rollback, reset,
    /// deletion) reads as an object deleted elsewhere does.
    public func mergeChanges(fromContextDidSave changes: ContextDidSave) throws {
        try checkQueue("mergeChanges(fromContextDidSave:)")
        // A child's save into this context: its changes are already here, as this context's
        // unsaved ones. Merged as another context's stored save, its deletions were dropped
        // from the pending deletions (as if the rows were gone), and the next save kept them.
        if changes.savedInto == token { return }
        var invalidated: Set<ManagedObject> = []
        var inserted: Set<ManagedObject> = []
        if !changes.deletedIDs.isEmpty {
            for id in changes.deletedIDs {
                coordinator.rowCache.remove(id)
                if let object = registeredLive(id) { invalidated.insert(object) }
            }
            try dropObjectsDeletedElsewhere(changes.deleted)
        }
        // Objects the save merged into others (uniqueness upserts) have no row of their own:
        // here they leave the context as deleted ones do (kept live, they answered with values
        // no store holds). Stored to-ones naming them are kept: the saved rows name the
        // survivor, and the updated objects' rows read below bring it in.
        if !changes.mergedIDs.isEmpty {
            let merged = Set(changes.mergedIDs.keys)
            for id in merged {
                coordinator.rowCache.remove(id)
                if let object = registeredLive(id) { invalidated.insert(object) }
            }
            try dropObjectsDeletedElsewhere(merged, keepingStoredToOnes: true, rowsDeleted: false)
        }
        // A save through another coordinator (another container on the same store file, or
        // another process) left this coordinator's cached rows of the objects it updated as
        // they were: drop them, or a fault (registered or made later) fires with the old values.
        if changes.origin != coordinator.saveOrigin && !changes.updatedIDs.isEmpty {
            coordinator.rowCache.remove(changes.updatedIDs)
        }
        for id in changes.insertedIDs {
            let (object, isNew) = lookUpOrFault(id)
            if isNew { inserted.insert(object) }
        }
        var refreshed: Set<ManagedObject> = []
        defer { postMerged(inserted: inserted, refreshed: refreshed, invalidated: invalidated) }
        var stale: [ManagedObject] = []
        for id in changes.updatedIDs {
            guard let object = registeredLive(id), object.belongs(to: self), !object.isDeletedStorage else { continue }
            if object.isFaultStorage {
                for slot in object.toManyStates.indices { object.toManyStates[slot].unload() }
                undoStackStorage?.rebase(object, onto: nil)
            } else {
                stale.append(object)
            }
        }
        guard !stale.isEmpty else { return }
        // A child's rows come from its parent, whose versions a sibling's save does not bump:
        // read them again and install them whatever their version.
        let nested = parentStorage != nil
        if nested { coordinator.rowCache.remove(stale.map(\.objectID)) }
        var fresh: [ObjectID: RowSnapshot] = [:]
        var unread: [ObjectID] = []
        for object in stale {
            if !nested, let cached = coordinator.rowCache.snapshot(for: object.objectID),
               cached.version > (object.committedVersion ?? 0) {
                fresh[object.objectID] = cached
            } else {
                unread.append(object.objectID)
            }
        }
        if !unread.isEmpty {
            statisticsStorage.storeRoundTrips += 1
            for row in try coordinator.snapshots(for: unread) { fresh[row.objectID] = row }
        }
        for object in stale {
            // No row: deleted by a later save, whose own notification merges that.
            guard let row = fresh[object.objectID], nested || row.version > (object.committedVersion ?? 0) else { continue }
            install(row, keepingChangesOf: object)
            undoStackStorage?.rebase(object, onto: row)
            refreshed.insert(object)
        }
    }

    /// Tells observers which objects a merge brought in, refreshed or invalidated (those are
    /// the deleted ones too: see ``mergeChanges(fromContextDidSave:)``).
    private func postMerged(inserted: Set<ManagedObject>, refreshed: Set<ManagedObject>, invalidated: Set<ManagedObject>) {
        guard !inserted.isEmpty || !refreshed.isEmpty || !invalidated.isEmpty else { return }
        let changes = ObjectsDidChange(inserted: inserted, updated: [], deleted: invalidated, refreshed: refreshed, invalidated: invalidated)
        NotificationCenter.default.post(name: .objectGraphObjectsDidChange, object: self, userInfo: [ObjectsDidChange.key: changes])
    }

    /// Installs a newer stored row under `object`'s unsaved changes. Transient properties are
    /// left as they are, as Core Data's `refresh(_:mergeChanges: true)` leaves them (which its
    /// merges and `shouldRefreshRefetchedObjects` use): the row holds nothing for them, and
    /// taking its empty values wiped a transient set in `awakeFromFetch()` or before a save
    /// (neither leaves it among the changed slots) at every merge or refreshing fetch.
    func install(_ row: RowSnapshot, keepingChangesOf object: ManagedObject) {
        let entity = object.entity
        for slot in object.attributeValues.indices where !object.changedAttributeSlots.contains(slot) && !entity.transientAttributeSlots.contains(slot) {
            object.attributeValues[slot] = row.attributes[slot]
        }
        for slot in object.toOneValues.indices where !object.changedToOneSlots.contains(slot) && !entity.transientToOneSlots.contains(slot) {
            object.toOneValues[slot] = row.toOne[slot]
        }
        // Recorded membership changes stay and are replayed on the reloaded members.
        for relationship in entity.toManyRelationships where !relationship.isTransient { object.toManyStates[relationship.slot].unload() }
        object.committedSnapshot = row
    }
}

/// The observer behind ``ManagedObjectContext/automaticallyMergesChangesFromParent``; removing
/// it (when merging is turned off or the context goes away) stops the merges.
final class AutomaticMerge {
    private let observer: any NSObjectProtocol

    init(_ context: ManagedObjectContext) {
        // What the context saves into and its parent, taken now, on the thread turning merging
        // on (both are fixed for the context's life). The observer runs on the thread of every
        // context that saves, of any coordinator; reading this context's properties there, for
        // saves that do not concern it, was a data race under ThreadSanitizer (nothing orders
        // this context's creation before an unrelated context's save). It reads only the
        // sender, on the sender's own queue, and these.
        let target = ObjectIdentifier(context.saveTarget)
        let parent = context.parent.map(ObjectIdentifier.init)
        observer = NotificationCenter.default.addObserver(forName: .objectGraphContextDidSave, object: nil, queue: nil) { [weak context] note in
            guard let sender = note.object as? ManagedObjectContext,
                  ObjectIdentifier(sender.saveTarget) == target || ObjectIdentifier(sender) == parent,
                  let context, sender !== context,
                  let changes = note.userInfo?[ContextDidSave.key] as? ContextDidSave else { return }
            context.enqueue { [weak context] in try? context?.mergeChanges(fromContextDidSave: changes) }
        }
    }

    deinit { NotificationCenter.default.removeObserver(observer) }
}
