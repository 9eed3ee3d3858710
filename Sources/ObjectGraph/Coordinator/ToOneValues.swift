/// The to-one destinations of one record, by slot (`nil` for none): the first stored inline,
/// the others in an array.
///
/// Most entities have one to-one relationship or none. As an array, the destinations were an
/// allocation of their own for every row a store decoded and every object that held them —
/// freed again with the row or the object. A minimal object-per-row loop over 100,000 rows
/// measured a fifth faster with its one to-one inline than in an array (see
/// Benchmarks/README.md). Behaves as a mutable, random-access collection of `ObjectID?`.
public struct ToOneValues: RandomAccessCollection, MutableCollection, Sendable, Hashable, ExpressibleByArrayLiteral, CustomStringConvertible {
    // The first destination, entity token 0 standing for `nil` (no entity is interned as 0,
    // see `InternedNames`) with store token 1, and all zero when there is no slot 0: equal
    // values are equal fields, so the synthesized equality and hash are the collection's.
    private var firstEntity: UInt32 = 0
    private var firstStore: UInt32 = 0
    private var firstKey: Int64 = 0
    /// Destinations from slot 1 on.
    private var rest: [ObjectID?] = []

    /// No destinations.
    public init() {}

    /// The one destination of a record with a single to-one (`nil` for none): what a store
    /// decoding such rows builds per row, without a reservation and an append.
    public init(single value: ObjectID?) {
        setFirst(value)
    }

    /// The destinations of `values`, in order.
    public init(_ values: some Sequence<ObjectID?>) {
        var iterator = values.makeIterator()
        guard let first = iterator.next() else { return }
        append(first)
        while let next = iterator.next() { rest.append(next) }
    }

    /// `count` copies of `value`.
    public init(repeating value: ObjectID?, count: Int) {
        guard count > 0 else { return }
        append(value)
        if count > 1 { rest = Array(repeating: value, count: count - 1) }
    }

    /// The destinations listed.
    public init(arrayLiteral elements: ObjectID?...) {
        self.init(elements)
    }

    /// The first index, 0.
    public var startIndex: Int { 0 }
    /// The number of destinations.
    public var endIndex: Int { firstEntity == 0 && firstStore == 0 ? 0 : rest.count + 1 }

    /// The destination in slot `index`.
    public subscript(index: Int) -> ObjectID? {
        get {
            precondition(index >= 0 && index < endIndex, "to-one slot \(index) out of range")
            if index == 0 {
                return firstEntity == 0 ? nil : ObjectID(entityToken: firstEntity, storeToken: firstStore, value: firstKey)
            }
            return rest[index - 1]
        }
        set {
            precondition(index >= 0 && index < endIndex, "to-one slot \(index) out of range")
            if index == 0 { setFirst(newValue) } else { rest[index - 1] = newValue }
        }
    }

    /// Appends a destination.
    public mutating func append(_ value: ObjectID?) {
        if endIndex == 0 { setFirst(value) } else { rest.append(value) }
    }

    /// Makes room for `capacity` destinations in all.
    public mutating func reserveCapacity(_ capacity: Int) {
        if capacity > 1 { rest.reserveCapacity(capacity - 1) }
    }

    private mutating func setFirst(_ value: ObjectID?) {
        if let value {
            firstEntity = value.entityToken
            firstStore = value.storeToken
            firstKey = value.value
        } else {
            firstEntity = 0
            firstStore = 1
            firstKey = 0
        }
    }

    /// The destinations as an array.
    public var array: [ObjectID?] { Array(self) }

    /// "[Chat/p3, nil]".
    public var description: String { "[" + map { $0.map(\.description) ?? "nil" }.joined(separator: ", ") + "]" }
}

extension RowSnapshot {
    /// Creates a snapshot from to-one destinations in an array.
    public init(objectID: ObjectID, version: Int64, attributes: [AttributeValue], toOne: [ObjectID?]) {
        self.init(objectID: objectID, version: version, attributes: attributes, toOne: ToOneValues(toOne))
    }
}
