import CLMDB
import Foundation
import ObjectGraph

/// Fetching: candidates come from a secondary index when a conjunct on an indexed attribute
/// allows it, in index order when the first sort key is an indexed attribute, and otherwise
/// from a scan of the hierarchy's rows; the predicate is always evaluated by the shared
/// ``ObjectGraph/PredicateEvaluator`` and the order decided by the shared
/// ``ObjectGraph/CompiledSort``, so answers equal every other store's.
extension LMDBStore {
    /// Answers a fetch completely (predicate, sort and range) in one read transaction.
    public func fetch(_ request: StoreFetchRequest) throws -> StoreFetchResult {
        // `chat == X` counted from X's members, without compiling the predicate (the context
        // leaves this shape uncompiled, see StoreFetchRequest.validate(in:)); `nil` when the
        // members cannot tell (X is gone), and the rows are counted below.
        if request.resultType == .count, let form = request.toOneComparison, form.op == .equal,
           let counted = try countRows(of: request.entity, includesSubentities: request.includesSubentities, where: form.relationship, is: form.object) {
            return StoreFetchResult(count: request.rangedCount(counted), applied: .all)
        }
        let compiled = try request.compiled(in: model)
        guard let rowsDBI = handles.rows[request.entity.rootName] else {
            throw StoreError(.backend, "the LMDB store at \(url.path) holds no entity \(request.entity.name)")
        }
        // Reached through a pointer: captured by the transaction's closures, the request was
        // copied into each of them, retaining every part of it (a sixth of a count, perf).
        return try withUnsafePointer(to: request) { request in
            try read { txn in try fetch(request.pointee, compiled, rowsDBI: rowsDBI, in: txn) }
        }
    }

    /// ``fetch(_:)`` in `txn` (a save's write transaction: see ``save(_:checking:)``).
    func fetch(_ request: StoreFetchRequest, in txn: LMDBTransaction) throws -> StoreFetchResult {
        let compiled = try request.compiled(in: model)
        guard let rowsDBI = handles.rows[request.entity.rootName] else {
            throw StoreError(.backend, "the LMDB store at \(url.path) holds no entity \(request.entity.name)")
        }
        return try fetch(request, compiled, rowsDBI: rowsDBI, in: txn)
    }

    /// `relationship == owner` counted from the owner's members in the inverse's members
    /// database (see ``RelationshipPlan``), without a fetch.
    public func countRows(of entity: EntityDescription, includesSubentities: Bool, where relationship: RelationshipDescription, is owner: ObjectID) throws -> Int? {
        guard let plan = RelationshipPlan.plan(relationship, equalTo: owner, store: self, whole: true) else { return nil }
        let codes = layout.codes(of: entity, includesSubentities: includesSubentities)
        return try read { txn in try plan.count(store: self, codes: codes, in: txn) }
    }

