/// The current event's changes, for ``ManagedObject/changedValuesForCurrentEvent()``.
///
/// An event runs from one ``ManagedObjectContext/processPendingChanges()`` (the end of a
/// perform block, a fetch, a save) to the next, as in Core Data, where it ends with the
/// objects-did-change notification. What an object changed in it is measured against what it
/// held before its first change in the event:
///
/// - an object inserted in this event: everything it holds is new, and nothing is kept;
/// - an object without unsaved changes (fetched, or saved since): it holds its committed row,
///   so its changes since the save are the event's, and nothing is kept either — the common
///   case of fetching, changing and saving in one block costs a flag;
/// - an object with unsaved changes from an earlier event: its values then are kept, sharing
///   the value arrays (a retain each, and a copy when it changes next).
extension ChangeLog {
    /// Notes that `object` is about to change for the first time in this event (see above).
    /// Out of line: only an object's first change in an event comes here.
    @inline(never)
    mutating func noteFirstChange(_ object: ManagedObject) {
        list(object)
        object.changeLogMarks |= Mark.based
        guard object.hasChanges || !object.changedAttributeSlots.isEmpty || !object.changedToOneSlots.isEmpty else { return }
        eventBases[ObjectIdentifier(object)] = EventBase(object)
    }
}

extension ManagedObjectContext {
    /// Notes `object`'s change for ``ManagedObject/changedValuesForCurrentEvent()``: a test of
    /// its marks, except at its first change in the event.
    @inline(__always)
    func noteChangeInEvent(_ object: ManagedObject) {
        guard object.changeLogMarks & (ChangeLog.Mark.inserted | ChangeLog.Mark.based) == 0 else { return }
        changeLog.noteFirstChange(object)
    }
}

/// What changes are measured against: the committed row (changes since the last save) or
/// what an object held before its first change in the current event.
struct EventBase {
    /// Attribute values by slot; `nil` when not known (a fault), and every changed slot counts.
    var attributes: AttributeValues?
    /// To-one destinations by slot; `nil` as for ``attributes``.
    var toOne: ToOneValues?
    /// To-many states by slot; `nil` when any recorded membership change counts.
    var toMany: [ToManyState]?
    /// The attribute and to-one slots changed since the save at the base: a property can
    /// differ from the base without differing from the saved row (an undo putting the saved
    /// value back), so these are compared too. Empty for the committed row.
    var changedAttributeSlots: SlotSet = []
    var changedToOneSlots: SlotSet = []

    init(attributes: AttributeValues?, toOne: ToOneValues?, toMany: [ToManyState]?) {
        self.attributes = attributes
        self.toOne = toOne
        self.toMany = toMany
    }

    /// What `object` holds now.
    init(_ object: ManagedObject) {
        if !object.isFaultStorage {
            attributes = object.attributeValues
            toOne = object.toOneValues
            changedAttributeSlots = object.changedAttributeSlots
            changedToOneSlots = object.changedToOneSlots
        }
        toMany = object.toManyStates
    }
}

extension ToManyState {
    /// Whether `other` records the same changes (additions, removals, and a reordering to the
    /// same order): the relationship did not change between the two.
    func hasSameChanges(as other: ToManyState) -> Bool {
        guard orderChanged == other.orderChanged, removed == other.removed, added == other.added else { return false }
        return !orderChanged || members == other.members
    }
}
