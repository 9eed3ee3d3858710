/// A fetch as a store sees it: one entity, a predicate, sort keys and a range.
public struct StoreFetchRequest: Sendable {
    /// What to return.
    public enum ResultType: Sendable, Hashable {
        /// Object IDs only.
        case objectIDs
        /// Object IDs with their row snapshots (so faults need no second round trip).
        case snapshots
        /// Only the number of rows the fetch would return (matching rows, after the offset,
        /// at most the limit).
        case count
        /// One row per group (see ``StoreGrouping``), asked only of stores declaring
        /// ``StoreCapabilities/groups``; the predicate applies, sort keys and range do not.
        case groups(StoreGrouping)
    }

    /// The entity fetched.
    public var entity: EntityDescription { didSet { compiledForm = nil } }
    /// Whether rows of sub-entities are included.
    public var includesSubentities: Bool
    /// The filter, `nil` for every row.
    public var predicate: FetchPredicate? { didSet { compiledForm = nil } }
    /// The order; ties are always broken by primary key, ascending.
    public var sortKeys: [SortKey] { didSet { compiledForm = nil } }
    /// The predicate and sort keys compiled against ``entity``, kept so that a request the
    /// context compiled (to check it) is not compiled again by every store; cleared when
    /// any of them changes.
    private var compiledForm: Compiled?

    /// A request's predicate and sort keys, compiled.
    public struct Compiled: Sendable {
        /// The compiled predicate; `nil` for every row.
        public let predicate: CompiledPredicate?
        /// The compiled sort.
        public let sort: CompiledSort
    }
    /// Rows to skip after sorting.
    public var offset: Int
    /// The most rows to return, `nil` for no limit.
    public var limit: Int?
    /// What to return.
    public var resultType: ResultType

    /// Creates a request.
    public init(
        entity: EntityDescription, includesSubentities: Bool = true, predicate: FetchPredicate? = nil,
        sortKeys: [SortKey] = [], offset: Int = 0, limit: Int? = nil, resultType: ResultType = .objectIDs
    ) {
        self.entity = entity
        self.includesSubentities = includesSubentities
        self.predicate = predicate
        self.sortKeys = sortKeys
        self.offset = offset
        self.limit = limit
        self.resultType = resultType
    }

    /// What a ``ResultType/count`` answer holds when `matching` rows match: the rows left
    /// after the offset, at most the limit — the number a fetch would return.
    public func rangedCount(_ matching: Int) -> Int {
        let afterOffset = max(0, matching - max(offset, 0))
        return limit.map { min(afterOffset, max($0, 0)) } ?? afterOffset
    }

    /// The predicate and sort keys compiled against ``entity`` in `model` (the coordinator's):
    /// the form compiled earlier for this request if there is one, else compiled now.
    public func compiled(in model: ManagedObjectModel) throws -> Compiled {
        if let compiledForm { return compiledForm }
        return try compiledNow(in: model)
    }

    /// Compiles the predicate and sort keys now (throwing for unknown keys and type
    /// mismatches) and keeps the result for the stores.
    public mutating func compile(in model: ManagedObjectModel) throws {
        // Checked without copying the kept form out (a retain and release of its parts).
        if case .some = compiledForm { return }
        compiledForm = try compiledNow(in: model)
    }

    private func compiledNow(in model: ManagedObjectModel) throws -> Compiled {
        Compiled(
            predicate: try predicate.map { try CompiledPredicate.compile($0, for: entity, in: model) },
            sort: try CompiledSort.compile(sortKeys, for: entity, in: model))
    }

    /// The entity names whose rows qualify.
    public var entityNames: Set<String> {
        includesSubentities ? entity.hierarchyNames : [entity.name]
    }
}

/// A store's answer to a ``StoreFetchRequest``.
public struct StoreFetchResult: Sendable {
    /// Which parts of the request the store carried out.
    public struct Applied: OptionSet, Sendable, Hashable {
        /// The raw bits.
        public let rawValue: Int
        /// Creates a set from raw bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Rows were filtered by the predicate.
        public static let predicate = Applied(rawValue: 1)
        /// Rows are in sort-key order (ties by primary key).
        public static let sort = Applied(rawValue: 2)
        /// Offset and limit were applied (only meaningful with predicate and sort applied).
        public static let range = Applied(rawValue: 4)
        /// Everything.
        public static let all: Applied = [.predicate, .sort, .range]
    }

    /// Matching IDs (for ``StoreFetchRequest/ResultType/objectIDs``).
    public var objectIDs: [ObjectID]
    /// Matching rows (for ``StoreFetchRequest/ResultType/snapshots``, or whenever the store
    /// did not apply the predicate or sort, so the shared layer can).
    public var snapshots: [RowSnapshot]
    /// The count (for ``StoreFetchRequest/ResultType/count``).
    public var count: Int
    /// The groups (for ``StoreFetchRequest/ResultType/groups(_:)``): per group its keys, then
    /// its aggregates; `nil` when the store declined this grouping. A store may give the
    /// groups stretches of one shared array (``AttributeValues/init(sharing:from:count:)``).
    public var groups: [AttributeValues]?
    /// What the store carried out.
    public var applied: Applied

    /// Creates a result.
    public init(objectIDs: [ObjectID] = [], snapshots: [RowSnapshot] = [], count: Int = 0, groups: [AttributeValues]? = nil, applied: Applied) {
        self.objectIDs = objectIDs
        self.snapshots = snapshots
        self.count = count
        self.groups = groups
        self.applied = applied
    }
}
