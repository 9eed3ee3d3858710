/// A column of a dictionary fetch (Core Data's `propertiesToFetch` with its attribute and
/// expression descriptions): a key path's value, or an aggregate over each group.
public struct FetchedProperty: Sendable, Hashable {
    /// What the column holds.
    public enum Kind: Sendable, Hashable {
        /// The value of an attribute key path (through to-one relationships, or ending in an
        /// aggregate such as `messages.@count`).
        case value(String)
        /// An aggregate of a key path's values over the objects of a group (or of the whole
        /// result when there is no grouping).
        case aggregate(AggregateFunction, String)
        /// The number of objects in the group.
        case count
    }

    /// The key of the column in each result dictionary.
    public var name: String
    /// What the column holds.
    public var kind: Kind

    /// Creates a column.
    public init(name: String, kind: Kind) {
        self.name = name
        self.kind = kind
    }

    /// The value of `keyPath`, under the key path itself unless `name` is given.
    public static func key(_ keyPath: String, as name: String? = nil) -> FetchedProperty {
        FetchedProperty(name: name ?? keyPath, kind: .value(keyPath))
    }
    /// The sum of `keyPath` over a group.
    public static func sum(_ keyPath: String, as name: String) -> FetchedProperty {
        FetchedProperty(name: name, kind: .aggregate(.sum, keyPath))
    }
    /// The mean of `keyPath` over a group.
    public static func average(_ keyPath: String, as name: String) -> FetchedProperty {
        FetchedProperty(name: name, kind: .aggregate(.average, keyPath))
    }
    /// The smallest `keyPath` value of a group.
    public static func minimum(_ keyPath: String, as name: String) -> FetchedProperty {
        FetchedProperty(name: name, kind: .aggregate(.minimum, keyPath))
    }
    /// The largest `keyPath` value of a group.
    public static func maximum(_ keyPath: String, as name: String) -> FetchedProperty {
        FetchedProperty(name: name, kind: .aggregate(.maximum, keyPath))
    }
    /// The number of objects of a group.
    public static func count(as name: String) -> FetchedProperty {
        FetchedProperty(name: name, kind: .count)
    }
}
