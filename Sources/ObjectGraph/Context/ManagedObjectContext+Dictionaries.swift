import Foundation

/// Dictionary results: columns, aggregates, grouping, HAVING and DISTINCT — Core Data's
/// `dictionaryResultType`, defined once here over the same matching objects as `fetch`, so
/// every store gives the same rows.
extension ManagedObjectContext {
    /// One row of a dictionary fetch (see ``ObjectGraph/FetchedRow``).
    public typealias FetchedRow = ObjectGraph.FetchedRow

    /// The rows of `request` as dictionaries of ``FetchRequest/propertiesToFetch`` columns.
    ///
    /// With no columns named, the columns are every stored attribute of the entity, as in
    /// Core Data. A column may name a to-one relationship (or a key path ending in one through
    /// to-one steps): it holds the destination's ID (see ``FetchedRow/objectID(_:)``), `.null`
    /// when the relationship is empty; a to-many relationship is refused.
    ///
    /// Without grouping, a request of plain columns gives one row per matching object, and a
    /// request with aggregates gives one row over all of them. With
    /// ``FetchRequest/propertiesToGroupBy``, each distinct combination of the group-by values
    /// gives one row; like a column, a group-by key path reaches one attribute value or a
    /// to-one relationship, grouped by destination as in Core Data (the group's column holds
    /// the destination's ID, and rows without one form a group of their own); a to-many key
    /// path is refused. ``FetchRequest/havingPredicate`` then filters rows
    /// by column name. A sort key naming a column sorts by it; when each row is one object,
    /// any other sort key is an attribute key path of the entity (fetched or not, through
    /// to-one relationships, as in Core Data), while grouped rows sort only by their columns.
    /// Offset and limit apply last. Unsaved changes count as for `fetch` (Core Data ignores
    /// them in dictionary fetches; here they count, and ``FetchRequest/includesPendingChanges``
    /// `= false` leaves them out): values are read from the store, as Core Data reads them,
    /// unless unsaved changes are included and could alter the rows, when they are read as
    /// the context's save would leave them (objects with unsaved changes by their values,
    /// every other object by its stored row).
    public func fetchDictionaries<T: ManagedObject>(_ request: FetchRequest<T>) throws -> [FetchedRow] {
        try checkQueue("fetchDictionaries(_:)")
        if let resolved = resolvingHandedOverIDs(in: request) { return try fetchDictionaries(resolved) }
        let entity = try fetchEntity(of: request)
        let properties = request.propertiesToFetch.isEmpty ? ResolvedColumn.allAttributes(of: entity) : request.propertiesToFetch
        let columns = try properties.map { try ResolvedColumn($0, entity: entity, model: model) }
        var names = Set<String>()
        for column in columns where !names.insert(column.property.name).inserted {
            throw ObjectGraphError(.invalidFetch, key: column.property.name, "two columns of the dictionary fetch of \(entity.name) are named '\(column.property.name)'; give one another name with as:")
        }
        let shared = FetchedRow.Columns(columns.map(\.property.name))
        let groupBy = try request.propertiesToGroupBy.map { key in
            let path = try ResolvedKeyPath.resolve(key, from: entity, in: model)
            // A group's key is one value, as a column's is: an attribute's, or a to-one's
            // destination (grouped by object, as Core Data does). A to-many key path has many
            // (each grouped by nil or a first member's value, silently).
            var reachesOne = path.attributeType != nil
            if case .relationship = path.terminal { reachesOne = true }
            guard reachesOne, !path.yieldsMany else {
                throw ObjectGraphError(.invalidFetch, key: key, "cannot group \(entity.name) by '\(key)': a group-by key path must reach one attribute value or one object (through to-one relationships, or an aggregate such as @count); group by a to-one relationship or an attribute instead")
            }
            return path
        }
        let hasAggregates = columns.contains { $0.isAggregate }
        if !groupBy.isEmpty {
            for column in columns where !column.isAggregate {
                guard case .value(let path) = column.property.kind, request.propertiesToGroupBy.contains(path) else {
                    throw ObjectGraphError(.invalidFetch, key: column.property.name, "column '\(column.property.name)' of a grouped fetch must be an aggregate or one of the group-by key paths \(request.propertiesToGroupBy)")
                }
            }
        }
        if let having = request.havingPredicate {
            try having.checkNesting()
            try RowPredicate.check(having, columns: Set(shared.names))
        }
        // Each row is one object unless rows are groups (or one row of aggregates). Rows of
        // objects are sorted where they are made, where a key that is no column can still be
        // read from the row's object (see rows(of:)); groups are sorted by columns, below.
        let rowsAreObjects = groupBy.isEmpty && !hasAggregates
        let sortKeys = try DictionarySortKey.resolve(request.sortKeys, columns: columns, rowsAreObjects: rowsAreObjects, entity: entity, model: model)
        var rows: [FetchedRow]
        let live = try unsavedChangesMatter(request, entity: entity, columns: columns, groupBy: groupBy, sortKeys: sortKeys)
        if !live, let grouped = try storeGroups(request, entity: entity, columns: columns, shared: shared) {
            rows = grouped
        } else {
            rows = try groupsFromRows(request, entity: entity, live: live, columns: columns, shared: shared, groupBy: groupBy, sortKeys: rowsAreObjects ? sortKeys : [])
        }
        if let having = request.havingPredicate {
            rows = try rows.filter { try RowPredicate.evaluate(having, on: $0) }
        }
        if request.returnsDistinctResults {
            var seen = Set<FetchedRow>()
            rows = rows.filter { seen.insert($0).inserted }
        }
        if !rowsAreObjects {
            // Every key names a column here (see DictionarySortKey.resolve).
            rows = DictionarySortKey.sort(rows, by: sortKeys) { _, _ in .null }
        }
        return PersistentStoreCoordinator.slice(rows, offset: request.fetchOffset, limit: request.fetchLimit > 0 ? request.fetchLimit : nil)
    }

