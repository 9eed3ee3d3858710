/// A row's attribute values by slot: an array, or a stretch of one array that several rows share.
///
/// Stores reading many rows at once may put the values of a run of rows into one array and
/// give each row its stretch of it (``init(sharing:from:count:)``): one allocation per run of
/// rows instead of one per row, which for a fetch of 100,000 objects is most of what their
/// values cost to allocate and free. A stretch is read in place; the first change to a row
/// that shares its array copies the row's own values out (copy-on-write, as for an array), so
/// rows never see each other's changes.
///
/// It reads and writes like `[AttributeValue]` (indexes from 0, array literals, equality by
/// values); ``array`` gives a plain array.
public struct AttributeValues: RandomAccessCollection, MutableCollection, ExpressibleByArrayLiteral, Sendable, Hashable, CustomStringConvertible {
    /// The values: this row's alone when `base` is 0 and `length` its count, otherwise a run
    /// of rows' values of which this row has `base..<base + length`.
    @usableFromInline var buffer: [AttributeValue]
    @usableFromInline var base: Int32
    @usableFromInline var length: Int32

    /// No values.
    public init() {
        buffer = []
        base = 0
        length = 0
    }

    /// The values of `array`, sharing its storage.
    @inlinable
    public init(_ array: [AttributeValue]) {
        buffer = array
        base = 0
        length = Int32(truncatingIfNeeded: array.count)
    }

    /// The values in `array`.
    public init(arrayLiteral elements: AttributeValue...) {
        self.init(elements)
    }

    /// `count` values of `shared` from `start` on, read in place: `shared` is kept alive by
    /// the row, and copied from only when the row changes.
    public init(sharing shared: [AttributeValue], from start: Int, count: Int) {
        precondition(start >= 0 && count >= 0 && start + count <= shared.count && start + count <= Int(Int32.max),
                     "a row's values must lie inside the shared array")
        buffer = shared
        base = Int32(start)
        length = Int32(count)
    }

    /// A stretch of `shared` its caller has already checked lies inside it (``RowRun``, once
    /// per run rather than once per row).
    init(unchecked shared: [AttributeValue], from start: Int, count: Int) {
        buffer = shared
        base = Int32(truncatingIfNeeded: start)
        length = Int32(truncatingIfNeeded: count)
    }

    /// Whether the values are a stretch of a larger array.
    @inline(__always)
    private var isShared: Bool { base != 0 || Int(length) != buffer.count }

    /// The values as a plain array (the same storage when the row has its own).
    public var array: [AttributeValue] {
        isShared ? Array(buffer[Int(base)..<Int(base + length)]) : buffer
    }

    /// Gives the row an array of its own before a change.
    @usableFromInline
    mutating func separate() {
        guard isShared else { return }
        buffer = Array(buffer[Int(base)..<Int(base + length)])
        base = 0
    }

    /// 0: values are indexed by slot.
    @inlinable public var startIndex: Int { 0 }
    /// The number of values.
    @inlinable public var endIndex: Int { Int(length) }

    /// The value at slot `index`.
    @inlinable
    public subscript(index: Int) -> AttributeValue {
        get {
            // One check: `base + length` never exceeds the buffer (see the initializers and
            // `separate()`), so the buffer's own check would repeat it.
            precondition(UInt(bitPattern: index) < UInt(length), "attribute slot \(index) out of range")
            return buffer.withUnsafeBufferPointer { $0[Int(base) &+ index] }
        }
        set {
            precondition(index >= 0 && index < Int(length), "attribute slot \(index) out of range")
            separate()
            buffer[index] = newValue
        }
    }

    /// Appends a value.
    public mutating func append(_ value: AttributeValue) {
        separate()
        buffer.append(value)
        length += 1
    }

    /// Reserves room for `capacity` values.
    public mutating func reserveCapacity(_ capacity: Int) {
        separate()
        buffer.reserveCapacity(capacity)
    }

    /// Whether both hold the very same storage and stretch of it (and so the same values),
    /// which tells an unchanged row without comparing values.
    public func isSameStorage(as other: AttributeValues) -> Bool {
        base == other.base && length == other.length
            && buffer.withUnsafeBufferPointer { x in other.buffer.withUnsafeBufferPointer { y in x.baseAddress == y.baseAddress } }
    }

    /// Equal when they hold equal values in order.
    public static func == (lhs: AttributeValues, rhs: AttributeValues) -> Bool {
        lhs.count == rhs.count && lhs.elementsEqual(rhs)
    }

    /// Hashes the values in order, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for value in self { hasher.combine(value) }
    }

    /// The values as an array literal.
    public var description: String { array.description }
}
