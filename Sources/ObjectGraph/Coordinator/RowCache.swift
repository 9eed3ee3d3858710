import Synchronization

/// Row snapshots shared by every context of a coordinator, so a record loaded by one
/// context fires faults in another without a store round trip.
///
/// The cache is bounded: past its capacity it drops everything and refills (rows are cheap to
/// reload, and a bounded cache keeps iterating a million rows in bounded memory). Saves
/// through the coordinator update it; a refresh evicts the refreshed row.
public final class RowCache: Sendable {
    private let rows = Guarded<[ObjectID: RowSnapshot]>([:])
    /// Counts removals, so that rows read before a removal are not cached after it: a context
    /// reading a row while another context's save deletes it must not put the deleted row back.
    private let removals = Atomic<UInt64>(0)
    /// Set while the coordinator's stores all read rows as cheaply as the cache would
    /// (``StoreCapabilities/cheapRowReads``): then nothing is cached and every lookup misses.
    private let bypassed = Atomic<Bool>(false)
    /// The most rows kept.
    public let capacity: Int
    /// The rows the table first makes room for.
    private static let initialRows = 16_384

    /// Creates a cache holding at most `capacity` rows.
    public init(capacity: Int = 100_000) { self.capacity = capacity }

    /// Whether a batch of `count` rows that its reader also keeps elsewhere (in objects) is
    /// worth caching: at most a tenth of the capacity. A larger batch is a scan or a bulk
    /// insert; caching it would copy every row and evict the whole cache for rows nobody is
    /// likely to ask the cache for.
    public func keepsBatch(of count: Int) -> Bool { count <= capacity / 10 }

    /// Whether the cache is bypassed: it holds nothing, and stores nothing it is given.
    public var isBypassed: Bool { bypassed.load(ordering: .relaxed) }

    /// Turns bypassing on (emptying the cache) or off; the coordinator's decision.
    func setBypassed(_ value: Bool) {
        rows.withLock { rows in
            if value {
                removals.add(1, ordering: .releasing)
                rows = [:]
            }
            bypassed.store(value, ordering: .relaxed)
        }
    }

    /// The cached row for `id`.
    public func snapshot(for id: ObjectID) -> RowSnapshot? {
        if isBypassed { return nil }
        return rows.withLock { $0[id] }
    }

    /// Stores rows, replacing older versions.
    public func store(_ snapshots: some Collection<RowSnapshot>) {
        guard !snapshots.isEmpty, !isBypassed else { return }
        rows.withLock { rows in insert(snapshots, into: &rows) }
    }

    private func insert(_ snapshots: some Collection<RowSnapshot>, into rows: inout [ObjectID: RowSnapshot]) {
        // Two sizes: first room for 16,384 rows (or the batch), then the full capacity at once.
        // Not the full capacity up front: a table sized for 100,000 rows is 7 MB that the first
        // few hundred faults scatter over, touching (and zeroing) every page of it — 60% of
        // caching the rows of 10,000 single faults, measured. Not by doublings either (nor by
        // 4×): a cache filling up rehashes and moves every entry at each step (a third of a
        // fetch's time; 4× steps still cost fetching 1,000 chats' messages 8%, measured).
        let needed = rows.count + snapshots.count
        if rows.capacity < needed && rows.capacity < capacity {
            rows.reserveCapacity(min(capacity, rows.capacity == 0 ? max(needed, Self.initialRows) : capacity))
        }
        for snapshot in snapshots {
            // Replace unless the cached row is newer (an older read must never overwrite a
            // newer row), else insert — making room first when full. Not `rows[id, default:]`,
            // which copies the row in and then again over itself.
            if let index = rows.index(forKey: snapshot.objectID) {
                if rows.values[index].version <= snapshot.version { rows.values[index] = snapshot }
                continue
            }
            if rows.count >= capacity { rows.removeAll(keepingCapacity: true) }
            rows[snapshot.objectID] = snapshot
        }
    }

    /// A mark to take before reading rows from a store, for ``store(_:readSince:)``.
    public var readMark: UInt64 { removals.load(ordering: .acquiring) }

    /// Stores rows read after `mark` was taken, unless a row was removed since (then the rows
    /// might include one that is gone; they are simply not cached).
    public func store(_ snapshots: some Collection<RowSnapshot>, readSince mark: UInt64) {
        guard !snapshots.isEmpty, !isBypassed else { return }
        rows.withLock { rows in
            // Removals count up under the same lock, so this check and the insert are atomic.
            guard removals.load(ordering: .relaxed) == mark else { return }
            insert(snapshots, into: &rows)
        }
    }

    /// Forgets one row.
    public func remove(_ id: ObjectID) {
        _ = rows.withLock { rows in
            removals.add(1, ordering: .releasing)
            return rows.removeValue(forKey: id)
        }
    }

    /// Forgets rows.
    public func remove(_ ids: some Sequence<ObjectID>) {
        rows.withLock { rows in
            removals.add(1, ordering: .releasing)
            for id in ids { rows.removeValue(forKey: id) }
        }
    }

    /// Forgets everything.
    public func removeAll() {
        rows.withLock { rows in
            removals.add(1, ordering: .releasing)
            rows.removeAll()
        }
    }

    /// The number of cached rows.
    public var count: Int { rows.withLock { $0.count } }
}
