import CSQLite
import ObjectGraph

/// Fetching: requests compiled to SQL once per shape, then run with each request's values.
extension SQLiteStore {
    /// A request compiled to SQL, kept per ``SQLiteQueryShape`` in ``queryCache``.
    struct CompiledQuery {
        /// What the statement's rows are.
        enum Answer {
            /// One row, the count.
            case count
            /// `pk, entity` per matching row, in order.
            case objectIDs
            /// Whole rows (``selectList(_:alias:)``), for the shared layer to finish when the
            /// predicate or the sort could not be compiled.
            case rows
        }

        let sql: String
        let recipe: [SQLiteQueryCompiler.BindingSource]
        let answer: Answer
        let applied: StoreFetchResult.Applied
        /// Whether the SQL sums integers (a predicate's `@sum`), which fails the statement on
        /// an overflow; the fetch is then answered without the predicate (see ``SQLiteStore/fetch(_:connection:)``).
        var mayOverflow = false
    }

    /// The most shapes ``queryCache`` keeps; it is emptied when full (an app has a few dozen
    /// fetch shapes, so this is reached only by shapes that vary without end).
    static let queryCacheCapacity = 512

    /// Answers a fetch in SQL: the predicate and sort compiled with bound parameters where
    /// they can be expressed exactly (see ``SQLiteQueryCompiler``); otherwise candidate rows,
    /// and the shared layer completes the work.
    public func fetch(_ request: StoreFetchRequest) throws -> StoreFetchResult {
        // Not in withReader's closure: captured there, the request was copied into it and
        // again into the shape, retaining each of its parts twice (perf).
        let connection = try takeReader()
        do {
            let result = try fetch(request, connection: connection)
            returnReader(connection)
            return result
        } catch {
            returnReader(connection, failed: true)
            throw error
        }
    }

    /// The body of ``fetch(_:)``, on a read connection (or the writing one, inside a save).
    func fetch(_ request: borrowing StoreFetchRequest, connection: SQLiteConnection) throws -> StoreFetchResult {
        if case .groups(let grouping) = request.resultType {
            return try groups(request, grouping, connection: connection)
        }
        let shape = SQLiteQueryShape(request)
        let query: CompiledQuery
        let bindings: [AttributeValue]
        if let cached = queryCache.withLock({ $0[shape] }), let values = shape.bindings(cached.recipe, request: request) {
            (query, bindings) = (cached, values)
            #if DEBUG
            // Every fetch the tests make checks the shape's promise: compiled afresh, the
            // request gives the same SQL and the same values.
            let fresh = compile(request)
            assert(fresh.query.sql == query.sql && Self.same(fresh.bindings, bindings),
                   "a cached SQLite query does not fit a request of its shape: \(query.sql) \(bindings) against \(fresh.query.sql) \(fresh.bindings)")
            #endif
        } else {
            (query, bindings) = compile(request)
            #if DEBUG
            let replayed = shape.bindings(query.recipe, request: request)
            assert(replayed.map { Self.same($0, bindings) } ?? false, "an SQLite query's recipe does not give back its bindings: \(query.sql) \(bindings)")
            #endif
            queryCache.withLock { cache in
                if cache.count >= Self.queryCacheCapacity { cache.removeAll(keepingCapacity: true) }
                cache[shape] = query
            }
        }
        do {
            return try run(query, bindings, request, connection: connection)
        } catch let error as StoreError where query.mayOverflow && (error.underlying as? SQLiteError)?.message.contains("integer overflow") == true {
            // A predicate's integer `@sum` overflowed in SQL, where the shared layer sums in
            // floating point instead: the rows go to the shared layer to be filtered there.
            let fallback = compile(request, pushingPredicate: false)
            return try run(fallback.query, fallback.bindings, request, connection: connection)
        }
    }

    /// Runs a compiled query with its bound values.
    private func run(_ query: CompiledQuery, _ bindings: [AttributeValue], _ request: borrowing StoreFetchRequest, connection: SQLiteConnection) throws -> StoreFetchResult {
        let statement = try connection.prepare(query.sql)
        for (offset, value) in bindings.enumerated() { try statement.bind(value, at: Int32(offset + 1)) }
        switch query.answer {
        case .count:
            let count = try statement.step() ? Int(statement.int64(0)) : 0
            return StoreFetchResult(count: request.rangedCount(count), applied: .all)
        case .objectIDs:
            guard let reader = rowReaders[request.entity.rootName] else { return StoreFetchResult(applied: query.applied) }
            var ids: [ObjectID] = []
            ids.reserveCapacity(statement.lastRowCount)
            while try statement.step() {
                if let id = try reader.objectID(statement, pkColumn: 0, entityColumn: 1) { ids.append(id) }
            }
            statement.lastRowCount = ids.count
            return StoreFetchResult(objectIDs: ids, applied: query.applied)
        case .rows:
            guard let reader = rowReaders[request.entity.rootName] else { return StoreFetchResult(snapshots: [], applied: query.applied) }
            var rows: [RowSnapshot] = []
            rows.reserveCapacity(statement.lastRowCount)
            try reader.appendAll(statement, to: &rows)
            statement.lastRowCount = rows.count
            return StoreFetchResult(snapshots: rows, applied: query.applied)
        }
    }

