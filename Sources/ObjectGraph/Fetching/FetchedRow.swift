/// One row of a dictionary fetch (``ManagedObjectContext/fetchDictionaries(_:)``): column name →
/// value, `.null` for none.
///
/// It reads like a `[String: AttributeValue]` — `row["title"]`, `keys`, `values`, iteration,
/// equality and hashing that ignore column order, dictionary literals — but every row of one
/// result shares one table of column names, as Core Data's dictionary results share their keys
/// (`NSKnownKeysDictionary`). A row is then its values alone: no hash table per row, and a
/// lookup compares the name with a handful of shared names instead of hashing it. Iteration
/// follows the columns' order (``FetchRequest/propertiesToFetch``).
///
/// A value type, `Sendable`; setting a column the row lacks gives that row a table of its own.
public struct FetchedRow: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// The column names a result's rows share, each once.
    final class Columns: Sendable {
        let names: [String]
        /// Name → position, for rows wider than a linear scan suits; `nil` for narrow ones.
        let positions: [String: Int]?

        /// `names` must be distinct (callers check: a dictionary fetch rejects two columns of
        /// one name).
        init(_ names: [String]) {
            self.names = names
            positions = names.count > 8 ? Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) }) : nil
        }

        func position(of name: String) -> Int? {
            if let positions { return positions[name] }
            return names.firstIndex(of: name)
        }
    }

    let columns: Columns
    /// The values by column position (possibly a stretch of an array the result's rows share,
    /// see ``AttributeValues``).
    private(set) var storage: AttributeValues

    /// A row of `columns` holding `values` in the columns' order (as many as there are columns).
    init(columns: Columns, values: [AttributeValue]) {
        self.init(columns: columns, values: AttributeValues(values))
    }

    /// A row of `columns` holding `values` in the columns' order (as many as there are columns).
    init(columns: Columns, values: AttributeValues) {
        precondition(values.count == columns.names.count, "a fetched row needs one value per column")
        self.columns = columns
        self.storage = values
    }

    /// A row holding `elements`; a name given twice keeps its last value.
    public init(dictionaryLiteral elements: (String, AttributeValue)...) {
        self.init(elements)
    }

    /// A row holding `elements`, in their order; a name given twice keeps its last value.
    public init(_ elements: some Sequence<(String, AttributeValue)>) {
        var names: [String] = []
        var values: [AttributeValue] = []
        for (name, value) in elements {
            if let position = names.firstIndex(of: name) { values[position] = value } else {
                names.append(name)
                values.append(value)
            }
        }
        self.init(columns: Columns(names), values: values)
    }

    /// A row holding a dictionary's entries, in its iteration order.
    public init(_ dictionary: [String: AttributeValue]) {
        self.init(dictionary.lazy.map { ($0.key, $0.value) })
    }

    /// The value of column `name`, `nil` when the row has no such column. Setting a value for
    /// a new name adds the column to this row; setting `nil` removes it.
    public subscript(name: String) -> AttributeValue? {
        get { columns.position(of: name).map { storage[$0] } }
        set {
            if let position = columns.position(of: name) {
                if let newValue { storage[position] = newValue; return }
                var names = columns.names
                names.remove(at: position)
                var values = storage.array
                values.remove(at: position)
                self = FetchedRow(columns: Columns(names), values: values)
            } else if let newValue {
                self = FetchedRow(columns: Columns(columns.names + [name]), values: storage.array + [newValue])
            }
        }
    }

    /// The object ID a to-one relationship column holds (``FetchedProperty/key(_:as:)`` naming
    /// a relationship); `nil` when the row has no such column, the relationship was empty, or
    /// the value is not an ID.
    ///
    /// A column holds an ID as its ``ObjectID/uriRepresentation`` in a `.uri` value: rows stay
    /// ``AttributeValue``s (`Sendable`, hashable, comparable with the values stores hand
    /// over), and the URI is the ID's own stable, lossless form (a temporary ID's, for an
    /// unsaved destination, names it in this process only). The ID the URI names is returned
    /// as is: resolve it with ``ManagedObjectContext/object(with:)`` or, from a URI kept
    /// elsewhere, check it with ``PersistentStoreCoordinator/objectID(forURI:)``.
    public func objectID(_ name: String) -> ObjectID? {
        guard case .uri(let uri)? = self[name] else { return nil }
        return ObjectID(uri: uri)
    }

    /// The column names, in the columns' order.
    public var keys: [String] { columns.names }
    /// The values, in the columns' order.
    public var values: [AttributeValue] { storage.array }
    /// The number of columns.
    public var count: Int { storage.count }
    /// Whether the row has no columns.
    public var isEmpty: Bool { storage.isEmpty }
    /// The row as a plain dictionary.
    public var dictionary: [String: AttributeValue] {
        Dictionary(uniqueKeysWithValues: zip(columns.names, storage))
    }

    /// The (name, value) pairs, in the columns' order.
    public func makeIterator() -> Iterator { Iterator(names: columns.names, values: storage) }

    /// Iterates a row's (name, value) pairs in the columns' order.
    public struct Iterator: IteratorProtocol {
        let names: [String]
        let values: AttributeValues
        var position = 0

        /// The next (name, value) pair, `nil` after the last column.
        public mutating func next() -> (key: String, value: AttributeValue)? {
            guard position < values.count else { return nil }
            defer { position += 1 }
            return (names[position], values[position])
        }
    }

    /// Rows are equal when they have the same column names with equal values, in any order
    /// (as dictionaries are).
    public static func == (lhs: FetchedRow, rhs: FetchedRow) -> Bool {
        if lhs.columns === rhs.columns { return lhs.storage == rhs.storage }
        guard lhs.count == rhs.count else { return false }
        for (position, name) in lhs.columns.names.enumerated() {
            guard let other = rhs[name], other == lhs.storage[position] else { return false }
        }
        return true
    }

    /// Hashes the (name, value) pairs independently of their order, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        var combined = 0
        for (position, name) in columns.names.enumerated() {
            var pair = Hasher()
            pair.combine(name)
            pair.combine(storage[position])
            combined ^= pair.finalize()
        }
        hasher.combine(count)
        hasher.combine(combined)
    }

    /// The row as a dictionary literal, in the columns' order.
    public var description: String {
        if isEmpty { return "[:]" }
        return "[" + zip(columns.names, storage).map { "\(String(reflecting: $0)): \($1)" }.joined(separator: ", ") + "]"
    }
}
