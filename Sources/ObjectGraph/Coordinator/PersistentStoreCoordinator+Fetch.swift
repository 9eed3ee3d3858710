/// Fetching across stores, completing what a store could not do natively.
///
/// The pushdown contract: a store may apply the predicate, the sort and the range itself and
/// say so in ``StoreFetchResult/applied``; whatever it did not apply is done here with the
/// shared evaluator and sort, so the answer is identical either way.
extension PersistentStoreCoordinator {
    /// The complete answer to a fetch: IDs in order and, when the store returned rows, the
    /// rows in the same order (`rows[i].objectID == ids[i]`); otherwise `rows` is empty.
    struct FetchAnswer {
        /// The IDs, when the answer has no rows (otherwise the rows' IDs: see ``ids``).
        private var storedIDs: [ObjectID]
        var rows: [RowSnapshot]
        /// Whether the row cache keeps `rows` too: then a caller taking rows out of the array
        /// copies them instead (moving one out would copy the whole array first, a 10,000-row
        /// answer's retains and all).
        var rowsAreShared = false

        init(ids: [ObjectID], rows: [RowSnapshot], rowsAreShared: Bool = false) {
            storedIDs = ids
            self.rows = rows
            self.rowsAreShared = rowsAreShared
        }

        /// The matching IDs in order. With rows, they are taken from the rows only when
        /// asked: a fetch installing 100,000 rows walks the rows, not a second array.
        var ids: [ObjectID] {
            get { storedIDs.isEmpty && !rows.isEmpty ? rows.map(\.objectID) : storedIDs }
            set { storedIDs = newValue }
        }
    }

    /// `installsRows: true` when the caller installs every returned row in its objects at once.
    /// Such rows are cached for other contexts only when ``RowCache/keepsBatch(of:)``: a large
    /// result is a scan (as ``BatchedFetchResults``).
    /// `holding`: the entry whose write gate the caller holds, and the fetch that reads its
    /// store inside the write (a read of its store must not take the gate again).
    func fetch(_ request: StoreFetchRequest, installsRows: Bool = false,
               holding: (entry: Entry, fetch: (StoreFetchRequest) throws -> StoreFetchResult)? = nil) throws -> FetchAnswer {
        let entries = storesHolding(request.entity)
        let parts = subentityParts(of: request, besides: entries)
        guard !entries.isEmpty || !parts.isEmpty else {
            // Only sub-entities of it are stored, and they were not asked for: none of its
            // own rows exist (an abstract parent), as Core Data answers.
            let hierarchy = request.entity.hierarchyNames
            if !request.includesSubentities, attachedEntries.contains(where: { !$0.entityNames.isDisjoint(with: hierarchy) }) {
                return FetchAnswer(ids: [], rows: [])
            }
            let searched = request.includesSubentities ? hierarchy : [request.entity.name]
            if let closed = removedStores.error(forEntity: request.entity.name, hierarchy: searched) { throw closed }
            throw ObjectGraphError(.noStore, "no attached store holds entity \(request.entity.name)")
        }
        func read(_ entry: Entry, _ request: StoreFetchRequest) throws -> StoreFetchResult {
            if let holding, holding.entry === entry { return try holding.fetch(request) }
            let result = try entry.gate.read { try entry.store.fetch(request) }
            dropCachedRowsIfCommittedElsewhere(entry)
            return result
        }
        if entries.count == 1, parts.isEmpty {
            let entry = entries[0]
            let mark = rowCache.readMark
            let result = try read(entry, request)
            var cached = false
            if !installsRows || rowCache.keepsBatch(of: result.snapshots.count) || !result.applied.isSuperset(of: .all) {
                cached = rowCache.store(result.snapshots, readSince: mark)
            }
            if result.applied.isSuperset(of: .all) {
                if request.resultType == .snapshots || result.objectIDs.isEmpty && !result.snapshots.isEmpty {
                    return FetchAnswer(ids: [], rows: result.snapshots, rowsAreShared: cached)
                }
                return FetchAnswer(ids: result.objectIDs, rows: [])
            }
        }
        // Fallback: gather candidate rows from every store, then filter, sort and slice here.
        var rows: [RowSnapshot] = []
        var allPredicateApplied = true
        var partial = request
        partial.offset = 0
        partial.limit = nil
        partial.resultType = .snapshots
        func gather(_ entry: Entry, _ partial: StoreFetchRequest) throws {
            let mark = rowCache.readMark
            let result = try read(entry, partial)
            if !result.applied.contains(.predicate) { allPredicateApplied = false }
            rowCache.store(result.snapshots, readSince: mark)
            rows.append(contentsOf: result.snapshots)
        }
        for entry in entries { try gather(entry, partial) }
        for part in parts {
            for entity in part.entities {
                var sub = partial
                sub.entity = entity
                try gather(part.entry, sub)
            }
        }
        let source = SnapshotRowSource(coordinator: self)
        let evaluator = PredicateEvaluator(source: source)
        let compiled = try request.compiled(in: model)
        if let predicate = compiled.predicate, !allPredicateApplied {
            rows = try rows.filter { try evaluator.evaluate(predicate, on: $0) }
        }
        let sort = compiled.sort
        rows = try sort.sort(rows, using: evaluator)
        let sliced = Self.slice(rows, offset: request.offset, limit: request.limit)
        return FetchAnswer(ids: [], rows: sliced)
    }

    /// A store holding sub-entities of a fetched entity but not the entity itself (its
    /// configuration names only sub-entities), and the top-most sub-entities it holds.
    struct SubentityPart {
        let entry: Entry
        let entities: [EntityDescription]
    }

