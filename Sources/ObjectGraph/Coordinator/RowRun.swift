/// Builds a store's answer in runs of rows whose values share one array (see
/// ``AttributeValues``): one allocation for a run's values instead of one per row.
///
/// A store reading many rows appends each row's values (``appendValue(_:)``), then ends the
/// row with its other parts (``endRow(objectID:version:toOne:into:)``), which appends it to
/// the answer at once, its values still to come. A row can only be given its values once the
/// array holds its whole run — appending to an array a row already shares would copy it — so
/// the run's rows get theirs when the run is full and at ``flush(into:)``, which the store
/// calls after its last row. Until then the rows of the current run have no values, and the
/// answer must not be read.
///
/// A value for one thread: a store builds one per answer, on the thread reading it.
public struct RowRun {
    /// Rows per run: the values of 32 rows in one allocation, and a row kept alive keeps at
    /// most 31 other rows' values with it.
    public static let length = 32

    @usableFromInline var values: [AttributeValue] = []
    /// The number of values of every row, or -1 when rows vary (then `starts` records where
    /// each begins).
    @usableFromInline let width: Int
    /// Where each row of the current run starts in `values` (rows of varying width only).
    @usableFromInline var starts: [Int32] = []
    /// The rows ended since the last flush.
    @usableFromInline var pending = 0
    /// The position in the answer of the current run's first row.
    @usableFromInline var firstRow = 0
    /// Values to make room for at a run's first value: a guess until a run has been read,
    /// then the last run's size.
    @usableFromInline var capacity = RowRun.length * 4
    @usableFromInline var rowStart: Int32 = 0

    /// An empty run of rows whose number of values may vary.
    public init() { width = -1 }

    /// An empty run of rows of exactly `width` values each (a store reading one entity's
    /// columns), which needs no record of where each row starts.
    public init(width: Int) {
        precondition(width >= 0, "a row cannot have a negative number of values")
        self.width = width
        capacity = Self.length * max(width, 1)
    }

    /// Appends the next value of the row being read. (Taken owned and inlined into the
    /// store: borrowed, each string was retained into the run and released by the caller.)
    @inlinable
    public mutating func appendValue(_ value: consuming AttributeValue) {
        if values.capacity == 0 { values.reserveCapacity(capacity) }
        values.append(value)
    }

    /// Ends the row being read (its values are those appended since the last row ended):
    /// appends it to `rows`, giving the run's rows their values when the run is full.
    @inlinable
    public mutating func endRow(objectID: ObjectID, version: Int64, toOne: ToOneValues, into rows: inout [RowSnapshot]) {
        if pending == 0 { firstRow = rows.count }
        if width < 0 {
            if starts.capacity == 0 { starts.reserveCapacity(Self.length) }
            starts.append(rowStart)
            rowStart = Int32(truncatingIfNeeded: values.count)
        }
        pending += 1
        rows.append(RowSnapshot(objectID: objectID, version: version, attributes: AttributeValues(), toOne: toOne))
        if pending == Self.length { flush(into: &rows) }
    }

    /// Gives the rows ended since the last flush their stretches of the run's values. `rows`
    /// must be the array the rows were ended into, unchanged since.
    public mutating func flush(into rows: inout [RowSnapshot]) {
        guard pending > 0 else { return }
        precondition(firstRow + pending == rows.count, "a run's rows must be the last of the answer")
        let shared = values
        values = []
        if width >= 0 {
            precondition(shared.count == pending * width && shared.count <= Int(Int32.max), "a row of a fixed-width run has another number of values")
            for position in 0..<pending {
                rows[firstRow + position].attributes = AttributeValues(unchecked: shared, from: position * width, count: width)
            }
        } else {
            capacity = max(shared.count / pending, 1) * Self.length
            for position in starts.indices {
                let start = Int(starts[position])
                let end = position + 1 < starts.count ? Int(starts[position + 1]) : shared.count
                rows[firstRow + position].attributes = AttributeValues(sharing: shared, from: start, count: end - start)
            }
            starts.removeAll(keepingCapacity: true)
            rowStart = 0
        }
        pending = 0
    }
}
