/// The stored values of one record, as stores hand them to the shared layer and back.
///
/// Values are indexed by slot (``AttributeDescription/slot``, ``RelationshipDescription/slot``
/// for to-one relationships), never by name. Transient attributes are `.null` in snapshots.
/// To-many memberships are not part of a snapshot; they travel through
/// ``PersistentStore/relatedIDs(for:of:)`` and ``ToManyChange``.
public struct RowSnapshot: Sendable, Hashable {
    /// The record's permanent ID.
    public var objectID: ObjectID
    /// The optimistic-lock version: 1 after insert, +1 at each stored update. A store never
    /// hands up a row below 1: the shared layer reads a negative version as "no saved row" and
    /// leaves such an object's update out of the save (a stored one out of range is damage;
    /// the conformance kit's `persistence.versionsStartAtOneAndCountSaves` checks the count).
    public var version: Int64

    /// Whether a stored row may hold `version`: from 1 (a row read at another was saved over
    /// without a word), below Int64.max (counting past it overflowed). The built-in stores
    /// refuse any other as damage when they read the row (the fuzz tests).
    @inlinable
    public static func isStoredVersion(_ version: Int64) -> Bool { version >= 1 && version < Int64.max }
    /// Attribute values by slot (possibly a stretch of an array shared with other rows of
    /// one answer, see ``AttributeValues``).
    public var attributes: AttributeValues
    /// To-one destinations by slot (`nil` for none).
    public var toOne: ToOneValues

    /// Creates a snapshot.
    @inlinable
    public init(objectID: ObjectID, version: Int64, attributes: AttributeValues, toOne: ToOneValues) {
        self.objectID = objectID
        self.version = version
        self.attributes = attributes
        self.toOne = toOne
    }

    /// Creates a snapshot of an array of values.
    @inlinable
    public init(objectID: ObjectID, version: Int64, attributes: [AttributeValue], toOne: ToOneValues) {
        self.init(objectID: objectID, version: version, attributes: AttributeValues(attributes), toOne: toOne)
    }
}

/// One save's worth of changes to a store: it lands whole or not at all.
///
/// The shared layer has already applied every rule (inverses, delete rules, validation);
/// a store only records the rows and memberships it is given, and checks versions.
public struct StoreChangeSet: Sendable {
    /// New rows, at version 1.
    public var inserted: [RowSnapshot] = []
    /// Changed rows: the new values (at `expectedVersion + 1`) and the version they were read at.
    public var updated: [RowUpdate] = []
    /// Rows to delete. A store also drops the deleted rows' own to-many memberships, and any
    /// membership pointing at a deleted row in a relationship without an inverse.
    public var deleted: [RowDeletion] = []
    /// Membership changes of to-many relationships (both sides of a many-to-many appear).
    public var toMany: [ToManyChange] = []
    /// User metadata to store with the save (`nil` to leave it alone).
    public var userMetadata: [String: String]? = nil

    /// Creates an empty change set.
    public init() {}

    /// Whether there is nothing to write.
    public var isEmpty: Bool {
        inserted.isEmpty && updated.isEmpty && deleted.isEmpty && toMany.isEmpty && userMetadata == nil
    }
}

/// A changed row in a ``StoreChangeSet``.
public struct RowUpdate: Sendable {
    /// The new values; `values.version == expectedVersion + 1`.
    public var values: RowSnapshot
    /// The version the context read; a store holding another version reports a conflict.
    public var expectedVersion: Int64
    /// The attribute slots whose values differ from the row at `expectedVersion`, or `nil`
    /// when not known (every attribute then counts as changed). A store may write only these:
    /// the version check guarantees that every other value is already stored.
    public var changedAttributes: SlotSet?
    /// The to-one slots whose destinations differ from the row at `expectedVersion`, or `nil`
    /// when not known; as for ``changedAttributes``.
    public var changedToOne: SlotSet?

    /// Creates an update; `nil` change sets count every value as changed.
    public init(values: RowSnapshot, expectedVersion: Int64, changedAttributes: SlotSet? = nil, changedToOne: SlotSet? = nil) {
        self.values = values
        self.expectedVersion = expectedVersion
        self.changedAttributes = changedAttributes
        self.changedToOne = changedToOne
    }
}

/// A deleted row in a ``StoreChangeSet``.
public struct RowDeletion: Sendable {
    /// The record to delete.
    public var objectID: ObjectID
    /// The version the context read, when it read one; checked like an update's.
    public var expectedVersion: Int64?

    /// Creates a deletion.
    public init(objectID: ObjectID, expectedVersion: Int64?) {
        self.objectID = objectID
        self.expectedVersion = expectedVersion
    }
}

/// Membership changes of one to-many relationship of one source row.
public struct ToManyChange: Sendable {
    /// The source row.
    public var source: ObjectID
    /// The relationship (its `slot` indexes the source entity's to-many relationships).
    public var relationship: RelationshipDescription
    /// Members added. Adding a present member is a no-op; adding a member whose row does not
    /// exist (deleted by a save that landed first) is dropped, as deleting a row drops the
    /// memberships pointing at it — a store never keeps a membership in a missing row.
    public var added: [ObjectID]
    /// Members removed. Removing an absent member is a no-op.
    public var removed: [ObjectID]
    /// For ordered relationships: the new order of the members, complete as the context knew
    /// them. Members it does not name and ``removed`` does not list (another save added them
    /// since the context read the list) keep their membership, after the named ones in their
    /// stored order (``ordered(_:by:)``): every store applies it so.
    public var order: [ObjectID]?

    /// `members` (a list's members after the change's removals and additions, in stored order
    /// then added) in `order`: the members `order` names in its order, then the others as they
    /// were. A store's whole answer to ``order``; names that are not members are ignored.
    public static func ordered(_ members: [ObjectID], by order: [ObjectID]) -> [ObjectID] {
        var position: [ObjectID: Int] = [:]
        position.reserveCapacity(order.count)
        for (index, id) in order.enumerated() where position[id] == nil { position[id] = index }
        // (Sorted by the positions just found: every member kept here has one.)
        let named = members.filter { position[$0] != nil }.sorted { position[$0]! < position[$1]! }
        return named + members.filter { position[$0] == nil }
    }

    /// Creates a change.
    public init(source: ObjectID, relationship: RelationshipDescription, added: [ObjectID], removed: [ObjectID], order: [ObjectID]?) {
        self.source = source
        self.relationship = relationship
        self.added = added
        self.removed = removed
        self.order = order
    }
}
