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
    func snapshot(from statement: SQLiteStatement, root: String) throws -> RowSnapshot? {
        try rowReaders[root]?.snapshot(statement)
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
                        guard let row = try reader.snapshot(statement), wanted.contains(row.objectID) else { continue }
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
        guard try statement.step(), let row = try read.reader.snapshot(statement), row.objectID == id else { return nil }
        return row
    }

    /// Members from the foreign key (ordered by the order column) or the join table.
    public func relatedIDs(for relationship: RelationshipDescription, of sources: [ObjectID]) throws -> [[ObjectID]] {
        try withReader { connection in
            var result = [[ObjectID]](repeating: [], count: sources.count)
            guard let sourceLayout = sources.first.flatMap({ model.entity(for: $0) }).flatMap({ schema.layouts[$0.name] }),
                  let reader = rowReaders[model.destinationEntity(of: relationship).rootName] else { return result }
            let storage = sourceLayout.toMany[relationship.slot]
            if case .transient = storage { return result }
            // The sources by key, ascending (the first of any repeated key): rows come ordered by
            // source key, so each row's source is found by walking this list alongside them,
            // where a dictionary hashed every row's key (SipHash on 100,000 rows).
            // Only this store's sources (by the interned namespace of their IDs): another
            // store's row with the same key is not theirs.
            var keyed = sources.enumerated().compactMap { offset, id in
                layoutsByNamespace[id.namespace] == nil ? nil : id.primaryKey.map { (key: $0, offset: offset) }
            }
            keyed.sort { ($0.key, $0.offset) < ($1.key, $1.offset) }
            var bySourceKey: [(key: Int64, offset: Int)] = []
            bySourceKey.reserveCapacity(keyed.count)
            // A source named again gets the list of its first naming (copied at the end).
            var repeats: [(offset: Int, first: Int)] = []
            for entry in keyed {
                if let last = bySourceKey.last, last.key == entry.key {
                    repeats.append((entry.offset, last.offset))
                } else {
                    bySourceKey.append(entry)
                }
            }
            // One entity's table: every member's namespace is known without reading a column
            // (nor taking the reader's plan, a retain and release per row).
            let singleNamespace = reader.single?.namespace
            // A table of several entities: a member must be of the destination's hierarchy, not
            // a sibling of it in the table (a damaged foreign key or join row gave one, whose
            // missing inverse slot stopped the process when the owner was deleted: a review).
            // A destination that is the table's root takes every row the reader accepts.
            let destination = model.destinationEntity(of: relationship)
            let destinations: Set<ObjectID.Namespace>? = singleNamespace == nil && destination.name != destination.rootName
                ? Set(SQLiteRowReader.namespaces(reader.namespaces, of: destination).values) : nil
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
                var current: (key: Int64, offset: Int)? = nil
                var next = chunk.startIndex
                var members: [ObjectID] = []
                func flush() {
                    if let current { result[current.offset] = members }
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
                    } else if let member = try reader.objectID(statement, pkColumn: 1, entityColumn: 2) {
                        guard destinations?.contains(member.namespace) ?? true else {
                            throw StoreError(.corrupt, "\(url.path): \(relationship.entityName).\(relationship.name) of the row with key \(key) holds a \(member.entityName) (key \(member.primaryKey ?? 0)), which is not a \(relationship.destinationName)")
                        }
                        members.append(member)
                    }
                }
                flush()
            }
            for (offset, first) in repeats { result[offset] = result[first] }
            return result
        }
    }
}
