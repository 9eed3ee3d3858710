import OrderedCollections

/// A context's undo and redo history (Foundation has no `UndoManager` on Linux).
///
/// Each group records, for every object changed in it, the object's whole state before its
/// first change in the group: values, relationship states, change flags and whether it was in
/// the context. Undoing puts those states back — so inverse relationships and the objects a
/// delete rule cascaded to or nullified come back too — and records the states it replaced
/// for redo.
///
/// Groups: by default (``groupsByEvent``) a group ends each time the context processes pending
/// changes, which it does at the end of every `perform`/`performAndWait` block, before fetches
/// and at save; ``ManagedObjectContext/beginUndoGrouping()`` and
/// ``ManagedObjectContext/endUndoGrouping()`` make one group of everything in between. A
/// save, ``ManagedObjectContext/rollback()`` and ``ManagedObjectContext/reset()`` clear the
/// history (what was saved is not undone by the context). Merged changes are not recorded.
///
/// **Threading contract.** A stack belongs to one context and is used on that context's queue.
/// Main-queue contexts get one by default; private-queue (background) contexts have none
/// unless one is assigned to ``ManagedObjectContext/undoStack``.
public final class ContextUndoStack {
    /// The most groups kept (the oldest are dropped); 0 keeps every group.
    public var levelsOfUndo = 0
    /// Whether a group ends whenever the context processes pending changes.
    public var groupsByEvent = true

    var undoGroups: [UndoGroup] = []
    var redoGroups: [UndoGroup] = []
    var current: UndoGroup?
    var explicitDepth = 0
    var isReplaying = false

    /// Creates an empty stack.
    public init() {}

    /// Whether there is something to undo.
    public var canUndo: Bool { !undoGroups.isEmpty || !(current?.isEmpty ?? true) }
    /// Whether there is something to redo.
    public var canRedo: Bool { !redoGroups.isEmpty }
    /// The number of complete groups that can be undone.
    public var undoCount: Int { undoGroups.count }

    /// Forgets every group.
    public func removeAllActions() {
        undoGroups = []
        redoGroups = []
        current = nil
    }

    /// Records `object`'s state before its first change in the open group.
    func willChange(_ object: ManagedObject, in context: ManagedObjectContext) {
        guard !isReplaying else { return }
        if current == nil {
            current = UndoGroup()
            redoGroups = []
        }
        current!.record(object, in: context)
    }

    /// Ends the open group, if it holds anything.
    func closeGroup() {
        guard let group = current else { return }
        current = nil
        guard !group.isEmpty else { return }
        undoGroups.append(group)
        if levelsOfUndo > 0 && undoGroups.count > levelsOfUndo { undoGroups.removeFirst(undoGroups.count - levelsOfUndo) }
    }

    /// Replaces temporary IDs in recorded states (after permanent IDs were obtained).
    func remap(_ map: TemporaryIDMap) {
        for group in undoGroups + redoGroups + (current.map { [$0] } ?? []) { group.remap(map) }
    }
}

/// The states of the objects one group changed.
final class UndoGroup {
    var states: OrderedDictionary<ObjectIdentifier, (object: ManagedObject, state: ObjectState)> = [:]

    var isEmpty: Bool { states.isEmpty }

    func record(_ object: ManagedObject, in context: ManagedObjectContext) {
        let key = ObjectIdentifier(object)
        guard states[key] == nil else { return }
        states[key] = (object, ObjectState(of: object, in: context))
    }

    func remap(_ map: TemporaryIDMap) {
        for key in states.keys { states[key]!.state.remap(map) }
    }
}

/// Everything about one object that a change can alter.
struct ObjectState {
    var inContext: Bool
    var objectID: ObjectID
    var attributeValues: AttributeValues
    var toOneValues: ToOneValues
    var toManyStates: [ToManyState]
    var committedSnapshot: RowSnapshot?
    var changedAttributeSlots: SlotSet
    var changedToOneSlots: SlotSet
    var isFault: Bool
    var isInserted: Bool
    var isUpdated: Bool
    var isDeleted: Bool
    var isDiscardedInsert: Bool

    init(of object: ManagedObject, in context: ManagedObjectContext) {
        inContext = object.contextStorage === context
        objectID = object.objectID
        attributeValues = object.attributeValues
        toOneValues = object.toOneValues
        toManyStates = object.toManyStates
        committedSnapshot = object.committedSnapshot
        changedAttributeSlots = object.changedAttributeSlots
        changedToOneSlots = object.changedToOneSlots
        isFault = object.isFaultStorage
        isInserted = object.isInsertedStorage
        isUpdated = object.isUpdatedStorage
        isDeleted = object.isDeletedStorage
        isDiscardedInsert = context.discardedInserts[ObjectIdentifier(object)] != nil
    }

    mutating func remap(_ map: TemporaryIDMap) {
        if let new = map[objectID] { objectID = new }
        for slot in toOneValues.indices { if let id = toOneValues[slot], let new = map[id] { toOneValues[slot] = new } }
        for slot in toManyStates.indices { toManyStates[slot].remap(map) }
    }
}
