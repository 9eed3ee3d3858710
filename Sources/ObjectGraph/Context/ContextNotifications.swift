import Foundation

extension Notification.Name {
    /// Posted by a context (the notification's `object`) when objects were inserted, changed or
    /// deleted, each time pending changes are processed. `userInfo[ObjectsDidChange.key]` is an
    /// ``ObjectsDidChange``; observe it on the context's queue (it is delivered there).
    public static let objectGraphObjectsDidChange = Notification.Name("ObjectGraph.ObjectsDidChange")
    /// Posted by a context (the notification's `object`, no `userInfo`) when a save is about to
    /// begin, as Core Data's `NSManagedObjectContextWillSave`: on the context's queue, after
    /// pending changes were processed and before any ``ManagedObject/willSave()``. An observer
    /// may still change objects of the context, and the save stores those changes too. Not
    /// posted by a save with nothing to save (which calls no hooks either).
    public static let objectGraphContextWillSave = Notification.Name("ObjectGraph.ContextWillSave")
    /// Posted by a context after a successful save; `userInfo[ContextDidSave.key]` is a
    /// `Sendable` ``ContextDidSave`` listing object IDs, safe to pass to other contexts.
    public static let objectGraphContextDidSave = Notification.Name("ObjectGraph.ContextDidSave")
}

/// What changed in a context since the last objects-did-change notification.
///
/// Holds managed objects, so it is not `Sendable`: use it on the posting context's queue.
///
/// The sets are built when first read: a context posts one of these each time it processes
/// changes, and hashing every inserted or changed object into sets that no observer reads
/// was a tenth of inserting an object (perf).
public struct ObjectsDidChange {
    /// The `userInfo` key.
    public static let key = "changes"
    private let log: ChangeLog.Taken
    private var insertedOverride: Set<ManagedObject>?
    private var updatedOverride: Set<ManagedObject>?
    private var deletedOverride: Set<ManagedObject>?
    private var refreshedOverride: Set<ManagedObject>?

    init(_ log: ChangeLog.Taken) { self.log = log }

    init(inserted: Set<ManagedObject>, updated: Set<ManagedObject>, deleted: Set<ManagedObject>,
         refreshed: Set<ManagedObject> = [], invalidated: Set<ManagedObject> = []) {
        self.log = ChangeLog.Taken(objects: [], marks: [])
        insertedOverride = inserted
        updatedOverride = updated
        deletedOverride = deleted
        refreshedOverride = refreshed
        self.invalidated = invalidated
    }

    /// Objects inserted.
    public var inserted: Set<ManagedObject> {
        get { insertedOverride ?? log.inserted }
        set { insertedOverride = newValue }
    }
    /// Objects changed.
    public var updated: Set<ManagedObject> {
        get { updatedOverride ?? log.updated }
        set { updatedOverride = newValue }
    }
    /// Objects deleted.
    public var deleted: Set<ManagedObject> {
        get { deletedOverride ?? log.deleted }
        set { deletedOverride = newValue }
    }
    /// Objects refreshed (Core Data's `NSRefreshedObjectsKey`): by
    /// ``ManagedObjectContext/refresh(_:mergeChanges:)`` or
    /// ``ManagedObjectContext/refreshAllObjects()`` in this event, whether their unsaved
    /// changes were merged over the stored values or dropped, or taking newer stored values
    /// when another context's save was merged. Inserted objects are never refreshed (the store
    /// has nothing for them), nor are deleted ones (their deletion is still to be saved).
    public var refreshed: Set<ManagedObject> {
        get { refreshedOverride ?? log.refreshed }
        set { refreshedOverride = newValue }
    }
    /// Objects that left the context because a merged save deleted their records.
    public var invalidated: Set<ManagedObject> = []
    /// Whether every object of the context was invalidated (Core Data's
    /// `NSInvalidatedAllObjectsKey`): ``ManagedObjectContext/reset()`` posts it, with empty
    /// sets, and every object an observer holds from the context is detached.
    public var invalidatedAll = false
}