    /// Whether the rows must be read from the context's objects: pending changes are included
    /// and some could alter them — of the fetched entity, or of one the predicate, the group-by
    /// keys or the columns read through relationships. Otherwise the rows are the store's.
    private func unsavedChangesMatter<T: ManagedObject>(_ request: FetchRequest<T>, entity: EntityDescription, columns: [ResolvedColumn], groupBy: [ResolvedKeyPath], sortKeys: [DictionarySortKey]) throws -> Bool {
        try processPendingChanges()
        guard request.includesPendingChanges, !(insertedStorage.isEmpty && updatedStorage.isEmpty && deletedStorage.isEmpty) else { return false }
        // The sort keys may name result columns, not attributes: left out of the check (which
        // compiles a store request), and those that read related objects added below.
        var matching = request
        matching.sortKeys = []
        if try pendingChangesMatter(matching, entity: entity) { return true }
        var tokens = Set<UInt32>()
        for key in groupBy { addRelatedEntityTokens(of: key, to: &tokens) }
        for column in columns { if let path = column.path { addRelatedEntityTokens(of: path, to: &tokens) } }
        for key in sortKeys { if case .path(let path) = key.source { addRelatedEntityTokens(of: path, to: &tokens) } }
        return hasPendingChanges(inTokens: tokens)
    }

    /// The rows computed here from the matching rows: when `live`, as the context's save would
    /// leave them (unsaved changes included, see SavedStateRowSource), otherwise the store's
    /// row snapshots. Core Data reads a dictionary fetch's values from the store; objects the
    /// context loaded earlier may hold older values (another context saved since) or unsaved
    /// ones the request excludes (`includesPendingChanges = false`), and a row read from them
    /// contradicted its own predicate, which the store had matched (`age > 90` giving `age = 36`).
    ///
    /// `sortKeys`, given when each row is one object, order those rows.
    private func groupsFromRows<T: ManagedObject>(_ request: FetchRequest<T>, entity: EntityDescription, live: Bool, columns: [ResolvedColumn], shared: FetchedRow.Columns, groupBy: [ResolvedKeyPath], sortKeys: [DictionarySortKey]) throws -> [FetchedRow] {
        var matching = request
        matching.fetchOffset = 0
        matching.fetchLimit = 0
        matching.sortKeys = []
        matching.returnsObjectsAsFaults = true
        if live {
            // As a save would leave them: unchanged objects by their stored values.
            let source = SavedStateRowSource(context: self)
            let matches = try source.rows(for: fetchObjectIDs(matching))
            return try Self.rows(of: matches, PredicateEvaluator(source: source), request: request, columns: columns, shared: shared, groupBy: groupBy, sortKeys: sortKeys)
        }
        var storeRequest = try makeStoreRequest(matching, entity: entity)
        storeRequest.resultType = .snapshots
        statisticsStorage.storeRoundTrips += 1
        var answer = try coordinator.fetch(storeRequest, installsRows: true)
        if answer.rows.count != answer.ids.count {
            // Rows in the answer's order: plain rows and groups follow it.
            statisticsStorage.storeRoundTrips += 1
            let byID = Dictionary(try coordinator.snapshots(for: answer.ids).map { ($0.objectID, $0) }, uniquingKeysWith: { a, _ in a })
            answer.rows = answer.ids.compactMap { byID[$0] }
        }
        let evaluator = PredicateEvaluator(source: SnapshotRowSource(coordinator: coordinator))
        return try Self.rows(of: answer.rows, evaluator, request: request, columns: columns, shared: shared, groupBy: groupBy, sortKeys: sortKeys)
    }