    /// The stores a fetch of `request.entity` including sub-entities must read besides `held`
    /// (the stores holding the entity): Core Data asks every store, so fetching an abstract
    /// `Animal` whose `Dog`s and `Cat`s live in two stores returns both; asking only the stores
    /// holding `Animal` refused the fetch (no store holds it) or missed the other store's rows.
    /// Empty at once without sub-entities or with every store holding the entity.
    func subentityParts(of request: StoreFetchRequest, besides held: [Entry]) -> [SubentityPart] {
        let hierarchy = request.entity.hierarchyNames
        guard request.includesSubentities, hierarchy.count > 1, attachedCount > held.count else { return [] }
        var parts: [SubentityPart] = []
        for entry in attachedEntries where !held.contains(where: { $0 === entry }) && !entry.entityNames.isDisjoint(with: hierarchy) {
            // The top-most: a held sub-entity whose parent the store holds is fetched with it.
            let tops = hierarchy.sorted().compactMap { model.entity(named: $0) }.filter { sub in
                entry.entityNames.contains(sub.name) && !(sub.parentName.map { entry.entityNames.contains($0) } ?? false)
            }
            parts.append(SubentityPart(entry: entry, entities: tops))
        }
        return parts
    }

    func count(_ request: StoreFetchRequest) throws -> Int {
        // (The entry lent, not taken from a list: every count of one store comes this way.)
        if let sole = soleEntry(holding: request.entity) {
            let result = try sole._withUnsafeGuaranteedRef { entry in
                try entry.gate.read {
                    // (Not copied to set what is set already: a copy retains every part of the request.)
                    if case .count = request.resultType { return try entry.store.fetch(request) }
                    var countRequest = request
                    countRequest.resultType = .count
                    return try entry.store.fetch(countRequest)
                }
            }
            if result.applied.isSuperset(of: .all) { return result.count }
        }
        var full = request
        full.resultType = .objectIDs
        return try fetch(full).ids.count
    }

    /// The store's own count of `entity`'s rows whose `relationship` is `owner` (see
    /// ``PersistentStore/countRows(of:includesSubentities:where:is:)``), when one store holds
    /// the entity and declares it answers them; `nil` otherwise.
    func countRows(of entity: EntityDescription, includesSubentities: Bool, where relationship: RelationshipDescription, is owner: ObjectID) throws -> Int? {
        guard let sole = soleEntry(holding: entity) else { return nil }
        return try sole._withUnsafeGuaranteedRef { entry in
            guard entry.countsRelationshipRows else { return nil }
            return try entry.gate.read {
                try entry.store.countRows(of: entity, includesSubentities: includesSubentities, where: relationship, is: owner)
            }
        }
    }

    /// `items` from `offset` on, at most `limit` of them. (The limit is capped to what is left
    /// before it is added: `fetchLimit = Int.max` is a valid request, and `start + limit`
    /// overflowed.)
    public static func slice<T>(_ items: [T], offset: Int, limit: Int?) -> [T] {
        let start = min(max(offset, 0), items.count)
        let end = limit.map { start + min(max($0, 0), items.count - start) } ?? items.count
        return Array(items[start..<end])
    }
}

extension PersistentStoreCoordinator {
    /// Drops the cached rows when `entry`'s store has seen commits of another connection or
    /// process since the last look (``PersistentStore/foreignCommitCount()``): a fetch, which
    /// reads the store's current rows, is then followed by faults that read them too, not rows
    /// cached before the other save. Asked after the store's read, which is where a store
    /// notices. (All cached rows go: rare, and the cache does not track rows by store.)
    func dropCachedRowsIfCommittedElsewhere(_ entry: Entry) {
        // A bypassed cache holds nothing to drop (every store reads rows cheaply, as LMDB).
        if rowCache.isBypassed { return }
        let count = entry.store.foreignCommitCount()
        let moved = entry.foreignCommitsSeen.withLock { seen in
            defer { seen = count }
            return seen != count
        }
        if moved { rowCache.removeAll() }
    }
}

/// Reads rows as snapshots through the coordinator (row cache first), for evaluating
/// predicates that a store did not evaluate itself.
///
/// The cache is as current as the fetch's own rows: the fetch's read is where a store notices
/// another connection's commits, and the coordinator then drops the cached rows
/// (``PersistentStoreCoordinator/dropCachedRowsIfCommittedElsewhere(_:)``) before anything is
/// evaluated — so a related row cached before another process's save is not read here, as SQL
/// would not read it.
struct SnapshotRowSource: PredicateRowSource {
    let coordinator: PersistentStoreCoordinator

    func toOne(_ relationship: RelationshipDescription, of row: RowSnapshot) throws -> RowSnapshot? {
        guard let id = row.toOne[relationship.slot] else { return nil }
        if let cached = coordinator.rowCache.snapshot(for: id) { return cached }
        return try coordinator.snapshot(for: id)
    }

    func toMany(_ relationship: RelationshipDescription, of row: RowSnapshot) throws -> [RowSnapshot] {
        let ids = try coordinator.relatedIDs(for: relationship, of: [row.objectID]).first ?? []
        var rows: [RowSnapshot] = []
        var missing: [ObjectID] = []
        for id in ids {
            if let cached = coordinator.rowCache.snapshot(for: id) { rows.append(cached) } else { missing.append(id) }
        }
        if !missing.isEmpty { rows.append(contentsOf: try coordinator.snapshots(for: missing)) }
        return rows
    }
}
