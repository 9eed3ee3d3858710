/// A fetch result that holds only object IDs and materializes objects a batch at a time:
/// Core Data's batched fetch, as a `RandomAccessCollection`.
///
/// Reading element `i` loads the whole batch containing it in one store round trip; only the
/// most recently used batches are kept, so iterating a million objects keeps a bounded number
/// alive (objects without changes count as released once only their context holds them,
/// and go away with their batch). Rows loaded for a batch live in their objects only: they are not added to the
/// coordinator's row cache, which a long iteration would otherwise fill to its capacity (about
/// 60 MiB at the default 100,000 rows) with rows of batches already released, evicting the
/// rows other contexts use. Rows already cached are still used. Confined, like its objects,
/// to its context's queue.
public final class BatchedFetchResults<Element: ManagedObject>: RandomAccessCollection {
    /// The matching object IDs, in fetch order (an unsaved match's ID is its permanent one
    /// once its context has saved it). Read on the context's queue, as the elements are:
    /// elsewhere the process stops, naming the context and the thread — the unsaved matches'
    /// IDs are replaced by their save on that queue.
    public var objectIDs: [ObjectID] {
        context.requireQueue("a batched fetch result's objectIDs")
        return inserted.isEmpty ? fetchedIDs : fetchedIDs.map { inserted[$0]?.objectID ?? $0 }
    }
    /// The IDs as fetched: unsaved matches under their temporary IDs.
    private let fetchedIDs: [ObjectID]
    /// The unsaved matches, by their temporary IDs: a save between batches gives them
    /// permanent IDs, and their temporary IDs then name nothing (a batch loaded after the save
    /// made a second object under the old ID, which no read could load).
    private let inserted: [ObjectID: ManagedObject]
    /// Objects loaded per round trip.
    public let batchSize: Int
    /// How many loaded batches are kept (the rest are released).
    public let retainedBatches: Int
    private let context: ManagedObjectContext
    /// The request's ``FetchRequest/shouldRefreshRefetchedObjects``: a batch's objects already
    /// loaded take the stored values (under their unsaved changes) when the batch loads, as a
    /// plain fetch gives them at once.
    private let refreshesRefetched: Bool
    /// The request's ``FetchRequest/relationshipKeyPathsForPrefetching``, as relationship
    /// steps: loaded for each batch as it loads, as Core Data prefetches per batch (ignored,
    /// walking a batch's relationships took a round trip per destination).
    private let prefetching: [[RelationshipDescription]]
    private var batches: [Int: [Element]] = [:]
    private var recent: [Int] = []

    init(context: ManagedObjectContext, objectIDs: [ObjectID], inserted: [ObjectID: ManagedObject] = [:], batchSize: Int, retainedBatches: Int = 2, refreshesRefetched: Bool = false, prefetching: [[RelationshipDescription]] = []) {
        self.context = context
        self.prefetching = prefetching
        self.refreshesRefetched = refreshesRefetched
        self.fetchedIDs = objectIDs
        self.inserted = inserted
        self.batchSize = Swift.max(1, batchSize)
        self.retainedBatches = Swift.max(1, retainedBatches)
    }

    /// The first index.
    public var startIndex: Int { 0 }
    /// One past the last index.
    public var endIndex: Int { fetchedIDs.count }

    /// The object at `position`, loading its batch if needed.
    ///
    /// A batch that cannot be loaded (the store failed, or records vanished) stops the
    /// process with the reason, like any non-throwing object access; use ``batch(at:)`` to get
    /// a thrown error instead.
    public subscript(position: Int) -> Element {
        do {
            return try batch(at: position / batchSize)[position % batchSize]
        } catch {
            ManagedObject.trap("loading batch \(position / batchSize) of a batched fetch: \(error)")
        }
    }

    /// The objects of batch `index` (elements `index * batchSize ..< (index + 1) * batchSize`),
    /// loaded with one round trip if not already in memory.
    public func batch(at index: Int) throws -> [Element] {
        try context.checkQueue("a batched fetch result")
        if let loaded = batches[index] {
            touch(index)
            return loaded
        }
        // (Checked before multiplying: `index * batchSize` overflows for a large index.)
        let (start, overflow) = index.multipliedReportingOverflow(by: batchSize)
        guard !overflow, start >= 0, start < fetchedIDs.count else {
            throw ObjectGraphError(.invalidFetch, "batch \(index) is out of range (\(fetchedIDs.count) results in batches of \(batchSize))")
        }
        let ids = fetchedIDs[start..<Swift.min(fetchedIDs.count, start + batchSize)]
        let objects = ids.map { id in id.isTemporary ? inserted[id] ?? context.registeredOrFault(id) : context.registeredOrFault(id) }
        // Taken before the faults fire: those read the store now anyway.
        var refetched: [ManagedObject] = []
        if refreshesRefetched {
            for object in objects {
                if object.isFaultStorage { context.rereadLoadedMembers(ofFault: object) } else { refetched.append(object) }
            }
        }
        try context.fulfillFaults(objects, cachingRows: false)
        if !refetched.isEmpty { try context.refreshRefetched(refetched) }
        for steps in prefetching { try context.prefetch(steps, from: objects) }
        var typed: [Element] = []
        typed.reserveCapacity(objects.count)
        for object in objects {
            guard let element = object as? Element else {
                throw ObjectGraphError(.wrongValueType, objectID: object.objectID, "\(object.objectID) is a \(type(of: object)), not \(Element.self)")
            }
            typed.append(element)
        }
        batches[index] = typed
        touch(index)
        return typed
    }

    private func touch(_ index: Int) {
        recent.removeAll { $0 == index }
        recent.append(index)
        while recent.count > retainedBatches {
            batches.removeValue(forKey: recent.removeFirst())
        }
    }
}
