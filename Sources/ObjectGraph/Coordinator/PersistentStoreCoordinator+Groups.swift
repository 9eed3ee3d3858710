/// Grouped, aggregated fetches (``StoreFetchRequest/ResultType/groups(_:)``): answered by the
/// store when it can (``StoreCapabilities/groups``), otherwise computed here from the matching
/// rows' snapshots — never by materializing managed objects, so every store answers a
/// dictionary fetch without filling a context with 100,000 objects.
extension PersistentStoreCoordinator {
    /// The groups of `request` (whose result type is `.groups`): one array per group, keys then
    /// aggregates, groups in order of their first member by primary key.
    func groups(_ request: StoreFetchRequest) throws -> [[AttributeValue]] {
        guard case .groups(let grouping) = request.resultType else {
            throw ObjectGraphError(.invalidFetch, "a grouped fetch of \(request.entity.name) without a grouping")
        }
        let entries = try self.entries(holding: request.entity.name)
        if entries.count == 1, entries[0].store.capabilities.contains(.groups) {
            let entry = entries[0]
            let result = try entry.gate.read { try entry.store.fetch(request) }
            if result.applied.contains(.predicate), let groups = result.groups { return groups }
        }
        return try groupsFromRows(request, grouping)
    }

    /// The shared definition of grouping, over row snapshots: keys compared with `==` of
    /// ``AttributeValue`` (so canonically equivalent strings group together), aggregates with
    /// ``AggregateFunction/apply(_:)``.
    private func groupsFromRows(_ request: StoreFetchRequest, _ grouping: StoreGrouping) throws -> [[AttributeValue]] {
        var rowsRequest = request
        rowsRequest.resultType = .snapshots
        rowsRequest.sortKeys = []
        rowsRequest.offset = 0
        rowsRequest.limit = nil
        var answer = try fetch(rowsRequest, installsRows: true)
        if answer.rows.count != answer.ids.count { answer.rows = try snapshots(for: answer.ids) }
        let evaluator = PredicateEvaluator(source: SnapshotRowSource(coordinator: self))
        let keys = try grouping.keys.map { try ResolvedKeyPath.resolve($0, from: request.entity, in: model) }
        let functions: [(AggregateFunction, ResolvedKeyPath)?] = try grouping.aggregates.map { aggregate in
            guard case .function(let function, let keyPath) = aggregate else { return nil }
            return (function, try ResolvedKeyPath.resolve(keyPath, from: request.entity, in: model))
        }
        var order: [[AttributeValue]] = []
        var members: [[AttributeValue]: (count: Int, values: [[AttributeValue]])] = [:]
        for row in answer.rows {
            let key = try keys.map { try evaluator.sortValue($0, of: row) }
            if members[key] == nil {
                order.append(key)
                members[key] = (0, Array(repeating: [], count: functions.count))
            }
            members[key]!.count += 1
            for (index, function) in functions.enumerated() {
                guard let (_, path) = function else { continue }
                members[key]!.values[index].append(try evaluator.sortValue(path, of: row))
            }
        }
        if keys.isEmpty && order.isEmpty {
            order = [[]]
            members[[]] = (0, Array(repeating: [], count: functions.count))
        }
        return order.map { key in
            let group = members[key]!
            return key + functions.enumerated().map { index, function in
                guard let (aggregate, _) = function else { return .integer(Int64(group.count)) }
                return aggregate.apply(group.values[index])
            }
        }
    }
}