    /// The body of ``fetch(_:)``, inside its read transaction.
    private func fetch(_ request: StoreFetchRequest, _ compiled: StoreFetchRequest.Compiled, rowsDBI: MDB_dbi, in txn: LMDBTransaction) throws -> StoreFetchResult {
        let predicate = compiled.predicate
        let sort = compiled.sort
        if case .groups(let grouping) = request.resultType { return try groups(request, grouping, in: txn) }
        let evaluator = PredicateEvaluator(source: LMDBRowSource(store: self, txn: txn))
        let codes = layout.codes(of: request)
        func matches(_ row: RowSnapshot) throws -> Bool {
            guard let predicate else { return true }
            return try evaluator.evaluate(predicate, on: row)
        }
        var rows: [RowSnapshot] = []
        var count = 0
        let counting = request.resultType == .count
        // A relationship plan that is the whole predicate selects exactly the matches.
        var exact = false
        // Candidates' rows are read through one cursor: LMDB looks a key up on the cursor's
        // current page before searching the tree from its root, and a relationship's members
        // come in key order, mostly neighbours (`mdb_get` searched from the root each time:
        // 1,680 instructions a row, a fifth of LMDB `chat-messages`, callgrind).
        func candidate(_ pk: Int64, _ code: UInt16, _ rowCursor: LMDBCursor) throws {
            guard codes.contains(code), let bytes = try rowCursor.position(MDB_SET_KEY, primaryKey: pk)?.value else { return }
            let row = try decode(bytes, pk: pk)
            guard try exact || matches(row) else { return }
            if counting { count += 1 } else { rows.append(row) }
        }
        if let predicate, let plan = try RelationshipPlan.make(predicate, store: self, in: txn) {
            // (A count of this comparison alone was answered by fetch(_:); a plan made for a
            // conjunction, tried only here, narrows the candidates.)
            exact = plan.isWholePredicate
            try txn.withCursor(rowsDBI) { rowCursor in try plan.forEachEntry(store: self, in: txn) { try candidate($0, $1, rowCursor) } }
        } else if let predicate, let plan = IndexPlan.make(predicate, layout: layout, handles: handles, keyLimit: keyLimit) {
            try txn.withCursor(rowsDBI) { rowCursor in try plan.forEachEntry(in: txn) { try candidate($0, $1, rowCursor) } }
        } else if !counting, let ordered = try indexOrdered(request, sort: sort, txn: txn, codes: codes, rowsDBI: rowsDBI, matches: matches) {
            return result(ordered, request)
        } else if !counting && sort.keys.isEmpty {
            return try scanInKeyOrder(request, rowsDBI: rowsDBI, codes: codes, txn: txn, filtered: predicate != nil, matches: matches)
        } else {
            try txn.withCursor(rowsDBI) { cursor in
                var entry = try cursor.move(MDB_FIRST)
                while let current = entry {
                    entry = try cursor.move(MDB_NEXT)
                    guard let code = codec.entityCode(of: current.value), codes.contains(code) else {
                        try checkSkippedRow(try PrimaryKeyBytes.decode(current.key), current.value, in: rowsDBI)
                        continue
                    }
                    let row = try decode(current.value, pk: try PrimaryKeyBytes.decode(current.key))
                    guard try matches(row) else { continue }
                    if counting { count += 1 } else { rows.append(row) }
                }
            }
        }
        if counting { return StoreFetchResult(count: request.rangedCount(count), applied: .all) }
        rows = try Self.sorted(rows, by: sort, using: evaluator)
        return result(slice(rows, offset: request.offset, limit: request.limit), request)
    }

    /// A scan when no sort is asked: rows come in key order, which is then the answer's order,
    /// so offset and limit apply as the scan goes (it stops at the limit), only the answer is
    /// kept, and IDs of an unfiltered fetch are read from keys without decoding rows — a
    /// million-row ID fetch holds the IDs, not the rows.
    private func scanInKeyOrder(
        _ request: StoreFetchRequest, rowsDBI: MDB_dbi, codes: EntityCodes, txn: LMDBTransaction, filtered: Bool,
        matches: (RowSnapshot) throws -> Bool
    ) throws -> StoreFetchResult {
        let wantsRows = request.resultType == .snapshots
        let limit = request.limit.map { max($0, 0) }
        var toSkip = max(request.offset, 0)
        var ids: [ObjectID] = []
        var rows: [RowSnapshot] = []
        // Sized once from the table's entry count (an O(1) statistic) when every row may be in
        // the answer: growing a 100,000-row array by doublings copied it seventeen times.
        if limit == nil && !filtered {
            let entries = try txn.entries(rowsDBI)
            if wantsRows { rows.reserveCapacity(entries) } else { ids.reserveCapacity(entries) }
        }
        // Every row of an unfiltered row fetch is in the answer: decoded straight into runs
        // whose values share one array (see RowRun).
        if wantsRows && !filtered && limit == nil && toSkip == 0 {
            var run = codec.attributeWidth(of: codes).map(RowRun.init(width:)) ?? RowRun()
            try txn.withCursor(rowsDBI) { cursor in
                var entry = try cursor.move(MDB_FIRST)
                while let current = entry {
                    entry = try cursor.move(MDB_NEXT)
                    guard let code = codec.entityCode(of: current.value), codes.contains(code) else {
                        try checkSkippedRow(try PrimaryKeyBytes.decode(current.key), current.value, in: rowsDBI)
                        continue
                    }
                    try decode(current.value, pk: try PrimaryKeyBytes.decode(current.key), into: &run, &rows)
                }
            }
            run.flush(into: &rows)
            return StoreFetchResult(snapshots: rows, applied: .all)
        }
        try txn.withCursor(rowsDBI) { cursor in
            var entry = try cursor.move(MDB_FIRST)
            while let current = entry, limit.map({ max(ids.count, rows.count) < $0 }) ?? true {
                entry = try cursor.move(MDB_NEXT)
                guard let code = codec.entityCode(of: current.value), codes.contains(code) else {
                    try checkSkippedRow(try PrimaryKeyBytes.decode(current.key), current.value, in: rowsDBI)
                    continue
                }
                let pk = try PrimaryKeyBytes.decode(current.key)
                var row: RowSnapshot? = nil
                if wantsRows || filtered {
                    let decoded = try decode(current.value, pk: pk)
                    guard try matches(decoded) else { continue }
                    row = decoded
                }
                if toSkip > 0 { toSkip -= 1; continue }
                if wantsRows, let row { rows.append(row) } else {
                    ids.append(try codec.namespace(code).objectID(primaryKey: pk))
                }
            }
        }
        return wantsRows ? StoreFetchResult(snapshots: rows, applied: .all) : StoreFetchResult(objectIDs: ids, applied: .all)
    }

