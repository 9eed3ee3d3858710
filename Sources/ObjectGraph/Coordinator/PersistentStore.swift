import Foundation

/// The one boundary a backend implements: a narrow, value-typed interface to stored rows.
///
/// A store never sees a context or a managed object — only ``ObjectID``s, ``RowSnapshot``s,
/// ``StoreFetchRequest``s and ``StoreChangeSet``s. Everything with meaning (inverses, delete
/// rules, validation, predicate semantics) is decided above this line; a store records what it
/// is given and answers what it is asked.
///
/// **Threading contract.** A store is created by its ``StoreDescription`` and then called by
/// its coordinator from any thread. Writing calls (``save(_:)``, ``allocatePrimaryKeys(rootEntity:count:)``)
/// never run concurrently with each other. Without ``StoreCapabilities/concurrentReaders`` the
/// coordinator calls the store one call at a time; with it, reading calls (``fetch(_:)``,
/// ``snapshots(for:)``, ``snapshot(for:)``, ``relatedIDs(for:of:)``, ``metadata()``) may run concurrently with each
/// other and with a write, and each must see a consistent state (the last committed save, not
/// part of one). A store must therefore be `Sendable`, and protect its own state for whatever
/// concurrency it declares.
public protocol PersistentStore: AnyObject, Sendable {
    /// The store's UUID, kept in its metadata for its whole life; permanent object IDs carry it.
    var identifier: String { get }
    /// What the store can do; the shared layer does the rest.
    var capabilities: StoreCapabilities { get }
    /// The store's metadata as last read or written.
    func metadata() throws -> StoreMetadata
    /// Reserves `count` consecutive primary keys for the hierarchy rooted at `rootEntity` and
    /// returns the first. Keys are never reused, even if the save that used them fails — while
    /// the store is open; across a close and reopen only where the counter is written when
    /// keys are allocated (SQLite, LMDB). An ``AtomicStore`` (the binary file) writes its
    /// counters with its next successful save, so keys allocated since then (an ID from
    /// `obtainPermanentIDs(for:)`, a failed save) are handed out again after reopening.
    func allocatePrimaryKeys(rootEntity: String, count: Int) throws -> Int64
    /// Answers a fetch. A store that cannot evaluate the predicate (or sort, or range) natively
    /// says so in ``StoreFetchResult/applied``, and the shared layer completes the work.
    func fetch(_ request: StoreFetchRequest) throws -> StoreFetchResult
    /// The stored rows for `ids`, in one round trip; IDs without a row are left out.
    func snapshots(for ids: [ObjectID]) throws -> [RowSnapshot]
    /// The stored row for `id`, `nil` if there is none: one fault. The default asks
    /// ``snapshots(for:)``; a store answers it without the two arrays when it can.
    func snapshot(for id: ObjectID) throws -> RowSnapshot?
    /// The members of a to-many relationship for each source, in order for ordered ones: one
    /// list per source, in the order of `sources` (a source named twice gets its list twice).
    /// Only existing rows are returned; a source without members, or not in this store, gets
    /// an empty list. (Lists by position, not a dictionary by ID: hashing every source in and
    /// out again was a tenth of prefetching 10,000 students' subjects beyond the read itself.)
    func relatedIDs(for relationship: RelationshipDescription, of sources: [ObjectID]) throws -> [[ObjectID]]
    /// How many rows of `entity` (and of its sub-entities, with `includesSubentities`) have
    /// their to-one `relationship` set to `owner` — `count(for:)` of `relationship == owner`,
    /// asked before any ``StoreFetchRequest`` is built, for a store that keeps the
    /// relationship's members and so answers it without a fetch. `nil`, the default, sends
    /// the count through ``fetch(_:)``; it is asked only of a store declaring
    /// ``StoreCapabilities/countsRelationshipRows``. A reading call, like ``fetch(_:)``.
    func countRows(of entity: EntityDescription, includesSubentities: Bool, where relationship: RelationshipDescription, is owner: ObjectID) throws -> Int?
    /// Applies one change set atomically, after checking every expected version; on any
    /// failure nothing changes and a ``StoreError`` (``StoreError/Code/conflict`` for
    /// versions) is thrown.
    func save(_ changes: StoreChangeSet) throws
    /// ``save(_:)``, calling `check` first, inside the store's write transaction, with a fetch
    /// that reads it: what `check` finds cannot change before the changes land, whoever else
    /// writes the store (another coordinator, another process). The coordinator checks
    /// uniqueness constraints this way. When `check` throws, nothing is written. The default
    /// calls `check` with ``fetch(_:)`` before ``save(_:)``: enough for a store that only one
    /// coordinator writes (each coordinator's saves are serialized). Called on the saving
    /// thread; `check` and its fetch run there, inside the call.
    func save(_ changes: StoreChangeSet, checking check: (_ fetch: (StoreFetchRequest) throws -> StoreFetchResult) throws -> Void) throws
    /// How many times the store has seen that another connection or process committed to its
    /// data (one not through this store object): the coordinator drops its cached rows when
    /// the count moves, so a fetch after another process's save reads that save's rows, as
    /// the store itself does. Counted as the store notices, at its reads and writes. `0`, the
    /// default, for a store that only its own coordinator writes. Any thread.
    func foreignCommitCount() -> UInt64
    /// Releases files and handles. Further calls throw ``StoreError/Code/closed``.
    func close()
}

extension PersistentStore {
    /// `0`: only this store object writes its data (see the requirement).
    public func foreignCommitCount() -> UInt64 { 0 }

