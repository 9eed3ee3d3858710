import Foundation

extension Notification.Name {
    /// Posted by a context (the notification's `object`) when objects were inserted, changed or
    /// deleted, each time pending changes are processed. `userInfo[ObjectsDidChange.key]` is an
    /// ``ObjectsDidChange``; observe it on the context's queue (it is delivered there).
    public static let objectGraphObjectsDidChange = Notification.Name("ObjectGraph.ObjectsDidChange")
    /// Posted by a context after a successful save; `userInfo[ContextDidSave.key]` is a
    /// `Sendable` ``ContextDidSave`` listing object IDs, safe to pass to other contexts.
    public static let objectGraphContextDidSave = Notification.Name("ObjectGraph.ContextDidSave")
}

/// What changed in a context since the last objects-did-change notification.
///
/// Holds managed objects, so it is not `Sendable`: use it on the posting context's queue.
public struct ObjectsDidChange {
    /// The `userInfo` key.
    public static let key = "changes"
    /// Objects inserted.
    public var inserted: Set<ManagedObject>
    /// Objects changed.
    public var updated: Set<ManagedObject>
    /// Objects deleted.
    public var deleted: Set<ManagedObject>
    /// Objects that took newer stored values when another context's save was merged.
    public var refreshed: Set<ManagedObject> = []
    /// Objects that left the context because a merged save deleted their records.
    public var invalidated: Set<ManagedObject> = []
}

/// What a save wrote, by object ID.
public struct ContextDidSave: Sendable, Hashable {
    /// The `userInfo` key.
    public static let key = "changes"
    /// IDs of inserted objects (permanent).
    public var inserted: Set<ObjectID>
    /// IDs of updated objects.
    public var updated: Set<ObjectID>
    /// IDs of deleted objects.
    public var deleted: Set<ObjectID>
}

/// Objects touched since the last objects-did-change notification.
struct ChangeLog {
    // Sets of objects (hashed by identity), handed to the notification as they are: building
    // them from dictionaries at each notification hashed every inserted object a second time.
    var inserted: Set<ManagedObject> = []
    var updated: Set<ManagedObject> = []
    var deleted: Set<ManagedObject> = []

    var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

    mutating func inserted(_ object: ManagedObject) { inserted.insert(object) }
    mutating func updated(_ object: ManagedObject) {
        if inserted.isEmpty || !inserted.contains(object) { updated.insert(object) }
    }
    mutating func deleted(_ object: ManagedObject) {
        // (An empty set is not probed: a cascade deletes thousands of objects none of which
        // was inserted or changed since the last notification.)
        if !inserted.isEmpty { inserted.remove(object) }
        if !updated.isEmpty { updated.remove(object) }
        deleted.insert(object)
    }

    mutating func take() -> ObjectsDidChange {
        defer { self = ChangeLog() }
        return ObjectsDidChange(inserted: inserted, updated: updated, deleted: deleted)
    }
}