    /// Rows in the order of ``ObjectGraph/CompiledSort``: its sort values and its comparison
    /// (`CompiledSort.prepare`, `CompiledSort.compare`, ties by `ObjectID.storageOrder`),
    /// applied to a permutation of indexes, so the sort moves integers instead of rows. Any
    /// correct sort gives the shared sort's answer: with the primary-key tie-break the order
    /// is total.
    static func sorted(_ rows: [RowSnapshot], by sort: CompiledSort, using evaluator: PredicateEvaluator<LMDBRowSource>) throws -> [RowSnapshot] {
        guard rows.count > 1 else { return rows }
        let keyCount = sort.keys.count
        var values: [AttributeValue] = []
        values.reserveCapacity(rows.count * keyCount)
        for row in rows {
            for (path, key) in sort.keys {
                // An attribute of the row itself is read directly; key paths go through the evaluator.
                let value: AttributeValue
                if path.steps.isEmpty, case .attribute(let attribute) = path.terminal { value = row.attributes[attribute.slot] } else { value = try evaluator.sortValue(path, of: row) }
                values.append(CompiledSort.prepare(value, key.comparison))
            }
        }
        if keyCount == 1, let sorted = sortedByNumbers(rows, values, ascending: sort.keys[0].key.ascending) { return sorted }
        let ascending = sort.keys.map(\.key.ascending)
        let comparisons = sort.keys.map(\.key.comparison)
        var order = Array(rows.indices)
        order.sort { a, b in
            for index in 0..<keyCount {
                let result = CompiledSort.compare(values[a * keyCount + index], values[b * keyCount + index], comparisons[index])
                if result == .orderedSame { continue }
                return ascending[index] ? result == .orderedAscending : result == .orderedDescending
            }
            return ObjectID.storageOrder(rows[a].objectID, rows[b].objectID)
        }
        return order.map { rows[$0] }
    }

