import Synchronization

/// Row snapshots shared by every context of a coordinator, so a record loaded by one
/// context fires faults in another without a store round trip.
///
/// The cache is bounded: past its capacity it drops everything and refills (rows are cheap to
/// reload, and a bounded cache keeps iterating a million rows in bounded memory). Saves
/// through the coordinator update it; a refresh evicts the refreshed row.
public final class RowCache: Sendable {
    private let rows = Mutex<[ObjectID: RowSnapshot]>([:])
    /// The most rows kept.
    public let capacity: Int

    /// Creates a cache holding at most `capacity` rows.
    public init(capacity: Int = 100_000) { self.capacity = capacity }

    /// The cached row for `id`.
    public func snapshot(for id: ObjectID) -> RowSnapshot? {
        rows.withLock { $0[id] }
    }

    /// Stores rows, replacing older versions.
    public func store(_ snapshots: some Collection<RowSnapshot>) {
        guard !snapshots.isEmpty else { return }
        rows.withLock { rows in
            if rows.isEmpty { rows.reserveCapacity(min(capacity, snapshots.count)) }
            for snapshot in snapshots {
                if rows.count >= capacity && rows[snapshot.objectID] == nil {
                    rows.removeAll(keepingCapacity: true)
                }
                // One hash lookup: insert, or replace unless the cached row is newer (an older
                // read must never overwrite a newer row).
                Self.keepNewer(&rows[snapshot.objectID, default: snapshot], snapshot)
            }
        }
    }

    private static func keepNewer(_ cached: inout RowSnapshot, _ snapshot: RowSnapshot) {
        if cached.version <= snapshot.version { cached = snapshot }
    }

    /// Forgets one row.
    public func remove(_ id: ObjectID) {
        _ = rows.withLock { $0.removeValue(forKey: id) }
    }

    /// Forgets rows.
    public func remove(_ ids: some Sequence<ObjectID>) {
        rows.withLock { rows in for id in ids { rows.removeValue(forKey: id) } }
    }

    /// Forgets everything.
    public func removeAll() {
        rows.withLock { $0.removeAll() }
    }

    /// The number of cached rows.
    public var count: Int { rows.withLock { $0.count } }
}
