import CSQLite
import ObjectGraph

/// Reading rows, relationship members and fetch candidates.
extension SQLiteStore {
    /// The columns selected for rows of `root`: pk, entity, version, then the table's columns
    /// (entity names no reader needs as `NULL`; see ``SQLiteSchema/selectColumns``).
    func selectList(_ root: String, alias: String? = nil) -> String {
        if alias == "t0", let built = schema.aliasedSelectList[root] { return built }
        let prefix = alias.map { $0 + "." } ?? ""
        return (schema.selectColumns[root] ?? []).map { $0 == "NULL" ? $0 : prefix + $0 }.joined(separator: ", ")
    }

    /// Builds a snapshot from the current row of `statement` (selected with ``selectList(_:)``).
    func snapshot(from statement: SQLiteStatement, root: String) -> RowSnapshot? {
        rowReaders[root]?.snapshot(statement)
    }

    /// Answers a fetch in SQL: the predicate and sort compiled with bound parameters where
    /// they can be expressed exactly (see ``SQLiteQueryCompiler``); otherwise candidate rows,
    /// and the shared layer completes the work.
    public func fetch(_ request: StoreFetchRequest) throws -> StoreFetchResult {
        try withReader { connection in
            if case .groups(let grouping) = request.resultType {
                return try groups(request, grouping, connection: connection)
            }
            let root = request.entity.rootName
            var compiler = SQLiteQueryCompiler(schema: schema, model: model, storeIdentifier: identifier)
            var predicateSQL: String? = "1"
            if let predicate = request.predicate {
                predicateSQL = try? compiler.predicate(predicate, entity: request.entity)
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
            let (from, whereSQL, filterBindings) = rowFilter(request, predicateSQL: predicateSQL, compiler: compiler)
            var bindings = filterBindings
            let everything = predicateSQL != nil && orderSQL != nil

            if request.resultType == .count && predicateSQL != nil {
                let statement = try connection.prepare("SELECT COUNT(*) \(from) \(whereSQL)")
                for (offset, value) in bindings.enumerated() { try statement.bind(value, at: Int32(offset + 1)) }
                let count = try statement.step() ? Int(statement.int64(0)) : 0
                return StoreFetchResult(count: request.rangedCount(count), applied: .all)
            }
            var sql = "SELECT \(request.resultType == .objectIDs && everything ? "t0.pk, t0.entity" : selectList(root, alias: "t0")) \(from) \(whereSQL)"
            sql += " ORDER BY \(orderSQL ?? "t0.pk")"
            if everything && (request.limit != nil || request.offset > 0) {
                sql += " LIMIT ? OFFSET ?"
                bindings.append(.integer(Int64(request.limit ?? -1)))
                bindings.append(.integer(Int64(request.offset)))
            }
            let statement = try connection.prepare(sql)
            for (offset, value) in bindings.enumerated() { try statement.bind(value, at: Int32(offset + 1)) }
            var applied: StoreFetchResult.Applied = []
            if predicateSQL != nil { applied.insert(.predicate) }
            if everything { applied = .all }
            guard let reader = rowReaders[root] else { return StoreFetchResult(snapshots: [], applied: applied) }
            if request.resultType == .objectIDs && everything {
                var ids: [ObjectID] = []
                while try statement.step() {
                    if let id = reader.objectID(statement, pkColumn: 0, entityColumn: 1) { ids.append(id) }
                }
                return StoreFetchResult(objectIDs: ids, applied: applied)
            }
            var rows: [RowSnapshot] = []
            try reader.appendAll(statement, to: &rows)
            return StoreFetchResult(snapshots: rows, applied: applied)
        }
    }

    /// `FROM` and `WHERE` selecting the request's rows (`t0`), with their bindings: the
    /// entity filter, then `predicateSQL` (compiled by `compiler`, whose joins and bindings it
    /// uses), or no predicate when it is `nil`.
    func rowFilter(_ request: StoreFetchRequest, predicateSQL: String?, compiler: SQLiteQueryCompiler) -> (from: String, whereSQL: String, bindings: [AttributeValue]) {
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
        if let predicateSQL, predicateSQL != "1" { conditions.append(predicateSQL) }
        let from = "FROM \(SQLiteSchema.table(request.entity.rootName)) AS t0 " + compiler.joins.joined(separator: " ")
        let whereSQL = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        if predicateSQL != nil { bindings += compiler.bindings }
        return (from, whereSQL, bindings)
    }

    /// Rows for the IDs that exist, in chunks of `WHERE pk IN (…)`.
    public func snapshots(for ids: [ObjectID]) throws -> [RowSnapshot] {
        try withReader { connection in
            if ids.count == 1, let id = ids.first {
                return try pointRead(id, connection).map { [$0] } ?? []
            }
            var byRoot: [String: [(Int64, ObjectID)]] = [:]
            for id in ids {
                guard let pk = id.primaryKey, let entity = model.entity(for: id),
                      rowReaders[entity.rootName]?.namespaces[entity.name] == id.namespace else { continue }
                byRoot[entity.rootName, default: []].append((pk, id))
            }
            var result: [RowSnapshot] = []
            result.reserveCapacity(ids.count)
            for (root, keys) in byRoot {
                guard let reader = rowReaders[root] else { continue }
                try forEachChunk(of: keys) { chunk in
                    let statement = try connection.prepare("SELECT \(selectList(root)) FROM \(SQLiteSchema.table(root)) WHERE pk IN (\(Self.placeholders(chunk.count)))")
                    for (offset, key) in chunk.enumerated() { try statement.bind(key.0, at: Int32(offset + 1)) }
                    let wanted = Set(chunk.map(\.1))
                    while try statement.step() {
                        guard let row = reader.snapshot(statement), wanted.contains(row.objectID) else { continue }
                        result.append(row)
                    }
                }
            }
            return result
        }
    }

    /// One row: one fault.
    public func snapshot(for id: ObjectID) throws -> RowSnapshot? {
        try withReader { connection in try pointRead(id, connection) }
    }

    /// One row by a prepared point query, the common case of a fault.
    private func pointRead(_ id: ObjectID, _ connection: SQLiteConnection) throws -> RowSnapshot? {
        guard let pk = id.primaryKey, let read = pointReads[id.namespace] else { return nil }
        let statement = try connection.prepare(read.sql, key: read)
        try statement.bind(pk, at: 1)
        guard try statement.step(), let row = read.reader.snapshot(statement), row.objectID == id else { return nil }
        return row
    }

    /// Members from the foreign key (ordered by the order column) or the join table.
    public func relatedIDs(for relationship: RelationshipDescription, of sources: [ObjectID]) throws -> [ObjectID: [ObjectID]] {
        try withReader { connection in
            var result: [ObjectID: [ObjectID]] = [:]
            result.reserveCapacity(sources.count)
            for source in sources { result[source] = [] }
            guard let sourceLayout = sources.first.flatMap({ model.entity(for: $0) }).flatMap({ schema.layouts[$0.name] }),
                  let reader = rowReaders[model.destination(of: relationship).rootName] else { return result }
            let storage = sourceLayout.toMany[relationship.slot]
            if case .transient = storage { return result }
            // The sources by key, ascending (the first of any repeated key): rows come ordered by
            // source key, so each row's source is found by walking this list alongside them,
            // where a dictionary hashed every row's key (SipHash on 100,000 rows).
            var keyed = sources.enumerated().compactMap { offset, id in id.primaryKey.map { (key: $0, offset: offset, id: id) } }
            keyed.sort { ($0.key, $0.offset) < ($1.key, $1.offset) }
            var bySourceKey: [(key: Int64, id: ObjectID)] = []
            bySourceKey.reserveCapacity(keyed.count)
            for entry in keyed where bySourceKey.last?.key != entry.key { bySourceKey.append((entry.key, entry.id)) }
            // One entity's table: every member's namespace is known without reading a column
            // (nor taking the reader's plan, a retain and release per row).
            let singleNamespace = reader.single?.namespace
            try forEachChunk(of: bySourceKey) { chunk in
                let placeholders = Self.placeholders(chunk.count)
                let sql: String
                switch storage {
                case .transient: return
                // A destination table of one entity needs no entity column, and leaving it out
                // lets SQLite answer from the index alone instead of seeking every member's row.
                case .foreignKey(let table, let fk, let order):
                    sql = "SELECT \(fk), pk\(reader.single == nil ? ", entity" : "") FROM \(table) WHERE \(fk) IN (\(placeholders)) ORDER BY \(fk), \(order.map { "\($0), " } ?? "")pk"
                case .join(let table):
                    sql = "SELECT src, dst\(reader.single == nil ? ", dste" : "") FROM \(table) WHERE src IN (\(placeholders)) ORDER BY src, pos"
                }
                let statement = try connection.prepare(sql)
                for (offset, source) in chunk.enumerated() { try statement.bind(source.key, at: Int32(offset + 1)) }
                // Rows come grouped by source: collect each source's members, store them once.
                var current: (key: Int64, id: ObjectID)? = nil
                var next = chunk.startIndex
                var members: [ObjectID] = []
                func flush() {
                    if let current { result[current.id] = members }
                    // Room for as many as the last source had: appending to an empty array
                    // reallocated it at every doubling (four times for ten members).
                    let last = members.count
                    members = []
                    members.reserveCapacity(max(last, 4))
                }
                while try statement.step() {
                    let key = statement.int64(0)
                    if current?.key != key {
                        flush()
                        while next < chunk.endIndex && chunk[next].key < key { next += 1 }
                        current = next < chunk.endIndex && chunk[next].key == key ? chunk[next] : nil
                    }
                    guard current != nil else { continue }
                    if let singleNamespace {
                        members.append(singleNamespace.objectID(primaryKey: statement.int64(1)))
                    } else if let member = reader.objectID(statement, pkColumn: 1, entityColumn: 2) {
                        members.append(member)
                    }
                }
                flush()
            }
            return result
        }
    }
}
