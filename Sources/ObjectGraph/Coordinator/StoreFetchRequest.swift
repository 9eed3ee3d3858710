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
    public var entity: EntityDescription { didSet { forget() } }
    /// Whether rows of sub-entities are included.
    public var includesSubentities: Bool
    /// The filter, `nil` for every row.
    public var predicate: FetchPredicate? { didSet { forget() } }
    /// The order; ties are always broken by primary key, ascending.
    public var sortKeys: [SortKey] { didSet { forget() } }
    /// The predicate and sort keys compiled against ``entity``, kept so that a request the
    /// context compiled (to check it) is not compiled again by every store; cleared when
    /// any of them changes.
    private var compiledForm: Compiled?
    /// The predicate as a ``ToOneComparison``, kept by ``validate(in:)`` instead of a
    /// compiled form; cleared with it.
    private var toOneForm: ToOneComparison?

    private mutating func forget() {
        compiledForm = nil
        toOneForm = nil
    }

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

    /// Throws what compiling the predicate and sort keys would throw, keeping the compiled
    /// form for the stores — except for a request known to compile: no sort keys and a
    /// predicate that is a ``ToOneComparison`` (`chat == X`, the commonest small query).
    /// That one is kept as such, uncompiled: a store that translates predicates itself (SQL)
    /// or answers this one from the relationship's inverse never needs the compiled form, and
    /// any other compiles it once, through ``compiled(in:)``. (Compiling it was a third of an
    /// LMDB count, perf.)
    public mutating func validate(in model: ManagedObjectModel) throws {
        if case .some = compiledForm { return }
        if case .some = toOneForm { return }
        if sortKeys.isEmpty, let form = ToOneComparison(predicate, on: entity) {
            toOneForm = form
            return
        }
        compiledForm = try compiledNow(in: model)
    }

    /// The predicate as a ``ToOneComparison``, when it is one.
    public var toOneComparison: ToOneComparison? {
        if let toOneForm { return toOneForm }
        return ToOneComparison(predicate, on: entity)
    }

    /// A predicate that compares a to-one relationship, named by itself, with an object by
    /// `==` or `!=`, without ANY/ALL/NONE (`chat == X`): one that always compiles, and that
    /// stores can answer from the relationship's inverse without the compiled form.
    public struct ToOneComparison: Sendable {
        /// The to-one relationship (of the request's entity or an ancestor).
        public let relationship: RelationshipDescription
        /// The object compared with.
        public let object: ObjectID
        /// `==` or `!=`.
        public let op: ComparisonOperator

        /// `comparison` as one on `entity`, or `nil` when it is not of this shape.
        public init?(_ comparison: PredicateComparison, on entity: EntityDescription) {
            guard comparison.modifier == .direct, comparison.op == .equal || comparison.op == .notEqual,
                  case .keyPath(let name) = comparison.left, case .object(let object) = comparison.right,
                  // A name with a dot or an `@` names no property, so this is the key path
                  // compiling resolves to a plain relationship.
                  case .relationship(let relationship)? = entity.property(named: name), !relationship.isToMany else { return nil }
            self.relationship = relationship
            self.object = object
            self.op = comparison.op
        }

        /// `predicate` as one on `entity`, or `nil` when it is not a comparison of this shape.
        /// (Taken `borrowing`, with the one copy spelled out: `count(for:)` matching the
        /// comparison itself, or passing the predicate owned, copied it and its operands once
        /// more — 4.35M instructions for 1,000 counts on LMDB against 4.54M and 4.65M.)
        init?(_ predicate: borrowing FetchPredicate?, on entity: EntityDescription) {
            guard case .comparison(let comparison)? = copy predicate else { return nil }
            self.init(comparison, on: entity)
        }
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
