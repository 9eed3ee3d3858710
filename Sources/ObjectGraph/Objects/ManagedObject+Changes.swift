import Foundation
import OrderedCollections

/// What changed: since the last save (``changedValues()``, ``hasPersistentChangedValues``),
/// since the current event began (``changedValuesForCurrentEvent()``), and what the store held
/// (``committedValues(forKeys:)``).
///
/// As in Core Data, only persistent properties count: transient ones are never saved, so they
/// have no unsaved change. A property set and set back to the value it is measured against
/// counts as unchanged.
extension ManagedObject {
    /// The unsaved changes: key → new value, for stored properties changed since the last save
    /// (to-many relationships as the current member set, read if need be).
    public func changedValues() throws -> [String: Any?] {
        let context = try requireContext("changedValues()")
        return try values(changedSince: committedBase, context: context)
    }

    /// The changes of the current event: key → new value, for stored properties changed since
    /// the context last processed its pending changes (Core Data's
    /// `changedValuesForCurrentEvent()`: since the last objects-did-change notification, which
    /// ``ManagedObjectContext/processPendingChanges()`` posts — at the end of every perform
    /// block, before fetches, at save). For an object inserted in this event, that is
    /// everything ``changedValues()`` lists; after a save, nothing.
    ///
    /// Core Data's documentation has said both that the values are the new ones (its current
    /// reference) and the old ones (its earlier one); these are the new ones, as
    /// ``changedValues()`` gives, so the two can be compared key by key. The old ones are
    /// ``committedValues(forKeys:)`` for an object saved since the event began.
    public func changedValuesForCurrentEvent() throws -> [String: Any?] {
        let context = try requireContext("changedValuesForCurrentEvent()")
        let marks = changeLogMarks
        if marks & ChangeLog.Mark.inserted != 0 { return try changedValues() }
        guard marks & (ChangeLog.Mark.based | ChangeLog.Mark.changes) != 0 else { return [:] }
        // No values kept: the object had no unsaved changes when the event began, so its
        // changes since the save are the event's (see ChangeLog+Events).
        guard let base = context.changeLog.eventBases[ObjectIdentifier(self)] else { return try changedValues() }
        return try values(changedSince: base, context: context)
    }

    /// Whether ``changedValues()`` has anything: a stored attribute or relationship differs
    /// from what was last saved (Core Data's `hasPersistentChangedValues`). Changes to
    /// transient properties alone leave it `false`, though they make the object
    /// ``isUpdated``; so does a change set back to the saved value. Nothing is loaded to
    /// answer. Stops the process when used off the context's queue, as typed properties do.
    public var hasPersistentChangedValues: Bool {
        guard withContext({ $0.requireQueue("\(objectID).hasPersistentChangedValues") }) != nil else { return false }
        var found = false
        forEachPersistentChange(since: committedBase) { _ in
            found = true
            return false
        }
        return found
    }

    /// The last saved values of `keys` (every attribute and relationship when `nil`); empty
    /// for an object never saved.
    ///
    /// A to-many relationship's value is its committed members, as Core Data gives them: a
    /// `Set<ManagedObject>`, or for an ordered one an `OrderedSet<ManagedObject>` in the
    /// stored order — the members the object's unsaved additions, removals and moves are
    /// measured against, whatever the current members are. Members come as faults when not
    /// registered; the relationship itself is not loaded. Loaded members without unsaved
    /// changes need no round trip; otherwise the store (for a child context, the parent) is
    /// asked for the members it holds.
    /// A transient to-many, never stored, has no committed value and is left out.
    public func committedValues(forKeys keys: [String]? = nil) throws -> [String: Any?] {
        let context = try requireContext("committedValues(forKeys:)")
        try context.fulfillFaultForAccess(self)
        guard let committed = committedSnapshot else { return [:] }
        var result: [String: Any?] = [:]
        let wanted = keys ?? (entity.attributes.map(\.name) + entity.toOneRelationships.map(\.name) + entity.toManyRelationships.map(\.name))
        for key in wanted {
            switch try property(key) {
            case .attribute(let a): result[key] = try a.userValue(committed.attributes[a.slot])
            case .relationship(let r) where !r.isToMany: result[key] = committed.toOne[r.slot].map(context.registeredOrFault) as Any?
            case .relationship(let r) where r.isTransient: continue
            case .relationship(let r):
                let members = try context.committedMemberIDs(of: self, r).map(context.registeredOrFault)
                result[key] = r.isOrdered ? OrderedSet(members) as Any : Set(members) as Any
            }
        }
        return result
    }

    /// The committed row as a base to measure changes against (none for a new object: every
    /// changed property counts).
    private var committedBase: EventBase {
        let committed = committedSnapshot
        return EventBase(attributes: committed?.attributes, toOne: committed?.toOne, toMany: nil)
    }

    /// Key → current value for each persistent property changed since `base`.
    private func values(changedSince base: EventBase, context: ManagedObjectContext) throws -> [String: Any?] {
        var result: [String: Any?] = [:]
        try forEachPersistentChange(since: base) { property in
            switch property {
            case .attribute(let attribute):
                result[attribute.name] = try attribute.userValue(attributeValues[attribute.slot])
            case .relationship(let relationship) where relationship.isToMany:
                result[relationship.name] = try value(forKey: relationship.name)
            case .relationship(let relationship):
                result[relationship.name] = toOneValues[relationship.slot].map(context.registeredOrFault) as Any?
            }
            return true
        }
        return result
    }

    /// Calls `body` with each persistent property whose value differs from `base`'s, until it
    /// returns `false`. Only properties changed since the last save, or changed since the save
    /// at the base (and so perhaps put back since, by an undo), can differ from the base;
    /// to-many ones are compared by their recorded changes, so none is loaded.
    private func forEachPersistentChange(since base: EventBase, _ body: (EntityDescription.Property) throws -> Bool) rethrows {
        if !isFaultStorage {
            // Whether to go on after the attribute in `slot`.
            func attribute(_ slot: Int) throws -> Bool {
                let attribute = entity.attributes[slot]
                if attribute.isTransient { return true }
                if let old = base.attributes, old[slot].isIdentical(to: attributeValues[slot]) { return true }
                return try body(.attribute(attribute))
            }
            // Whether to go on after the to-one in `slot`.
            func toOne(_ slot: Int) throws -> Bool {
                let relationship = entity.toOneRelationships[slot]
                if relationship.isTransient { return true }
                if let old = base.toOne, old[slot] == toOneValues[slot] { return true }
                return try body(.relationship(relationship))
            }
            for slot in changedAttributeSlots { guard try attribute(slot) else { return } }
            for slot in base.changedAttributeSlots where !changedAttributeSlots.contains(slot) { guard try attribute(slot) else { return } }
            for slot in changedToOneSlots { guard try toOne(slot) else { return } }
            for slot in base.changedToOneSlots where !changedToOneSlots.contains(slot) { guard try toOne(slot) else { return } }
        }
        for relationship in entity.toManyRelationships where !relationship.isTransient {
            let state = toManyStates[relationship.slot]
            if let old = base.toMany?[relationship.slot] {
                if old.hasSameChanges(as: state) { continue }
            } else if !state.hasChanges {
                continue
            }
            guard try body(.relationship(relationship)) else { return }
        }
    }

}
