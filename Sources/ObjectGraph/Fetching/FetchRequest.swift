import Foundation

/// What to fetch: an entity, a filter, an order, a range, and how results come back.
///
/// `Result` is the class of the returned objects (``ManagedObject`` or a bound subclass). With
/// no `entityName`, the entity bound to `Result` in the model is fetched. A request is a
/// `Sendable` value and can be built on any thread.
public struct FetchRequest<Result: ManagedObject>: Sendable {
    /// The entity to fetch; `nil` to use the entity bound to `Result`.
    public var entityName: String?
    /// The filter; `nil` fetches every object.
    public var predicate: FetchPredicate?
    /// A Foundation `#Predicate` filter, translated to a ``FetchPredicate`` when the request
    /// runs (see ``FetchPredicate/init(_:model:entityName:)``); with ``predicate`` also set,
    /// both must hold.
    public var typedPredicate: Predicate<Result>? {
        get { typedPredicateBox?.predicate as? Predicate<Result> }
        set { typedPredicateBox = newValue.map(TypedPredicateBox.init) }
    }
    /// The typed predicate, boxed: a stored `Predicate<Result>` made the request's layout
    /// depend on `Result`, so every access to any field in the (unspecialized) fetch and count
    /// paths looked up generic metadata — 7% of counting a chat's messages, measured.
    @usableFromInline var typedPredicateBox: TypedPredicateBox?
    /// Whether ``typedPredicate`` is set, without instantiating `Predicate<Result>`'s metadata.
    var hasTypedPredicate: Bool { typedPredicateBox != nil }
    /// The order; ties are broken by primary key.
    public var sortKeys: [SortKey]
    /// The most objects to return; 0 for no limit.
    public var fetchLimit: Int = 0
    /// Objects to skip first.
    public var fetchOffset: Int = 0
    /// When non-zero, results are faults filled a batch at a time.
    public var fetchBatchSize: Int = 0
    /// Whether objects of sub-entities are included.
    public var includesSubentities = true
    /// Whether returned objects are faults (`true`) or have their values loaded.
    public var returnsObjectsAsFaults = true
    /// Whether the context's unsaved inserts, changes and deletes are reflected.
    public var includesPendingChanges = true
    /// Whether objects the fetch returns that were already loaded in the context take the
    /// values the store holds now (Core Data's `shouldRefreshRefetchedObjects`), as
    /// ``ManagedObjectContext/refresh(_:mergeChanges:)`` with `mergeChanges: true` does: their
    /// unsaved changes stay on top, and loaded to-many relationships are read again when next
    /// touched (those of a returned fault too, which reading them did not fire); the next
    /// objects-did-change notification lists them as refreshed, as Core Data's does. `false`
    /// (the default) leaves such objects as they are, as Core Data does.
    public var shouldRefreshRefetchedObjects = false
    /// Relationship key paths whose destinations are loaded along with the results (with each
    /// batch, for ``ManagedObjectContext/fetchBatched(_:)``).
    public var relationshipKeyPathsForPrefetching: [String] {
        get { extras?.values.relationshipKeyPathsForPrefetching ?? [] }
        set { updateExtras { $0.relationshipKeyPathsForPrefetching = newValue } }
    }
    /// Values for `$VARIABLE`s in the predicate.
    public var substitutionVariables: [String: AttributeValue] {
        get { extras?.values.substitutionVariables ?? [:] }
        set { updateExtras { $0.substitutionVariables = newValue } }
    }
    /// Whether a fetch of objects loads their values (`true`, the default). `false` returns
    /// every object not yet registered in the context as a fault whose values are not read
    /// (the store is asked for IDs only); touching it later fires it as any fault. Objects the
    /// context already holds keep their state (loaded, changed or a fault; refreshed only if
    /// ``shouldRefreshRefetchedObjects`` asks for it), and unsaved changes still count
    /// (objects compared or sorted here are read without loading them: by their unsaved
    /// values, or by their stored rows). ``returnsObjectsAsFaults`` is then ignored, and
    /// ``relationshipKeyPathsForPrefetching``, which loads values, is refused. Core Data uses
    /// this for fetches that only need the objects' identities (to delete them, say).
    public var includesPropertyValues: Bool {
        get { extras?.values.includesPropertyValues ?? true }
        set { updateExtras { $0.includesPropertyValues = newValue } }
    }
    /// For ``ManagedObjectContext/fetchDictionaries(_:)``: the columns of each result (every
    /// stored attribute when empty).
    public var propertiesToFetch: [FetchedProperty] {
        get { extras?.values.propertiesToFetch ?? [] }
        set { updateExtras { $0.propertiesToFetch = newValue } }
    }
    /// For dictionary fetches: key paths, each reaching one attribute value or a to-one
    /// relationship (grouped by destination object, as in Core Data), whose equal values form
    /// one group (each must also be fetched as a ``FetchedProperty/key(_:as:)`` column).
    public var propertiesToGroupBy: [String] {
        get { extras?.values.propertiesToGroupBy ?? [] }
        set { updateExtras { $0.propertiesToGroupBy = newValue } }
    }
    /// For dictionary fetches: a filter on result rows, by column name (SQL's HAVING).
    public var havingPredicate: FetchPredicate? {
        get { extras?.values.havingPredicate }
        set { updateExtras { $0.havingPredicate = newValue } }
    }
    /// For dictionary fetches: drop repeated rows.
    public var returnsDistinctResults: Bool {
        get { extras?.values.returnsDistinctResults ?? false }
        set { updateExtras { $0.returnsDistinctResults = newValue } }
    }