    /// The result rows over `matches`: one per match for plain columns (in the order of
    /// `sortKeys`), else one per group.
    private static func rows<S: PredicateRowSource, T: ManagedObject>(of matches: [S.Row], _ evaluator: PredicateEvaluator<S>, request: FetchRequest<T>, columns: [ResolvedColumn], shared: FetchedRow.Columns, groupBy: [ResolvedKeyPath], sortKeys: [DictionarySortKey]) throws -> [FetchedRow] {
        var rows: [FetchedRow] = []
        if groupBy.isEmpty && !columns.contains(where: \.isAggregate) {
            rows.reserveCapacity(matches.count)
            for match in matches {
                rows.append(FetchedRow(columns: shared, values: try columns.map { try $0.value(of: match, evaluator) }))
            }
            // Before HAVING, DISTINCT and paging, while each row's object is at hand.
            rows = try DictionarySortKey.sort(rows, by: sortKeys) { path, index in try evaluator.sortValue(path, of: matches[index]) }
        } else {
            for (key, members) in try RowGrouping.group(matches, by: groupBy, evaluator) {
                let values = try columns.map {
                    try $0.aggregate(over: members, evaluator, groupKey: key, groupBy: request.propertiesToGroupBy)
                }
                rows.append(FetchedRow(columns: shared, values: values))
            }
        }
        return rows
    }

    /// The groups computed from stored rows (by the store natively when it can, else by the
    /// coordinator from row snapshots), for a request no unsaved change can alter (see
    /// `unsavedChangesMatter`); `nil` when the request has no groups or aggregates, or a
    /// column the store's groups do not hold.
    private func storeGroups<T: ManagedObject>(_ request: FetchRequest<T>, entity: EntityDescription, columns: [ResolvedColumn], shared: FetchedRow.Columns) throws -> [FetchedRow]? {
        guard !request.propertiesToGroupBy.isEmpty || columns.contains(where: \.isAggregate) else { return nil }
        // The sort keys name result columns, not attributes (grouped rows sort by columns
        // only): left out of every store request.
        var matching = request
        matching.sortKeys = []
        var aggregates: [StoreAggregate] = []
        var sources: [GroupColumnSource] = []
        for column in columns {
            switch column.property.kind {
            case .count:
                sources.append(.aggregate(aggregates.count))
                aggregates.append(.count)
            case .aggregate(let function, let keyPath):
                sources.append(.aggregate(aggregates.count))
                aggregates.append(.function(function, keyPath))
            case .value(let keyPath):
                // Outside the group-by keys a plain column takes its first member's value,
                // which the shared path reads.
                guard let index = request.propertiesToGroupBy.firstIndex(of: keyPath) else { return nil }
                sources.append(.key(index))
            }
        }
        var storeRequest = try makeStoreRequest(matching, entity: entity)
        storeRequest.offset = 0
        storeRequest.limit = nil
        storeRequest.resultType = .groups(StoreGrouping(keys: request.propertiesToGroupBy, aggregates: aggregates))
        statisticsStorage.storeRoundTrips += 1
        var groups = try coordinator.groups(storeRequest)
        let keyCount = request.propertiesToGroupBy.count
        // The store's values are the group keys, then the aggregates. When the columns are
        // exactly those, in that order, each group's array moves into its row as it is (no
        // copy, no reference counting); otherwise each row picks its columns' values out of it.
        let inStoreOrder = sources.count == keyCount + aggregates.count && sources.indices.allSatisfy { position in
            switch sources[position] {
            case .key(let index): return index == position
            case .aggregate(let index): return keyCount + index == position
            }
        }
        // An aggregate function over no values (a group whose members all lack the value)
        // gives the shared function's answer for nothing, as the in-memory path does.
        func filled(_ value: AttributeValue, aggregate index: Int) -> AttributeValue {
            if value.isNull, case .function(let function, _) = aggregates[index] { return function.apply([]) }
            return value
        }
        var rows: [FetchedRow] = []
        rows.reserveCapacity(groups.count)
        for position in groups.indices {
            if inStoreOrder && groups[position].count == sources.count {
                var values = AttributeValues()
                swap(&values, &groups[position])
                for index in aggregates.indices where values[keyCount + index].isNull {
                    values[keyCount + index] = filled(values[keyCount + index], aggregate: index)
                }
                rows.append(FetchedRow(columns: shared, values: values))
                continue
            }
            var values: [AttributeValue] = []
            values.reserveCapacity(sources.count)
            for source in sources {
                switch source {
                case .key(let index): values.append(groups[position][index])
                case .aggregate(let index): values.append(filled(groups[position][keyCount + index], aggregate: index))
                }
            }
            rows.append(FetchedRow(columns: shared, values: values))
        }
        return rows
    }
}

