/// A grouped, aggregated fetch as a store sees it (``StoreFetchRequest/ResultType/groups(_:)``):
/// the dictionary fetch's `propertiesToGroupBy` and aggregate columns, so a store that can
/// (``StoreCapabilities/groups``) answers with one row per group instead of every object.
///
/// The answer, ``StoreFetchResult/groups``, holds one array per group: the key values (in
/// ``keys`` order) followed by the aggregate values (in ``aggregates`` order). Groups come in
/// the order of their first member by primary key — the order the shared layer meets them in —
/// and without keys there is exactly one group, even when no row matches. A store that cannot
/// answer a particular request exactly as the shared layer would (a type it cannot group or
/// aggregate the same way, an overflow) leaves ``StoreFetchResult/groups`` `nil`, and the
/// shared layer computes the groups from the objects instead.
public struct StoreGrouping: Sendable, Hashable {
    /// Group-by key paths: attributes or to-one relationships, possibly through to-one
    /// relationships. A key ending in a to-one groups by destination: its value in a group is
    /// the destination's ID as a `.uri` (``ObjectID/uriRepresentation``), `.null` for rows
    /// without one, which form one group.
    public var keys: [String]
    /// The aggregate columns.
    public var aggregates: [StoreAggregate]

    /// Creates a grouping.
    public init(keys: [String], aggregates: [StoreAggregate]) {
        self.keys = keys
        self.aggregates = aggregates
    }
}

/// One aggregate column of a ``StoreGrouping``.
public enum StoreAggregate: Sendable, Hashable {
    /// The number of rows in the group.
    case count
    /// A function over an attribute key path's non-nil values in the group; `.null` when the
    /// group has none (the shared layer then applies the function to no values).
    case function(AggregateFunction, String)
}