    /// One sort key whose values are all dates, all doubles or all integers (no `nil`): the
    /// same order as ``ObjectGraph/CompiledSort/compare(_:_:_:)`` (for these kinds, `<` then
    /// `==` on the plain values, ties by storage order) on plain numbers, without switching
    /// over two enums per comparison (a fifth of fetching a chat's messages in date order).
    /// `nil` for any other mix.
    private static func sortedByNumbers(_ rows: [RowSnapshot], _ values: [AttributeValue], ascending: Bool) -> [RowSnapshot]? {
        func sorted<K: Comparable>(by keys: [K]) -> [RowSnapshot] {
            var order = Array(rows.indices)
            order.sort { a, b in
                let x = keys[a], y = keys[b]
                let result: ComparisonResult = x < y ? .orderedAscending : (x == y ? .orderedSame : .orderedDescending)
                if result == .orderedSame { return ObjectID.storageOrder(rows[a].objectID, rows[b].objectID) }
                return ascending ? result == .orderedAscending : result == .orderedDescending
            }
            return order.map { rows[$0] }
        }
        func keys<K>(_ number: (AttributeValue) -> K?) -> [K]? {
            var keys: [K] = []
            keys.reserveCapacity(values.count)
            for value in values {
                guard let key = number(value) else { return nil }
                keys.append(key)
            }
            return keys
        }
        // (A NaN, which `<` does not order, sends the sort to the general path, which puts it
        // last. Validation refuses NaN; a file written before it did may still hold one.)
        switch values.first {
        case .date?:
            return keys { if case .date(let date) = $0, !date.timeIntervalSinceReferenceDate.isNaN { date.timeIntervalSinceReferenceDate } else { nil } }.map(sorted(by:))
        case .double?:
            return keys { if case .double(let number) = $0, !number.isNaN { number } else { nil } }.map(sorted(by:))
        case .integer?:
            return keys { if case .integer(let number) = $0 { number } else { nil } }.map(sorted(by:))
        default:
            return nil
        }
    }

    private func slice(_ rows: [RowSnapshot], offset: Int, limit: Int?) -> [RowSnapshot] {
        PersistentStoreCoordinator.slice(rows, offset: offset, limit: limit)
    }

    private func result(_ rows: [RowSnapshot], _ request: StoreFetchRequest) -> StoreFetchResult {
        request.resultType == .snapshots
            ? StoreFetchResult(snapshots: rows, applied: .all)
            : StoreFetchResult(objectIDs: rows.map(\.objectID), applied: .all)
    }

    /// Walks the index of the first sort key in its order (backwards for descending), sorting
    /// only the rows that share one index key with the shared sort, and stops once offset +
    /// limit rows are certain. `nil` when the first sort key has no usable index.
    private func indexOrdered(
        _ request: StoreFetchRequest, sort: CompiledSort, txn: LMDBTransaction, codes: EntityCodes, rowsDBI: MDB_dbi,
        matches: (RowSnapshot) throws -> Bool
    ) throws -> [RowSnapshot]? {
        guard let first = sort.keys.first, first.key.comparison == .natural, first.path.steps.isEmpty,
              case .attribute(let attribute) = first.path.terminal,
              let dbi = handles.index(of: attribute) else { return nil }
        let evaluator = PredicateEvaluator(source: LMDBRowSource(store: self, txn: txn))
        // (Saturating: an offset and a limit near Int.max are a valid request.)
        let needed = request.limit.map { limit in
            let (sum, overflow) = max(request.offset, 0).addingReportingOverflow(max(limit, 0))
            return overflow ? Int.max : sum
        }
        var ordered: [RowSnapshot] = []
        var group: [RowSnapshot] = []
        var groupKey: [UInt8]? = nil
        func flush() throws {
            if group.count > 1 { group = try Self.sorted(group, by: sort, using: evaluator) }
            ordered += group
            group.removeAll(keepingCapacity: true)
        }
        // (Rows through a cursor, as candidates in fetch(_:_:rowsDBI:in:) are.)
        try txn.withCursor(rowsDBI) { rowCursor in try txn.withCursor(dbi) { cursor in
            let step = first.key.ascending ? MDB_NEXT : MDB_PREV
            var entry = try cursor.move(first.key.ascending ? MDB_FIRST : MDB_LAST)
            while let current = entry {
                if groupKey.map({ IndexPlan.compare(current.key, $0) != 0 }) ?? true {
                    try flush()
                    if let needed, ordered.count >= needed { return }
                    groupKey = Array(current.key)
                }
                var reader = ByteReader(current.value)
                let pk = try reader.orderedInt64()
                if codes.contains(try reader.u16()), let bytes = try rowCursor.position(MDB_SET_KEY, primaryKey: pk)?.value {
                    let row = try decode(bytes, pk: pk)
                    if try matches(row) { group.append(row) }
                }
                entry = try cursor.move(step)
            }
            try flush()
        } }
        return slice(ordered, offset: request.offset, limit: request.limit)
    }
}