/// What a save wrote, by object ID.
///
/// The IDs are kept as the save lists them (``insertedIDs``, ``updatedIDs``, ``deletedIDs``,
/// each without repeats), and the sets are built when read: a save of 100,000 new objects
/// that nobody observes no longer hashes 100,000 IDs into a set for its notification. Read a
/// set once and keep it when it is needed more than once.
public struct ContextDidSave: Sendable, Hashable {
    /// The `userInfo` key.
    public static let key = "changes"
    /// IDs of inserted objects (permanent), in save order.
    public let insertedIDs: [ObjectID]
    /// IDs of updated objects, in save order.
    public let updatedIDs: [ObjectID]
    /// IDs of deleted objects, in save order.
    public let deletedIDs: [ObjectID]
    /// The unsaved objects the merge policy merged into others to resolve uniqueness
    /// conflicts (see ``MergePolicy``): each one's ID (as its object still reads it) with the
    /// ID of the object holding its values now. Empty for most saves. Not part of equality.
    public let mergedIDs: [ObjectID: ObjectID]

    /// The coordinator the save went through (its ``PersistentStoreCoordinator/saveOrigin``):
    /// its row cache holds the saved rows; any other coordinator's may hold older ones.
    let origin: UUID?
    /// For a child context's save, the token of the parent it landed in: there the saved
    /// changes are that context's own unsaved changes, not another context's stored ones.
    let savedInto: Int?

    /// A save's IDs; each list must hold an ID at most once.
    init(insertedIDs: [ObjectID], updatedIDs: [ObjectID], deletedIDs: [ObjectID], mergedIDs: [ObjectID: ObjectID] = [:], origin: UUID? = nil, savedInto: Int? = nil) {
        self.insertedIDs = insertedIDs
        self.updatedIDs = updatedIDs
        self.deletedIDs = deletedIDs
        self.mergedIDs = mergedIDs
        self.origin = origin
        self.savedInto = savedInto
    }

    /// IDs of inserted objects (permanent).
    public var inserted: Set<ObjectID> { Set(insertedIDs) }
    /// IDs of updated objects.
    public var updated: Set<ObjectID> { Set(updatedIDs) }
    /// IDs of deleted objects.
    public var deleted: Set<ObjectID> { Set(deletedIDs) }

    /// Equal when the same IDs were inserted, updated and deleted, in whatever order.
    public static func == (lhs: ContextDidSave, rhs: ContextDidSave) -> Bool {
        lhs.insertedIDs.count == rhs.insertedIDs.count && lhs.updatedIDs.count == rhs.updatedIDs.count
            && lhs.deletedIDs.count == rhs.deletedIDs.count
            && lhs.inserted == rhs.inserted && lhs.updated == rhs.updated && lhs.deleted == rhs.deleted
    }

    /// Hashes the three sets, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(inserted)
        hasher.combine(updated)
        hasher.combine(deleted)
    }
}

/// Objects touched since the last objects-did-change notification.
///
/// **Threading contract.** A value type owned by one ``ManagedObjectContext`` and used only on
/// its queue, as are the marks it keeps in its objects.
///
/// Each object is listed once, in the order first touched, and carries in
/// ``ManagedObject/changeLogMarks`` which sets it belongs to; the marks follow the set
/// operations they stand for (a deletion takes an object out of the inserted and updated
/// ones, an update of an inserted object is not one). Appending a reference is cheaper than
/// hashing it into a set, and ``ObjectsDidChange`` builds the sets only if read.
struct ChangeLog {
    /// Bits of ``ManagedObject/changeLogMarks``.
    enum Mark {
        static let inserted: UInt8 = 1
        static let updated: UInt8 = 2
        static let deleted: UInt8 = 4
        static let listed: UInt8 = 8
        /// The object's state before its first change in this event is known (see
        /// ``ChangeLog/noteFirstChange(_:)``).
        static let based: UInt8 = 16
        /// Refreshed in this event (``ObjectsDidChange/refreshed``). Not one of ``changes``:
        /// a refresh is not a change of the object's own (``ManagedObject/changedValuesForCurrentEvent()``
        /// reads those marks), though it is reported.
        static let refreshed: UInt8 = 32
        /// Any of the marks that put an object in a notification's sets.
        static let changes: UInt8 = inserted | updated | deleted
        /// Any of the marks that make an object worth a notification.
        static let reported: UInt8 = changes | refreshed
    }

    private var objects: [ManagedObject] = []
    /// The values of objects that had unsaved changes when first changed in this event, by
    /// object (listed, so alive): see ``ChangeLog/noteFirstChange(_:)``.
    var eventBases: [ObjectIdentifier: EventBase] = [:]

