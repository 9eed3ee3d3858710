import ObjectGraph

/// The IDs of the rows one save inserts, for telling "inserted by this save" without a B-tree
/// lookup (a bulk insert's memberships name every new row once).
///
/// A save's new keys are mostly runs handed out by the store's counters, so each entity's are
/// kept as one bitmap over the span from its lowest to its highest key: building it and asking
/// it hash nothing (a set of 100,000 IDs was a fiftieth of a bulk insert, perf). An entity
/// whose keys are too scattered for a compact bitmap keeps them in a set instead.
///
/// A value built and used by one save, on the thread writing it.
struct InsertedKeys {
    private struct Span {
        let namespace: ObjectID.Namespace
        let low: Int64
        let high: Int64
        var bits: [UInt64]
    }

    private var spans: [Span] = []
    private var scattered: Set<ObjectID> = []

    /// No IDs.
    init() {}

    /// The IDs of `rows`.
    init(_ rows: [RowSnapshot]) {
        // Each entity's lowest and highest key and count, in order of first appearance.
        var bounds: [(namespace: ObjectID.Namespace, low: Int64, high: Int64, count: Int)] = []
        for row in rows {
            let id = row.objectID
            guard let key = id.primaryKey else { continue }
            // The last entity first: a save lists each entity's rows together.
            let index = bounds.last?.namespace == id.namespace ? bounds.count - 1 : bounds.firstIndex { $0.namespace == id.namespace }
            guard let index else {
                bounds.append((id.namespace, key, key, 1))
                continue
            }
            bounds[index].low = min(bounds[index].low, key)
            bounds[index].high = max(bounds[index].high, key)
            bounds[index].count += 1
        }
        // A span up to eight bits per key (and 64 at least) is kept as a bitmap.
        for bound in bounds {
            let width = bound.high.subtractingReportingOverflow(bound.low)
            guard !width.overflow, width.partialValue < max(Int64(bound.count) * 8, 64) else { continue }
            spans.append(Span(namespace: bound.namespace, low: bound.low, high: bound.high,
                              bits: Array(repeating: 0, count: Int(width.partialValue) / 64 + 1)))
        }
        for row in rows {
            let id = row.objectID
            guard let key = id.primaryKey else {
                scattered.insert(id)
                continue
            }
            if let index = spans.firstIndex(where: { $0.namespace == id.namespace }) {
                let offset = Int(key - spans[index].low)
                spans[index].bits[offset >> 6] |= 1 << UInt64(offset & 63)
            } else {
                scattered.insert(id)
            }
        }
    }

    /// Whether `id` is one of the IDs.
    func contains(_ id: ObjectID) -> Bool {
        if let key = id.primaryKey {
            for span in spans where span.namespace == id.namespace {
                guard key >= span.low && key <= span.high else { return false }
                let offset = Int(key - span.low)
                return span.bits[offset >> 6] & (1 << UInt64(offset & 63)) != 0
            }
        }
        return !scattered.isEmpty && scattered.contains(id)
    }
}
