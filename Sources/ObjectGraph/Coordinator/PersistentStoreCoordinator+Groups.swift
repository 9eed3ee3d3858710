/// Grouped, aggregated fetches (``StoreFetchRequest/ResultType/groups(_:)``): answered by the
/// store when it can (``StoreCapabilities/groups``), otherwise computed here from the matching
/// rows' snapshots — never by materializing managed objects, so every store answers a
/// dictionary fetch without filling a context with 100,000 objects.
extension PersistentStoreCoordinator {
    /// The groups of `request` (whose result type is `.groups`): one array per group, keys then
    /// aggregates, groups in order of their first member by primary key.
    func groups(_ request: StoreFetchRequest) throws -> [AttributeValues] {
        guard case .groups(let grouping) = request.resultType else {
            throw ObjectGraphError(.invalidFetch, "a grouped fetch of \(request.entity.name) without a grouping")
        }
        let entries = storesHolding(request.entity)
        if entries.count == 1, entries[0].store.capabilities.contains(.groups), subentityParts(of: request, besides: entries).isEmpty {
            let entry = entries[0]
            let result = try entry.gate.read { try entry.store.fetch(request) }
            if result.applied.contains(.predicate), let groups = result.groups { return groups }
        }
        return try groupsFromRows(request, grouping)
    }

    /// The shared definition of grouping (``RowGrouping``) over row snapshots, aggregates with
    /// ``AggregateFunction/apply(_:)``.
    private func groupsFromRows(_ request: StoreFetchRequest, _ grouping: StoreGrouping) throws -> [AttributeValues] {
        var rowsRequest = request
        rowsRequest.resultType = .snapshots
        rowsRequest.sortKeys = []
        rowsRequest.offset = 0
        rowsRequest.limit = nil
        var answer = try fetch(rowsRequest, installsRows: true)
        if answer.rows.count != answer.ids.count {
            // Rows in the answer's order: groups come in the order of their first row.
            let byID = Dictionary(try snapshots(for: answer.ids).map { ($0.objectID, $0) }, uniquingKeysWith: { a, _ in a })
            answer.rows = answer.ids.compactMap { byID[$0] }
        }
        let evaluator = PredicateEvaluator(source: SnapshotRowSource(coordinator: self))
        let keys = try grouping.keys.map { try ResolvedKeyPath.resolve($0, from: request.entity, in: model) }
        let functions: [(AggregateFunction, ResolvedKeyPath)?] = try grouping.aggregates.map { aggregate in
            guard case .function(let function, let keyPath) = aggregate else { return nil }
            return (function, try ResolvedKeyPath.resolve(keyPath, from: request.entity, in: model))
        }
        return try RowGrouping.group(answer.rows, by: keys, evaluator).map { key, members in
            AttributeValues(try key + functions.map { function in
                guard let (aggregate, path) = function else { return .integer(Int64(members.count)) }
                return aggregate.apply(try members.map { try evaluator.sortValue(path, of: $0) })
            })
        }
    }
}