    /// The check with ``fetch(_:)``, then ``save(_:)`` (see the requirement).
    public func save(_ changes: StoreChangeSet, checking check: (_ fetch: (StoreFetchRequest) throws -> StoreFetchResult) throws -> Void) throws {
        try check { try fetch($0) }
        try save(changes)
    }

    /// One row through ``snapshots(for:)``.
    public func snapshot(for id: ObjectID) throws -> RowSnapshot? {
        try snapshots(for: [id]).first
    }

    /// `nil`: counted through ``fetch(_:)``.
    public func countRows(of entity: EntityDescription, includesSubentities: Bool, where relationship: RelationshipDescription, is owner: ObjectID) throws -> Int? {
        nil
    }
}

/// What a store can do natively; declared by the store, never discovered by casting.
public struct StoreCapabilities: OptionSet, Sendable, Hashable {
    /// The raw bits.
    public let rawValue: Int
    /// Creates capabilities from raw bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Data survives closing and reopening the store.
    public static let persistent = StoreCapabilities(rawValue: 1 << 0)
    /// Reads may run concurrently with each other.
    public static let concurrentReaders = StoreCapabilities(rawValue: 1 << 1)
    /// Several processes may use the store at once.
    public static let multiProcess = StoreCapabilities(rawValue: 1 << 2)
    /// A completed save survives a crash of the process.
    public static let durable = StoreCapabilities(rawValue: 1 << 3)
    /// The store evaluates predicates itself (fully or partly; see ``StoreFetchResult/applied``).
    public static let evaluatesPredicates = StoreCapabilities(rawValue: 1 << 4)
    /// The store sorts results itself.
    public static let sorts = StoreCapabilities(rawValue: 1 << 5)
    /// All rows live in memory and the whole set is loaded and written at once.
    public static let atomic = StoreCapabilities(rawValue: 1 << 6)
    /// The store answers grouped, aggregated fetches (``StoreFetchRequest/ResultType/groups(_:)``).
    public static let groups = StoreCapabilities(rawValue: 1 << 7)
    /// Reading a row by ID costs about what a row-cache lookup costs (the store's pages are
    /// memory-mapped, as LMDB's are): while every attached store declares it, the coordinator
    /// keeps no row cache (``RowCache/isBypassed``), since caching would only add a lookup and
    /// an insert to every read, and memory the store's own mapping already holds.
    public static let cheapRowReads = StoreCapabilities(rawValue: 1 << 8)
    /// The store answers ``PersistentStore/countRows(of:includesSubentities:where:is:)``
    /// (a count of `toOne == object` from the relationship's members); without it the
    /// coordinator never asks, and such counts go through ``PersistentStore/fetch(_:)``.
    public static let countsRelationshipRows = StoreCapabilities(rawValue: 1 << 9)
}

/// A store's metadata: identity, the model it holds, and user entries.
public struct StoreMetadata: Sendable, Hashable, Codable {
    /// The store's UUID.
    public var storeIdentifier: String
    /// The ``ManagedObjectModel/versionHash(configuration:)`` of the model the data was written with.
    public var modelVersionHash: String
    /// Free-form entries set by the application.
    public var userInfo: [String: String]

    /// Creates metadata.
    public init(storeIdentifier: String, modelVersionHash: String, userInfo: [String: String] = [:]) {
        self.storeIdentifier = storeIdentifier
        self.modelVersionHash = modelVersionHash
        self.userInfo = userInfo
    }
}

/// What a backend needs to open a store.
public struct StoreOpenRequest: Sendable {
    /// The model.
    public var model: ManagedObjectModel
    /// The configuration the store holds (`nil`: every entity).
    public var configuration: String?
    /// The store's file, for stores that have one.
    public var url: URL?
    /// Backend-specific options, by name.
    public var options: [String: String]

    /// The entities this store holds.
    public var entities: [EntityDescription] { model.entities(inConfiguration: configuration) }
    /// The version hash a new store records and an existing one must match.
    public var modelVersionHash: String { model.versionHash(configuration: configuration) }
}

/// How to create a store: its kind, location, configuration and options. Backends add
/// factory methods (`StoreDescription.inMemory()`, `.sqlite(at:)`, …).
public struct StoreDescription: Sendable {
    /// The store kind's name ("memory", "sqlite", …), for messages and the command-line tool.
    public var type: String
    /// The store's file, for stores that have one.
    public var url: URL?
    /// The configuration the store holds; `nil` for every entity.
    public var configuration: String?
    /// Backend-specific options.
    public var options: [String: String]
    let open: @Sendable (StoreOpenRequest) throws -> any PersistentStore

    /// Creates a description from a backend's opening function.
    public init(
        type: String, url: URL? = nil, configuration: String? = nil, options: [String: String] = [:],
        open: @escaping @Sendable (StoreOpenRequest) throws -> any PersistentStore
    ) {
        self.type = type
        self.url = url
        self.configuration = configuration
        self.options = options
        self.open = open
    }

    /// The same description holding configuration `name`.
    public func configuration(_ name: String?) -> StoreDescription {
        var copy = self
        copy.configuration = name
        return copy
    }
}

extension ManagedObjectModel {
    /// The version hash of a configuration's entities (every entity for `nil`).
    public func versionHash(configuration: String?) -> String {
        guard configuration != nil else { return versionHash }
        var hash = StableHash()
        for entity in entities(inConfiguration: configuration).sorted(by: { $0.name < $1.name }) {
            hash.combine(entity.versionHash)
        }
        return hash.hex
    }
}