    /// The settings most requests leave alone, boxed: a request is built and destroyed for
    /// every fetch or count, and each of these fields stored inline cost an initialization and
    /// a release (a tenth of counting a chat's messages, perf). `nil` while all are defaults.
    @usableFromInline var extras: ExtrasBox?

    /// Whether ``predicate`` is the whole filter as it stands: no typed predicate to translate
    /// and no variables to substitute (see `effectivePredicate(for:in:)`). Read inline by the
    /// context, so the common request skips that generic call and the lookup of its type's
    /// metadata it costs in unspecialized code (a twentieth of a count on LMDB, perf).
    @inline(__always) var predicateIsFinal: Bool { typedPredicateBox == nil && extras == nil }

    private mutating func updateExtras(_ change: (inout FetchRequestExtras) -> Void) {
        var values = extras?.values ?? FetchRequestExtras()
        change(&values)
        extras = ExtrasBox(values)
    }

    /// Creates a request.
    ///
    /// Inlinable, so that it is built in the caller's specialized code: compiled once for any
    /// `Result`, it looked its type's metadata up and built the request twice, copying it
    /// through the type's value witnesses (a twentieth of a count on LMDB, perf).
    @inlinable
    public init(entityName: String? = nil, predicate: FetchPredicate? = nil, sortKeys: [SortKey] = []) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortKeys = sortKeys
    }
}

/// A ``FetchRequest/typedPredicate``, type-erased (see there).
@usableFromInline
final class TypedPredicateBox: Sendable {
    let predicate: any Sendable

    init(_ predicate: any Sendable) {
        self.predicate = predicate
    }
}

/// The rarely changed settings of a ``FetchRequest`` (see its `extras`).
struct FetchRequestExtras: Sendable {
    var relationshipKeyPathsForPrefetching: [String] = []
    var substitutionVariables: [String: AttributeValue] = [:]
    var propertiesToFetch: [FetchedProperty] = []
    var propertiesToGroupBy: [String] = []
    var havingPredicate: FetchPredicate?
    var returnsDistinctResults = false
    var includesPropertyValues = true
}

/// An immutable box of ``FetchRequestExtras``; a change makes a new box, so copies of a
/// request never share a change.
@usableFromInline
final class ExtrasBox: Sendable {
    let values: FetchRequestExtras

    init(_ values: FetchRequestExtras) {
        self.values = values
    }
}
