/// Everything an atomic store holds, as plain values: metadata, key counters, and one table of
/// rows per entity hierarchy. A file-backed atomic store encodes and decodes exactly this.
public struct AtomicStoreContents: Sendable, Hashable {
    /// Identity, model hash and user entries.
    public var metadata: StoreMetadata
    /// The next primary key to hand out, per hierarchy root entity.
    public var nextPrimaryKey: [String: Int64]
    /// Rows per hierarchy root entity, by primary key.
    public var tables: [String: [Int64: StoredRow]]

    /// Creates contents.
    public init(metadata: StoreMetadata, nextPrimaryKey: [String: Int64] = [:], tables: [String: [Int64: StoredRow]] = [:]) {
        self.metadata = metadata
        self.nextPrimaryKey = nextPrimaryKey
        self.tables = tables
    }

    /// Empty contents for a new store of `request`'s model.
    public static func empty(for request: StoreOpenRequest, identifier: String) -> AtomicStoreContents {
        AtomicStoreContents(metadata: StoreMetadata(storeIdentifier: identifier, modelVersionHash: request.modelVersionHash))
    }
}

/// One stored row of an atomic store: its concrete entity, version, attribute values and
/// relationship destinations by slot. To-many members are kept for every to-many relationship
/// (both sides of a many-to-many; the single side of a many-to-nil), in order.
public struct StoredRow: Sendable, Hashable {
    /// The concrete entity.
    public var entityName: String
    /// The optimistic-lock version.
    public var version: Int64
    /// Attribute values by slot.
    public var attributes: [AttributeValue]
    /// To-one destinations by slot.
    public var toOne: [ObjectID?]
    /// To-many members by slot.
    public var toMany: [[ObjectID]]

    /// Creates a row.
    public init(entityName: String, version: Int64, attributes: [AttributeValue], toOne: [ObjectID?], toMany: [[ObjectID]]) {
        self.entityName = entityName
        self.version = version
        self.attributes = attributes
        self.toOne = toOne
        self.toMany = toMany
    }
}