/// Where a column of a store-computed group comes from: a group key or an aggregate, by index.
private enum GroupColumnSource {
    case key(Int)
    case aggregate(Int)
}

/// Evaluates a predicate on a result row, by column name (for HAVING).
enum RowPredicate {
    static func evaluate(_ predicate: FetchPredicate, on row: ManagedObjectContext.FetchedRow) throws -> Bool {
        switch predicate {
        case .constant(let value): return value
        case .and(let parts): return try parts.allSatisfy { try evaluate($0, on: row) }
        case .or(let parts): return try parts.contains { try evaluate($0, on: row) }
        case .not(let inner): return try !evaluate(inner, on: row)
        case .comparison(let c):
            let left = try operand(c.left, row)
            switch c.op {
            case .in:
                guard case .list(let items) = c.right else { throw ObjectGraphError(.invalidFetch, "IN needs a list in a HAVING predicate") }
                return try items.contains { equal(left, try operand($0, row), c.options) }
            case .between:
                guard case .list(let items) = c.right, items.count == 2 else { throw ObjectGraphError(.invalidFetch, "BETWEEN needs two bounds") }
                guard let low = order(left, try operand(items[0], row), c.options), let high = order(left, try operand(items[1], row), c.options) else { return false }
                return low != .orderedAscending && high != .orderedDescending
            default: break
            }
            let right = try operand(c.right, row)
            if case .string(let l) = left, case .string(let r) = right {
                // The very string semantics of fetch predicates, options included.
                return StringOperators.evaluate(c.op, c.options, l, r)
            }
            switch c.op {
            case .equal: return equal(left, right, c.options)
            case .notEqual: return !equal(left, right, c.options)
            case .lessThan: return order(left, right, c.options) == .orderedAscending
            case .lessThanOrEqual: return order(left, right, c.options).map { $0 != .orderedDescending } ?? false
            case .greaterThan: return order(left, right, c.options) == .orderedDescending
            case .greaterThanOrEqual: return order(left, right, c.options).map { $0 != .orderedAscending } ?? false
            case .beginsWith, .endsWith, .contains, .like, .matches:
                return false  // string operators on a non-string value
            case .in, .between:
                throw ObjectGraphError(.invalidFetch, "\(c.op.rawValue) is not supported in a HAVING predicate")
            }
        }
    }

    private static func operand(_ operand: PredicateOperand, _ row: ManagedObjectContext.FetchedRow) throws -> AttributeValue {
        switch operand {
        case .constant(let value): return value
        case .keyPath(let name):
            guard let value = row[name] else {
                throw ObjectGraphError(.invalidFetch, key: name, "the HAVING predicate names '\(name)', which is not a fetched column (\(row.keys.sorted().joined(separator: ", ")))")
            }
            return value
        default:
            throw ObjectGraphError(.invalidFetch, "a HAVING predicate compares fetched columns with constants")
        }
    }

    private static func equal(_ a: AttributeValue, _ b: AttributeValue, _ options: StringComparisonOptions) -> Bool {
        if case .string(let x) = a, case .string(let y) = b, !options.isEmpty {
            return TextFolding.fold(x, options) == TextFolding.fold(y, options)
        }
        return AttributeValue.predicateEqual(a, b)
    }

    private static func order(_ a: AttributeValue, _ b: AttributeValue, _ options: StringComparisonOptions) -> ComparisonResult? {
        if case .string(let x) = a, case .string(let y) = b, !options.isEmpty {
            return AttributeValue.compare(.string(TextFolding.fold(x, options)), .string(TextFolding.fold(y, options)))
        }
        return AttributeValue.compare(a, b)
    }
}