    var isEmpty: Bool { objects.isEmpty }

    @inline(__always)
    mutating func list(_ object: ManagedObject) {
        guard object.changeLogMarks & Mark.listed == 0 else { return }
        object.changeLogMarks |= Mark.listed
        objects.append(object)
    }

    mutating func inserted(_ object: ManagedObject) {
        list(object)
        object.changeLogMarks |= Mark.inserted
    }

    mutating func updated(_ object: ManagedObject) {
        guard object.changeLogMarks & Mark.inserted == 0 else { return }
        list(object)
        object.changeLogMarks |= Mark.updated
    }

    /// An object inserted in this same event leaves the event altogether, as in Core Data:
    /// observers were never told it existed, and listed as deleted it named an object no
    /// notification had inserted.
    mutating func deleted(_ object: ManagedObject) {
        list(object)
        let insertedNow = object.changeLogMarks & Mark.inserted != 0
        object.changeLogMarks = object.changeLogMarks & ~(Mark.inserted | Mark.updated) | (insertedNow ? 0 : Mark.deleted)
    }

    /// Takes `object` out of the event's sets: a merged save deleted its record, and the
    /// merge's notification lists it as invalidated. Left marked, the next notification
    /// listed the inaccessible object as updated (or inserted, deleted) again. It stays in the
    /// list, unmarked, which ``take()`` skips.
    mutating func forget(_ object: ManagedObject) {
        guard object.changeLogMarks & Mark.reported != 0 else { return }
        object.changeLogMarks &= ~Mark.reported
        eventBases.removeValue(forKey: ObjectIdentifier(object))
    }

    /// Takes `object` out of the event's updated set: a refresh discarded its changes, and
    /// kept, the next notification listed as updated an object with nothing changed.
    mutating func discardedUpdate(_ object: ManagedObject) {
        object.changeLogMarks &= ~Mark.updated
    }

    /// Lists `object` as refreshed in this event (see ``ObjectsDidChange/refreshed``).
    mutating func refreshed(_ object: ManagedObject) {
        list(object)
        object.changeLogMarks |= Mark.refreshed
    }

    /// Calls `body` with each object refreshed in this event, for a rollback, which ends the
    /// event without posting the log yet must still announce those refreshes.
    func forEachRefreshed(_ body: (ManagedObject) -> Void) {
        for object in objects where object.changeLogMarks & Mark.refreshed != 0 { body(object) }
    }

    /// The log so far, handed to a notification (`nil` when it lists only objects whose
    /// changes came to nothing); the log starts over: a new event begins.
    mutating func take() -> ObjectsDidChange? {
        var marks: [UInt8] = []
        marks.reserveCapacity(objects.count)
        var changed = false
        objects.forEachUnretained { object in
            let mark = object.changeLogMarks
            if mark & Mark.reported != 0 { changed = true }
            marks.append(mark)
            object.changeLogMarks = 0
        }
        if !eventBases.isEmpty { eventBases = [:] }
        defer { objects = [] }
        return changed ? ObjectsDidChange(Taken(objects: objects, marks: marks)) : nil
    }

    /// Forgets the log (a rollback or reset), clearing the objects' marks.
    mutating func discard() {
        objects.forEachUnretained { $0.changeLogMarks = 0 }
        objects = []
        if !eventBases.isEmpty { eventBases = [:] }
    }

    /// A taken log: the objects and their marks, made into sets on first use.
    final class Taken {
        private let objects: [ManagedObject]
        private let marks: [UInt8]

        init(objects: [ManagedObject], marks: [UInt8]) {
            self.objects = objects
            self.marks = marks
        }

        lazy var inserted: Set<ManagedObject> = select(Mark.inserted)
        lazy var updated: Set<ManagedObject> = select(Mark.updated)
        lazy var deleted: Set<ManagedObject> = select(Mark.deleted)
        lazy var refreshed: Set<ManagedObject> = select(Mark.refreshed)

        private func select(_ mark: UInt8) -> Set<ManagedObject> {
            var set = Set<ManagedObject>()
            for (object, marks) in zip(objects, self.marks) where marks & mark != 0 { set.insert(object) }
            return set
        }
    }
}
