/// The store of a child context: answers from the parent context's objects, unsaved changes
/// included, and saves into the parent (see ManagedObjectContext+Nested).
///
/// **Threading contract.** Called by the child's coordinator, one call at a time (it does not
/// declare concurrent readers); every call runs on the parent's queue through its
/// `performAndWait`. Key allocation goes to the parent's own store (ultimately the real one),
/// so IDs are the real store's permanent IDs.
final class ParentContextStore: PersistentStore, @unchecked Sendable {
    let parent: ManagedObjectContext
    private let parentEntry: PersistentStoreCoordinator.Entry

    init(parent: ManagedObjectContext, standingInFor entry: PersistentStoreCoordinator.Entry) {
        self.parent = parent
        self.parentEntry = entry
    }

    var identifier: String { parentEntry.store.identifier }

    /// The parent evaluates predicates, sorts and ranges (with its pending changes); it answers
    /// one call at a time and does not group. Its rows are read from its objects, so the
    /// child's coordinator keeps no row cache (``StoreCapabilities/cheapRowReads``).
    var capabilities: StoreCapabilities {
        // (Not the parent store's own counts of toOne == object: they would miss the parent
        // context's unsaved changes, which a child's fetches see.)
        // A cached row goes stale without any save through the child's coordinator: the
        // parent's own changes and a sibling's save change the parent's objects in place. A
        // fault the child made later then fired with the old values, even for an object its
        // fetch had just matched by the new ones (an audit).
        parentEntry.store.capabilities.subtracting([.concurrentReaders, .groups, .atomic, .countsRelationshipRows]).union([.evaluatesPredicates, .sorts, .cheapRowReads])
    }

    func metadata() throws -> StoreMetadata { try parentEntry.store.metadata() }

    func allocatePrimaryKeys(rootEntity: String, count: Int) throws -> Int64 {
        try parentEntry.gate.write { try parentEntry.store.allocatePrimaryKeys(rootEntity: rootEntity, count: count) }
    }

    func fetch(_ request: StoreFetchRequest) throws -> StoreFetchResult {
        try parent.performAndWait {
            try parent.prepareForChild()
            var fetch = FetchRequest<ManagedObject>(entityName: request.entity.name, predicate: request.predicate, sortKeys: request.sortKeys)
            fetch.includesSubentities = request.includesSubentities
            fetch.fetchOffset = request.offset
            fetch.fetchLimit = request.limit ?? 0
            switch request.resultType {
            case .count:
                if request.limit == 0 { return StoreFetchResult(count: 0, applied: .all) }
                return StoreFetchResult(count: try parent.count(for: fetch), applied: .all)
            case .objectIDs:
                if request.limit == 0 { return StoreFetchResult(applied: .all) }
                return StoreFetchResult(objectIDs: try parent.fetchObjectIDs(fetch), applied: .all)
            case .snapshots:
                if request.limit == 0 { return StoreFetchResult(applied: .all) }
                fetch.returnsObjectsAsFaults = false
                let rows = try parent.fetch(fetch).map { parent.snapshot(of: $0, version: $0.committedVersion ?? 1) }
                return StoreFetchResult(snapshots: rows, applied: .all)
            case .groups:
                return StoreFetchResult(applied: [])
            }
        }
    }

    func snapshots(for ids: [ObjectID]) throws -> [RowSnapshot] {
        try parent.performAndWait {
            try parent.prepareForChild()
            return try ids.compactMap { try parent.childRow(for: $0) }
        }
    }

    func relatedIDs(for relationship: RelationshipDescription, of sources: [ObjectID]) throws -> [[ObjectID]] {
        try parent.performAndWait {
            try parent.prepareForChild()
            return try sources.map { id -> [ObjectID] in
                let object = parent.registeredOrFault(id)
                guard !object.isDeletedStorage else { return [] }
                do { try parent.loadToManyIfNeeded(object, relationship) } catch let error as ObjectGraphError where error.code == .objectNotFound {
                    return []
                }
                return Array(object.toManyStates[relationship.slot].members ?? [])
            }
        }
    }

    func save(_ changes: StoreChangeSet) throws {
        try parent.performAndWait { try parent.applyChildSave(changes) }
    }

    /// Saves without `check`, the coordinator's re-check of uniqueness constraints: the parent
    /// is not the store, and the root context's save checks (and its merge policy resolves)
    /// what lands in the parent, as Core Data's does. Re-checked here, a child's insert
    /// colliding with an unsaved object of the parent (a sibling's) failed the child's save.
    func save(_ changes: StoreChangeSet, checking check: (_ fetch: (StoreFetchRequest) throws -> StoreFetchResult) throws -> Void) throws {
        try save(changes)
    }

    func close() {}
}
