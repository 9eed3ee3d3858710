import Synchronization

/// Row snapshots shared by every context of a coordinator, so a record loaded by one
/// context fires faults in another without a store round trip.
///
/// The cache is bounded: past its capacity it drops everything and refills (rows are cheap to
/// reload, and a bounded cache keeps iterating a million rows in bounded memory). Saves
/// through the coordinator update it; a refresh evicts the refreshed row.
///
/// A batch of rows (a fetch's) is kept as it came and indexed only when the cache is next
/// looked up or changed: most fetched rows are never asked for again (the fetching context's
/// objects hold them), and hashing each into the table as it arrived was a seventh of fetching
/// 1,000 chats' messages (measured). Indexing later applies the same rules in the same order,
/// so every answer is the one eager insertion would have given.
public final class RowCache: Sendable {
    /// The indexed rows, and batches stored since, oldest first, not yet indexed.
    private struct Storage {
        var table: [ObjectID: RowSnapshot] = [:]
        var pending: [[RowSnapshot]] = []
        var pendingCount = 0
        /// The entities with pending rows: a lookup of another entity's row (the destinations
        /// of a prefetch, after its sources were fetched) leaves the batches pending.
        var pendingEntities: [UInt32] = []
    }

    private let rows = Guarded<Storage>(Storage())
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
    /// Batches of at most this many rows are indexed at once (deferring them saves nothing).
    private static let smallBatch = 16

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
                rows = Storage()
            }
            bypassed.store(value, ordering: .relaxed)
        }
    }

    /// The cached row for `id`.
    public func snapshot(for id: ObjectID) -> RowSnapshot? {
        if isBypassed { return nil }
        return rows.withLock { rows in
            if rows.pendingEntities.contains(id.entityToken) { Self.indexPending(&rows, capacity: capacity) }
            return rows.table[id]
        }
    }

    /// Stores rows, replacing older versions.
    public func store(_ snapshots: some Collection<RowSnapshot>) {
        guard !snapshots.isEmpty, !isBypassed else { return }
        rows.withLock { rows in _ = add(snapshots, to: &rows) }
    }

    /// Keeps a large batch for later indexing (while the rows kept stay within the capacity),
    /// or indexes it now; `true` when the batch was kept as it is (sharing an array's storage).
    private func add(_ snapshots: some Collection<RowSnapshot>, to rows: inout Storage) -> Bool {
        if snapshots.count > Self.smallBatch && rows.table.count + rows.pendingCount + snapshots.count <= capacity {
            var last: UInt32?
            for snapshot in snapshots where snapshot.objectID.entityToken != last {
                last = snapshot.objectID.entityToken
                if !rows.pendingEntities.contains(snapshot.objectID.entityToken) { rows.pendingEntities.append(snapshot.objectID.entityToken) }
            }
            rows.pending.append(Array(snapshots))
            rows.pendingCount += snapshots.count
            return true
        }
        Self.indexPending(&rows, capacity: capacity)
        Self.insert(snapshots, into: &rows.table, capacity: capacity)
        return false
    }

    /// Indexes the pending batches, oldest first.
    @inline(__always)
    private static func indexPending(_ rows: inout Storage, capacity: Int) {
        guard !rows.pending.isEmpty else { return }
        let batches = rows.pending
        rows.pending = []
        rows.pendingCount = 0
        rows.pendingEntities = []
        for batch in batches { insert(batch, into: &rows.table, capacity: capacity) }
    }

    private static func insert(_ snapshots: some Collection<RowSnapshot>, into rows: inout [ObjectID: RowSnapshot], capacity: Int) {
        // Two sizes: first room for 16,384 rows (or the batch), then the full capacity at once.
        // Not the full capacity up front: a table sized for 100,000 rows is 7 MB that the first
        // few hundred faults scatter over, touching (and zeroing) every page of it — 60% of
        // caching the rows of 10,000 single faults, measured. Not by doublings either (nor by
        // 4×): a cache filling up rehashes and moves every entry at each step (a third of a
        // fetch's time; 4× steps still cost fetching 1,000 chats' messages 8%, measured).
        let needed = rows.count + snapshots.count
        if rows.capacity < needed && rows.capacity < capacity {
            rows.reserveCapacity(min(capacity, rows.capacity == 0 ? max(needed, initialRows) : capacity))
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
    /// might include one that is gone; they are simply not cached). `true` when the cache keeps
    /// the collection's storage itself (an array's, shared until either side changes it).
    @discardableResult
    public func store(_ snapshots: some Collection<RowSnapshot>, readSince mark: UInt64) -> Bool {
        guard !snapshots.isEmpty, !isBypassed else { return false }
        return rows.withLock { rows in
            // Removals count up under the same lock, so this check and the insert are atomic.
            guard removals.load(ordering: .relaxed) == mark else { return false }
            return add(snapshots, to: &rows)
        }
    }

    /// Forgets one row.
    public func remove(_ id: ObjectID) { remove(CollectionOfOne(id)) }

    /// Forgets rows. Even an empty removal counts for ``readMark``: every save passes its
    /// deletions, mostly none, and a read from before a save is then not cached after it
    /// (rows a child context reads from its parent keep their versions across a sibling's
    /// save, so versions cannot tell). It leaves the pending batches pending.
    public func remove(_ ids: some Collection<ObjectID>) {
        rows.withLock { rows in
            removals.add(1, ordering: .releasing)
            guard !ids.isEmpty else { return }
            // Indexed before removing, not dropped: a pending batch may hold a row newer than
            // the table's (a save's updates), and dropping it would leave the older one.
            Self.indexPending(&rows, capacity: capacity)
            for id in ids { rows.table.removeValue(forKey: id) }
        }
    }

    /// Forgets everything.
    public func removeAll() {
        rows.withLock { rows in
            removals.add(1, ordering: .releasing)
            rows = Storage()
        }
    }

    /// The number of cached rows.
    public var count: Int {
        rows.withLock { rows in
            Self.indexPending(&rows, capacity: capacity)
            return rows.table.count
        }
    }
}
