/// One key of a fetch's order: Core Data's NSSortDescriptor, under a name Foundation does not use.
///
/// `nil` sorts before every value when ascending (after when descending), as in Core Data; ties
/// after the last key are broken by primary key so paging is deterministic on every store.
public struct SortKey: Sendable, Hashable {
    /// How strings compare.
    public enum Comparison: String, Sendable, Hashable {
        /// Unicode scalar order (binary collation).
        case natural
        /// Case-folded, then natural.
        case caseInsensitive
        /// Case- and diacritic-folded, digits compared as numbers ("file2" < "file10").
        case localizedStandard
    }

    /// The key path: an attribute, possibly through to-one relationships (`"chat.title"`).
    public var keyPath: String
    /// Ascending or descending.
    public var ascending: Bool
    /// How strings compare.
    public var comparison: Comparison

    /// Creates a sort key.
    public init(_ keyPath: String, ascending: Bool = true, comparison: Comparison = .natural) {
        self.keyPath = keyPath
        self.ascending = ascending
        self.comparison = comparison
    }
}
