/// The membership changes of to-many relationships whose inverse is a to-one, derived from
/// the to-ones a save writes: for stores that keep such a to-many as a list of its own (the
/// atomic stores, LMDB).
///
/// SQLite keeps such a to-many as the foreign keys of its members' rows: it cannot list a row
/// its to-one does not name. A store that keeps the list itself must keep it the same way,
/// moving a row from the list of the owner its stored to-one named to the list of the one its
/// new to-one names, rather than applying the to-many changes the context recorded: those can
/// contradict the to-ones saved with them (after a merge policy chose one save's to-one, both
/// saves' additions were kept, listing a row under two owners; a refreshed row's owners kept
/// their recorded changes). A store feeds every saved row's old and new to-ones to
/// ``moved(_:of:from:to:)``, skips the recorded changes of the to-manys ``isFollowing(_:)``
/// names (keeping their order, ``order(_:relationship:_:)``), and applies ``changes`` with
/// ``members(_:after:)``.
///
/// **Threading contract.** A value built and used within one save, on the store's queue.
public struct ForeignKeyFollowers {
    private let model: ManagedObjectModel
    /// Per entity (by identity): its stored to-ones whose inverse is a stored to-many.
    private var followed: [ObjectIdentifier: [(toOne: Int, inverse: RelationshipDescription)]] = [:]
    private var lastFollowed: (entity: ObjectIdentifier, toOnes: [(toOne: Int, inverse: RelationshipDescription)])?
    /// The changes, one per owner and to-many, in the order they were first touched.
    public private(set) var changes: [ToManyChange] = []
    private var positions: [Key: Int] = [:]
    /// The last change touched: a save's rows come grouped by owner (a chat's messages), so
    /// most rows find their change without hashing.
    private var last: (key: Key, position: Int)?

    private struct Key: Hashable {
        let owner: ObjectID
        let slot: Int
    }

    /// Follows the to-manys of `model`.
    public init(model: ManagedObjectModel) {
        self.model = model
    }

    /// Whether `relationship` is a stored to-many whose members follow their stored to-one
    /// inverse: its recorded changes are to be skipped, but for their order.
    public func isFollowing(_ relationship: RelationshipDescription) -> Bool {
        guard relationship.isToMany, !relationship.isTransient, relationship.hasInverse, !relationship.inverseIsToMany,
              let inverse = model.inverse(of: relationship) else { return false }
        return !inverse.isTransient
    }

    /// Whether `entity` has to-ones that lists follow (most rows of a store with none skip
    /// ``moved(_:of:from:to:)`` altogether).
    public mutating func hasFollowedToOnes(_ entity: EntityDescription) -> Bool {
        !followedToOnes(of: entity).isEmpty
    }

    /// Notes that the row `id` of `entity` had the to-ones `old` (empty: none, a new row) and
    /// now has `new` (empty: none, a deleted row), by slot.
    public mutating func moved(_ id: ObjectID, of entity: EntityDescription, from old: ToOneValues, to new: ToOneValues) {
        moved(id, of: entity) { slot in
            (slot < old.count ? old[slot] : nil, slot < new.count ? new[slot] : nil)
        }
    }

    /// ``moved(_:of:from:to:)`` for a row a save inserts (no to-ones before), given its ID and
    /// to-ones rather than the whole row: a row taken out of a change set's array to be passed
    /// was copied whole (a tenth of an LMDB bulk insert's save, perf), and still was when
    /// borrowed from the array's storage.
    public mutating func inserted(_ id: ObjectID, toOne: borrowing ToOneValues, of entity: EntityDescription) {
        // (No closure over the to-ones: capturing them copied them.)
        for (slot, inverse) in followedToOnes(of: entity) {
            guard slot < toOne.count, let owner = toOne[slot] else { continue }
            edit(owner, inverse) { $0.added.append(id) }
        }
    }

    /// ``moved(_:of:from:to:)`` for to-ones kept in arrays.
    public mutating func moved(_ id: ObjectID, of entity: EntityDescription, from old: [ObjectID?], to new: [ObjectID?]) {
        moved(id, of: entity) { slot in
            (slot < old.count ? old[slot] : nil, slot < new.count ? new[slot] : nil)
        }
    }

    private mutating func moved(_ id: ObjectID, of entity: EntityDescription, values: (Int) -> (before: ObjectID?, after: ObjectID?)) {
        for (slot, inverse) in followedToOnes(of: entity) {
            let (before, after) = values(slot)
            guard before != after else { continue }
            if let before { edit(before, inverse) { $0.removed.append(id) } }
            if let after { edit(after, inverse) { $0.added.append(id) } }
        }
    }

    /// Keeps the context's order of `owner`'s `relationship`, to apply to the members the
    /// to-ones give.
    public mutating func order(_ owner: ObjectID, relationship: RelationshipDescription, _ order: [ObjectID]) {
        edit(owner, relationship) { $0.order = order }
    }

    /// The members a followed to-many holds after `change` (one of ``changes``), given the
    /// ones it held `before`: those leaving go, those joining are appended, and then the
    /// context's order, if it gave one, applies to the members it names; any other member
    /// (one a concurrent save added) keeps its place after them.
    public static func members(_ before: [ObjectID], after change: ToManyChange) -> [ObjectID] {
        var members = before
        if !change.removed.isEmpty {
            let leaving = Set(change.removed)
            members.removeAll { leaving.contains($0) }
        }
        if !change.added.isEmpty {
            var present = Set(members)
            for id in change.added where present.insert(id).inserted { members.append(id) }
        }
        guard let order = change.order else { return members }
        return ToManyChange.ordered(members, by: order)
    }

    @inline(__always)
    private mutating func edit(_ owner: ObjectID, _ relationship: RelationshipDescription, _ body: (inout ToManyChange) -> Void) {
        let key = Key(owner: owner, slot: relationship.slot)
        if let last, last.key == key {
            body(&changes[last.position])
            return
        }
        let position: Int
        if let known = positions[key] {
            position = known
        } else {
            position = changes.count
            positions[key] = position
            changes.append(ToManyChange(source: owner, relationship: relationship, added: [], removed: [], order: nil))
        }
        last = (key, position)
        body(&changes[position])
    }

    private mutating func followedToOnes(of entity: EntityDescription) -> [(toOne: Int, inverse: RelationshipDescription)] {
        // (Rows come in runs of one entity: the last answer is checked before the table.)
        if let lastFollowed, lastFollowed.entity == ObjectIdentifier(entity) { return lastFollowed.toOnes }
        if let known = followed[ObjectIdentifier(entity)] {
            lastFollowed = (ObjectIdentifier(entity), known)
            return known
        }
        let found: [(toOne: Int, inverse: RelationshipDescription)] = entity.toOneRelationships.compactMap { toOne in
            guard !toOne.isTransient, toOne.hasInverse, toOne.inverseIsToMany, let inverse = model.inverse(of: toOne),
                  isFollowing(inverse) else { return nil }
            return (toOne.slot, inverse)
        }
        followed[ObjectIdentifier(entity)] = found
        return found
    }
}
