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
/// ``ManagedObjectContext/endUndoGrouping()`` make one group of everything in between.
/// ``ManagedObjectContext/rollback()`` and ``ManagedObjectContext/reset()`` clear the history;
/// a save keeps it, as Core Data's does: undoing a saved change makes it an unsaved change
/// again, which the next save stores (an undone insert becomes a deletion, an undone deletion
/// an insert under the same ID, with its cascade and relationships). To do that exactly, a save
/// by a context with a history reads the stored members of each to-many it changes on an
/// object the history records (one read per relationship), and the values of recorded objects
/// it deletes that are still faults. Many-to-nil memberships *in other objects* of an object
/// whose deletion was saved are not brought back by undoing it (the store dropped them with
/// the row, and nothing in this context recorded them). Because saves keep it, the history of
/// a long import grows with every object imported: set ``levelsOfUndo``, or give the importing
/// context no stack (`undoStack = nil`), as with Core Data's undo manager. Merged changes are
/// not recorded, and undo does not take them back: a merge rebases the recorded states on the
/// rows it brings in, and forgets the objects it deletes.
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
    /// While an undo or redo applies delete rules after putting states back, the group that
    /// records what they change (the replay's inverse), instead of a new group.
    var replayTarget: UndoGroup?

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
        if let target = replayTarget {
            target.record(object, in: context)
            return
        }
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
        for group in allGroups { group.remap(map) }
    }

    /// Rebases `object`'s recorded states on what a merge (or a refresh keeping changes) brought
    /// in: values a state had not changed take `row`'s, its read version becomes `row`'s, and
    /// loaded to-many members are read again (a state's own membership changes stay). Undo then
    /// takes back this context's changes only — not the values another context saved, which
    /// it put back as they were before the merge (a stale view, inverses out of step with the
    /// store, and a conflict at the next save since the read version went back too).
    /// `row` is `nil` when only the members changed (an object still a fault).
    func rebase(_ object: ManagedObject, onto row: RowSnapshot?) {
        let key = ObjectIdentifier(object)
        for group in allGroups where group.states[key] != nil { group.states[key]!.state.rebase(onto: row, of: object.entity) }
    }

    /// Whether a group holds a state of `object`.
    func records(_ object: ManagedObject) -> Bool {
        let key = ObjectIdentifier(object)
        return allGroups.contains { $0.states[key] != nil }
    }

    /// Forgets the objects a merged save deleted: their states leave every group (undo must not
    /// put an object whose record is gone back in the context) and other states' references
    /// to them are cleared, as ``ManagedObjectContext/clearReferences(to:keepingStoredToOnes:)`` clears the objects'.
    func forget(_ ids: Set<ObjectID>) {
        guard !ids.isEmpty else { return }
        for group in allGroups {
            group.states.removeAll { ids.contains($0.value.state.objectID) }
            for key in group.states.keys { group.states[key]!.state.clearReferences(to: ids) }
        }
        undoGroups.removeAll(where: \.isEmpty)
        redoGroups.removeAll(where: \.isEmpty)
    }

    var allGroups: [UndoGroup] { undoGroups + redoGroups + (current.map { [$0] } ?? []) }
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

    /// See ``ContextUndoStack/rebase(_:onto:)`` (as ``ManagedObjectContext/install(_:keepingChangesOf:)``
    /// does for the object itself).
    /// Transient properties keep their recorded values, as the object's own do (the row has
    /// none for them).
    mutating func rebase(onto row: RowSnapshot?, of entity: EntityDescription) {
        for relationship in entity.toManyRelationships where !relationship.isTransient && relationship.slot < toManyStates.count {
            toManyStates[relationship.slot].unload()
        }
        guard let row, inContext, !isFault, !isInserted,
              attributeValues.count == row.attributes.count, toOneValues.count == row.toOne.count else { return }
        for slot in attributeValues.indices where !changedAttributeSlots.contains(slot) && !entity.transientAttributeSlots.contains(slot) {
            attributeValues[slot] = row.attributes[slot]
        }
        for slot in toOneValues.indices where !changedToOneSlots.contains(slot) && !entity.transientToOneSlots.contains(slot) {
            toOneValues[slot] = row.toOne[slot]
        }
        committedSnapshot = row
    }

    /// Removes `ids` (deleted by a merged save) from the recorded values.
    mutating func clearReferences(to ids: Set<ObjectID>) {
        for slot in toOneValues.indices { if let id = toOneValues[slot], ids.contains(id) { toOneValues[slot] = nil } }
        for slot in toManyStates.indices {
            var state = toManyStates[slot]
            guard state.members.map({ !$0.isDisjoint(with: ids) }) ?? false || !state.added.isDisjoint(with: ids) || !state.removed.isDisjoint(with: ids) else { continue }
            state.members?.removeAll { ids.contains($0) }
            state.added.removeAll { ids.contains($0) }
            state.removed.subtract(ids)
            toManyStates[slot] = state
        }
    }

    mutating func remap(_ map: TemporaryIDMap) {
        if let new = map[objectID] { objectID = new }
        for slot in toOneValues.indices { if let id = toOneValues[slot], let new = map[id] { toOneValues[slot] = new } }
        for slot in toManyStates.indices { toManyStates[slot].remap(map) }
    }
}