    /// Whether two lists of bound values are the same (a NaN is the same as a NaN).
    static func same(_ a: [AttributeValue], _ b: [AttributeValue]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { x, y in
            if case .double(let p) = x, case .double(let q) = y, p.isNaN && q.isNaN { return true }
            return x == y
        }
    }

    /// Compiles `request` (not a grouping): as much of it as SQL can answer exactly, and the
    /// values it binds; with `pushingPredicate` false, none of its predicate (and so none of
    /// its sort or range).
    private func compile(_ request: StoreFetchRequest, pushingPredicate: Bool = true) -> (query: CompiledQuery, bindings: [AttributeValue]) {
        let root = request.entity.rootName
        var compiler = SQLiteQueryCompiler(schema: schema, model: model, storeIdentifier: identifier)
        var predicateSQL: String? = "1"
        if let predicate = request.predicate {
            predicateSQL = pushingPredicate ? try? compiler.predicate(predicate, entity: request.entity) : nil
            if predicateSQL == nil { compiler = SQLiteQueryCompiler(schema: schema, model: model, storeIdentifier: identifier) }
        }
        var orderSQL: String? = nil
        if predicateSQL != nil {
            var sortCompiler = compiler
            if let order = try? sortCompiler.orderBy(request.sortKeys, entity: request.entity) {
                compiler = sortCompiler
                orderSQL = order
            }
        }
        let filter = rowFilter(request, predicateSQL: predicateSQL, compiler: compiler)
        var recipe = filter.recipe
        var bindings = filter.bindings
        let everything = predicateSQL != nil && orderSQL != nil
        if request.resultType == .count && predicateSQL != nil {
            return (CompiledQuery(sql: "SELECT COUNT(*) \(filter.from) \(filter.whereSQL)", recipe: recipe, answer: .count, applied: .all,
                                  mayOverflow: compiler.mayOverflow), filter.bindings)
        }
        let idsOnly = request.resultType == .objectIDs && everything
        var sql = "SELECT \(idsOnly ? "t0.pk, t0.entity" : selectList(root, alias: "t0")) \(filter.from) \(filter.whereSQL)"
        sql += " ORDER BY \(orderSQL ?? "t0.pk")"
        if everything && (request.limit != nil || request.offset > 0) {
            sql += " LIMIT ? OFFSET ?"
            recipe.append(.limit)
            recipe.append(.offset)
            bindings.append(.integer(Int64(request.limit ?? -1)))
            bindings.append(.integer(Int64(request.offset)))
        }
        var applied: StoreFetchResult.Applied = []
        if predicateSQL != nil { applied.insert(.predicate) }
        if everything { applied = .all }
        return (CompiledQuery(sql: sql, recipe: recipe, answer: idsOnly ? .objectIDs : .rows, applied: applied,
                              mayOverflow: predicateSQL != nil && compiler.mayOverflow), bindings)
    }

    /// `FROM` and `WHERE` selecting the request's rows (`t0`), with their bindings and where
    /// each comes from: the entity filter, then `predicateSQL` (compiled by `compiler`, whose
    /// joins and bindings it uses), or no predicate when it is `nil`.
    func rowFilter(_ request: StoreFetchRequest, predicateSQL: String?, compiler: SQLiteQueryCompiler)
        -> (from: String, whereSQL: String, bindings: [AttributeValue], recipe: [SQLiteQueryCompiler.BindingSource]) {
        var bindings: [AttributeValue] = []
        var conditions: [String] = []
        // Fetching every entity of the table needs no entity filter (and then an index on the
        // predicate's column can serve the query alone).
        let requested = request.entityNames
        if !(schema.layouts[request.entity.name]?.allEntitiesOfRoot.isSubset(of: requested) ?? false) {
            let names = requested.sorted()
            bindings = names.map { .string($0) }
            conditions.append("t0.entity IN (\(Self.placeholders(names.count)))")
        }
        var recipe = bindings.map(SQLiteQueryCompiler.BindingSource.literal)
        if let predicateSQL, predicateSQL != "1" { conditions.append(predicateSQL) }
        let from = "FROM \(SQLiteSchema.table(request.entity.rootName)) AS t0 " + compiler.joins.joined(separator: " ")
        let whereSQL = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        if predicateSQL != nil {
            bindings += compiler.bindings
            recipe += compiler.recipe
        }
        return (from, whereSQL, bindings, recipe)
    }
}
