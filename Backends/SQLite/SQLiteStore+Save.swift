import CSQLite
import Foundation
import ObjectGraph

/// Saving: one `BEGIN IMMEDIATE … COMMIT` per change set; any failure rolls everything back.
extension SQLiteStore {
    /// Checks versions and applies the change set in one transaction.
    public func save(_ changes: StoreChangeSet) throws {
        try save(changes, check: nil)
    }

    /// The check runs after `BEGIN IMMEDIATE`, on the writing connection: with the write lock
    /// held no other connection or process commits before these changes do.
    public func save(_ changes: StoreChangeSet, checking check: (_ fetch: (StoreFetchRequest) throws -> StoreFetchResult) throws -> Void) throws {
        try withoutActuallyEscaping(check) { try save(changes, check: $0) }
    }

    private func save(_ changes: StoreChangeSet, check: ((_ fetch: (StoreFetchRequest) throws -> StoreFetchResult) throws -> Void)?) throws {
        try withConnection { connection in
            try inWriteTransaction(connection) {
                try check? { try fetch($0, connection: connection) }
                try apply(changes, connection)
            }
        }
    }

    private func root(of id: ObjectID) throws -> (root: String, pk: Int64, layout: SQLiteSchema.EntityLayout) {
        guard let pk = id.primaryKey, let layout = layoutsByNamespace[id.namespace] else {
            guard id.storeIdentifier == identifier, !id.isTemporary else {
                throw StoreError(.missingRow, "\(id) is not a permanent ID of SQLite store \(identifier)")
            }
            // Throws the schema's own error for an entity the store does not hold.
            let layout = try schema.layout(id.entityName)
            return (layout.entity.rootName, id.primaryKey ?? 0, layout)
        }
        return (layout.entity.rootName, pk, layout)
    }

    /// Binds a snapshot's stored columns, in ``SQLiteSchema/EntityLayout/writtenColumns``
    /// order, from parameter `first` on; returns the next parameter index. Straight from the
    /// snapshot: an array of column values per row was an allocation per saved row.
    private func bindColumns(of snapshot: RowSnapshot, _ layout: SQLiteSchema.EntityLayout, to statement: SQLiteStatement, from first: Int32,
                             attributes: SlotSet? = nil, toOne: SlotSet? = nil) throws -> Int32 {
        try withUnsafePointer(to: snapshot) { row in
            try bindColumns(of: row, layout, to: statement, from: first, attributes: attributes, toOne: toOne)
        }
    }

    /// ``bindColumns(of:_:to:from:attributes:toOne:)`` of a row read in place: a row passed on
    /// from an array (even through its buffer) was copied for the call, its arrays retained
    /// and released again (3% of inserting 100,000 rows, perf).
    private func bindColumns(of snapshot: UnsafePointer<RowSnapshot>, _ layout: SQLiteSchema.EntityLayout, to statement: SQLiteStatement, from first: Int32,
                             attributes: SlotSet? = nil, toOne: SlotSet? = nil) throws -> Int32 {
        var index = first
        for (slot, column) in layout.attributeColumns.enumerated() where column != nil && attributes?.contains(slot) ?? true {
            try statement.bind(snapshot.pointee.attributes[slot], at: index)
            index += 1
        }
        for (slot, pair) in layout.toOneColumns.enumerated() where pair != nil && toOne?.contains(slot) ?? true {
            if let id = snapshot.pointee.toOne[slot], let pk = id.primaryKey {
                try statement.bind(pk, at: index)
                if let destination = layoutsByNamespace[id.namespace] {
                    try statement.bind(destination.entityName, at: index + 1)
                } else {
                    try statement.bind(id.entityName, at: index + 1)
                }
            } else {
                try statement.bind(.null, at: index)
                try statement.bind(.null, at: index + 1)
            }
            index += 2
        }
        return index
    }

    /// Throws damage when the row's version is stored as anything but an integer. Reading
    /// takes a real in range (2.5) as the integer under it, so the update's `version = ?`
    /// missed a row whose version read as the expected one: a conflict that no merge could
    /// resolve, where the file is damaged. Asked only here, after an update changed nothing:
    /// asking every read row's storage type cost 1.6% of fetching 100,000 rows.
    private func checkVersionIsInteger(_ connection: SQLiteConnection, root: String, pk: Int64) throws {
        let statement = try connection.prepare("SELECT typeof(version) FROM \(SQLiteSchema.table(root)) WHERE pk = ?")
        try statement.bind(pk, at: 1)
        guard try statement.step(), let type = statement.string(0), type != "integer" else { return }
        throw StoreError(.corrupt, "\(url.path): the version of the row with key \(pk) in \(SQLiteSchema.table(root)) is stored as \(type), not an integer (a damaged row)")
    }

    private func storedSnapshot(_ connection: SQLiteConnection, _ id: ObjectID, root: String, pk: Int64) throws -> RowSnapshot? {
        let statement = try connection.prepare(schema.selectByKey[root] ?? "SELECT \(selectList(root)) FROM \(SQLiteSchema.table(root)) WHERE pk = ?")
        try statement.bind(pk, at: 1)
        return try statement.step() ? try snapshot(from: statement, root: root) : nil
    }

    private func apply(_ changes: StoreChangeSet, _ connection: SQLiteConnection) throws {
        var conflicts: [StoreError.Conflict] = []
        // Rows of one entity with the same changed columns mostly come together: their
        // statement is looked up once per run, not per row.
        var currentUpdate: (layout: SQLiteSchema.EntityLayout, attributes: SlotSet?, toOne: SlotSet?, statement: SQLiteStatement)?
        // Read in place by index: copying each update out retained its arrays, and touching
        // those cold headers was a twentieth of updating 10,000 rows (perf).
        for index in changes.updated.indices {
            let id = changes.updated[index].values.objectID
            let (root, pk, layout) = try root(of: id)
            let statement: SQLiteStatement
            if let run = currentUpdate, run.layout === layout, run.attributes == changes.updated[index].changedAttributes,
               run.toOne == changes.updated[index].changedToOne {
                run.statement.rewind()
                statement = run.statement
            } else {
                let attributes = changes.updated[index].changedAttributes, toOne = changes.updated[index].changedToOne
                statement = try connection.prepare(layout.updateSQL(attributes: attributes, toOne: toOne))
                currentUpdate = (layout, attributes, toOne, statement)
            }
            try statement.bind(changes.updated[index].values.version, at: 1)
            let next = try bindColumns(of: changes.updated[index].values, layout, to: statement, from: 2,
                                       attributes: changes.updated[index].changedAttributes, toOne: changes.updated[index].changedToOne)
            let expectedVersion = changes.updated[index].expectedVersion
            try statement.bind(pk, at: next)
            try statement.bind(expectedVersion, at: next + 1)
            try statement.run()
            if connection.changes == 0 {
                try checkVersionIsInteger(connection, root: root, pk: pk)
                let stored = try storedSnapshot(connection, id, root: root, pk: pk)
                conflicts.append(.init(objectID: id, expectedVersion: expectedVersion, storedVersion: stored?.version, storedSnapshot: stored))
            }
        }
        let deletions = try deletionsByRoot(changes.deleted).map { root, rows in
            // (A table of one entity, known from its reader's plan, needs no check.)
            (root, rowReaders[root]?.single != nil ? rows : try rowsOfTheirEntity(rows, root: root, connection))
        }
        for (root, rows) in deletions {
            try forEachChunk(of: rows) { chunk in
                // Rows deleted without being read (a cascade's members) have no version to check.
                guard chunk.contains(where: { $0.deletion.expectedVersion != nil }) else { return }
                let statement = try connection.prepare("SELECT pk, version FROM \(SQLiteSchema.table(root)) WHERE pk IN (\(Self.placeholders(chunk.count)))")
                for (offset, row) in chunk.enumerated() { try statement.bind(row.pk, at: Int32(offset + 1)) }
                var stored: [Int64: Int64] = [:]
                while try statement.step() { stored[statement.int64(0)] = statement.int64(1) }
                for row in chunk {
                    guard let expected = row.deletion.expectedVersion, stored[row.pk] != expected else { continue }
                    let snapshot = try storedSnapshot(connection, row.deletion.objectID, root: root, pk: row.pk)
                    conflicts.append(.init(objectID: row.deletion.objectID, expectedVersion: expected, storedVersion: snapshot?.version, storedSnapshot: snapshot))
                }
            }
        }
        if !conflicts.isEmpty {
            throw StoreError(.conflict, "\(conflicts.count) object\(conflicts.count == 1 ? "" : "s") changed in the store since they were read", conflicts: conflicts)
        }
        var current: (layout: SQLiteSchema.EntityLayout, statement: SQLiteStatement)?
        // Read in place through the buffer: passed on from the array's subscript, each row was
        // copied (its arrays retained and released again, 3% of inserting 100,000 rows, perf).
        try changes.inserted.withUnsafeBufferPointer { inserted in
            for index in inserted.indices {
                let (_, pk, layout) = try root(of: inserted[index].objectID)
                let statement = try connection.prepare(layout.insertSQL, reusing: &current, for: layout)
                try statement.bind(pk, at: 1)
                try statement.bind(layout.entityName, at: 2)
                try statement.bind(inserted[index].version, at: 3)
                _ = try bindColumns(of: inserted.baseAddress.unsafelyUnwrapped + index, layout, to: statement, from: 4)
                try statement.run()
            }
        }
        for change in changes.toMany {
            let (_, pk, layout) = try root(of: change.source)
            switch layout.toMany[change.relationship.slot] {
            case .transient:
                continue
            case .foreignKey(let table, let fk, let order):
                // Membership lives in the destinations' foreign keys (saved as row updates,
                // above); only the order of an ordered relationship is written here: of every
                // row naming the source now, those the context's order names in its order, the
                // others (a concurrent save's) after them in their stored order
                // (ToManyChange.ordered), as every store places them.
                guard let order, let members = change.order else { continue }
                let read = try connection.prepare("SELECT pk, entity, \(order) FROM \(table) WHERE \(fk) = ?")
                try read.bind(pk, at: 1)
                var existing: [ObjectID: Int64] = [:]
                var stored: [(id: ObjectID, position: Int64)] = []
                while try read.step() {
                    let id = ObjectID(entityName: read.string(1) ?? "", storeIdentifier: identifier, primaryKey: read.int64(0))
                    // A row that joined in this save has no position yet: after the placed ones.
                    let position = read.isNull(2) ? Int64.max : read.int64(2)
                    if !read.isNull(2) { existing[id] = position }
                    stored.append((id, position))
                }
                stored.sort { ($0.position, $0.id.primaryKey ?? 0) < ($1.position, $1.id.primaryKey ?? 0) }
                let statement = try connection.prepare("UPDATE \(table) SET \(order) = ? WHERE pk = ?")
                for (member, position) in OrderPositions.plan(order: ToManyChange.ordered(stored.map(\.id), by: members), existing: existing) {
                    guard let memberKey = member.primaryKey else { continue }
                    try statement.bind(position, at: 1)
                    try statement.bind(memberKey, at: 2)
                    try statement.run()
                    statement.rewind()
                }
            case .join(let table):
                // A member whose row is gone (deleted by a save that landed first) gets no join
                // row: nothing in a join table ever points at a missing row.
                let destination = SQLiteSchema.table(model.destinationEntity(of: change.relationship).rootName)
                if !change.removed.isEmpty {
                    let remove = try connection.prepare("DELETE FROM \(table) WHERE src = ? AND dst = ?")
                    for member in change.removed {
                        guard let memberKey = member.primaryKey else { continue }
                        try remove.bind(pk, at: 1)
                        try remove.bind(memberKey, at: 2)
                        try remove.run()
                        remove.rewind()
                    }
                }
                if let members = change.order {
                    try rewriteJoin(table, destination: destination, source: pk, order: members, added: change.added, connection)
                } else if !change.added.isEmpty {
                    // The last position read as it is, the next ones counted here: a damaged
                    // position at Int64.max made SQL's `+ 1` a real, read back as Int64.max,
                    // and the count past it overflowed (the fuzz test).
                    let last = try connection.prepare("SELECT MAX(pos) FROM \(table) WHERE src = ?")
                    try last.bind(pk, at: 1)
                    let lastPosition: Int64 = try last.step() && !last.isNull(0) ? last.int64(0) : -1
                    guard lastPosition < Int64.max - Int64(change.added.count) else {
                        throw StoreError(.corrupt, "\(url.path): the positions in \(table) of row \(pk) reach \(lastPosition), leaving no room for \(change.added.count) more (a damaged position)")
                    }
                    var position = lastPosition + 1
                    let add = try connection.prepare("INSERT OR IGNORE INTO \(table) (src, dst, dste, pos) SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM \(destination) WHERE pk = ?2)")
                    for member in change.added {
                        guard let memberKey = member.primaryKey else { continue }
                        try add.bind(pk, at: 1)
                        try add.bind(memberKey, at: 2)
                        try add.bind(member.entityName, at: 3)
                        try add.bind(position, at: 4)
                        try add.run()
                        add.rewind()
                        position += 1
                    }
                }
            }
        }
        // Deleted rows, their own join rows, and join rows pointing at them (nothing dangles
        // in a join table), a chunk of keys per statement.
        for (root, rows) in deletions {
            let joins = schema.joinTables(ofRoot: root)
            func delete(where condition: (String) -> String, binding keys: [Int64]) throws {
                var statements = ["DELETE FROM \(SQLiteSchema.table(root)) WHERE \(condition("pk"))"]
                statements += joins.owned.map { "DELETE FROM \($0) WHERE \(condition("src"))" }
                statements += joins.pointing.map { "DELETE FROM \($0) WHERE \(condition("dst"))" }
                for sql in statements {
                    let statement = try connection.prepare(sql)
                    for (offset, key) in keys.enumerated() { try statement.bind(key, at: Int32(offset + 1)) }
                    try statement.run()
                }
            }
            let split = Self.consecutiveRuns(of: rows.map(\.pk))
            for run in split.runs {
                try delete(where: { "\($0) BETWEEN ?1 AND ?2" }, binding: [run.lowerBound, run.upperBound])
            }
            try forEachChunk(of: split.others) { chunk in
                let list = Self.placeholders(chunk.count)
                try delete(where: { "\($0) IN (\(list))" }, binding: Array(chunk))
            }
        }
        if let user = changes.userMetadata {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let json = String(decoding: try encoder.encode(user), as: UTF8.self)
            let statement = try connection.prepare("UPDATE og_metadata SET value = ? WHERE key = 'userInfo'")
            try statement.bind(json, at: 1)
            try statement.run()
        }
    }

    private typealias DeletedRow = (pk: Int64, deletion: RowDeletion)

    /// The rows of a table holding several entities whose stored entity is the one their ID
    /// names: an ID naming another entity of the hierarchy (a URI edited by hand can) does
    /// not name the row with its key, which must not be deleted through it.
    private func rowsOfTheirEntity(_ rows: [DeletedRow], root: String, _ connection: SQLiteConnection) throws -> [DeletedRow] {
        var kept: [DeletedRow] = []
        try forEachChunk(of: rows) { chunk in
            let statement = try connection.prepare("SELECT pk, entity FROM \(SQLiteSchema.table(root)) WHERE pk IN (\(Self.placeholders(chunk.count)))")
            for (offset, row) in chunk.enumerated() { try statement.bind(row.pk, at: Int32(offset + 1)) }
            var stored: [Int64: String] = [:]
            while try statement.step() { stored[statement.int64(0)] = statement.string(1) }
            kept += chunk.filter { stored[$0.pk] == $0.deletion.objectID.entityName }
        }
        return kept
    }

    /// The shortest run of consecutive keys deleted with one range (`BETWEEN`).
    static let minimumDeletedRun = 16

    /// `keys` (distinct) split into runs of at least ``minimumDeletedRun`` consecutive keys and
    /// the others. A cascade's members were usually inserted together, so their keys are
    /// runs: a range is one seek and a walk, where `pk IN (…)` seeks every key (a cascade of
    /// 10,000 rows: 10.4 ms against 12.2 ms in SQLite itself, measured). A range holds no key
    /// but the run's, since keys are unique in their table.
    static func consecutiveRuns(of keys: [Int64]) -> (runs: [ClosedRange<Int64>], others: [Int64]) {
        let sorted = keys.sorted()
        var runs: [ClosedRange<Int64>] = []
        var others: [Int64] = []
        var start = 0
        while start < sorted.count {
            var end = start
            while end + 1 < sorted.count && sorted[end + 1] == sorted[end] &+ 1 { end += 1 }
            if end - start + 1 >= minimumDeletedRun {
                runs.append(sorted[start]...sorted[end])
            } else {
                others.append(contentsOf: sorted[start...end])
            }
            start = end + 1
        }
        return (runs, others)
    }

    /// Deletions grouped by table, in a stable order.
    private func deletionsByRoot(_ deletions: [RowDeletion]) throws -> [(String, [DeletedRow])] {
        var groups: [(root: String, rows: [DeletedRow])] = []
        var positions: [String: Int] = [:]
        // Deletions come in runs of one entity (a cascade's members): the run's group is found
        // by its ID namespace, without hashing the table name per row.
        var run: (namespace: ObjectID.Namespace, position: Int)?
        for (index, deletion) in deletions.enumerated() {
            // A row of the run's namespace belongs to the run's table (its namespace was
            // checked at the run's first row): only its key is read, not its layout and table
            // name again (two retains and releases per deleted row).
            if let run, run.namespace == deletion.objectID.namespace, let pk = deletion.objectID.primaryKey {
                groups[run.position].rows.append((pk, deletion))
                continue
            }
            let (root, pk, _) = try root(of: deletion.objectID)
            let position: Int
            if let known = positions[root] {
                position = known
            } else {
                position = groups.count
                positions[root] = position
                var rows: [DeletedRow] = []
                // Room for every remaining row: growing a 10,000-row array by doublings
                // page-faulted fresh memory at each step (measured).
                rows.reserveCapacity(deletions.count - index)
                groups.append((root, rows))
            }
            run = (deletion.objectID.namespace, position)
            groups[position].rows.append((pk, deletion))
        }
        return groups.map { ($0.root, $0.rows) }
    }

    /// Writes an ordered join's new order: removed members are gone already; the stored and
    /// the added members are put in `order` (ToManyChange.ordered: those it does not name, a
    /// concurrent save's, after the named ones in their stored order), new and moved ones at
    /// gap positions, unchanged ones where they are.
    private func rewriteJoin(_ table: String, destination: String, source: Int64, order: [ObjectID], added: [ObjectID], _ connection: SQLiteConnection) throws {
        let read = try connection.prepare("SELECT dst, dste, pos FROM \(table) WHERE src = ? ORDER BY pos, dst")
        try read.bind(source, at: 1)
        var existing: [ObjectID: Int64] = [:]
        var members: [ObjectID] = []
        while try read.step() {
            let id = ObjectID(entityName: read.string(1) ?? "", storeIdentifier: identifier, primaryKey: read.int64(0))
            if existing.updateValue(read.int64(2), forKey: id) == nil { members.append(id) }
        }
        var present = Set(members)
        for id in added where present.insert(id).inserted { members.append(id) }
        // A member added whose row is gone gets no join row (the EXISTS below).
        let write = try connection.prepare("INSERT INTO \(table) (src, dst, dste, pos) SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM \(destination) WHERE pk = ?2) ON CONFLICT (src, dst) DO UPDATE SET pos = excluded.pos")
        for (member, position) in OrderPositions.plan(order: ToManyChange.ordered(members, by: order), existing: existing) {
            guard let memberKey = member.primaryKey else { continue }
            try write.bind(source, at: 1)
            try write.bind(memberKey, at: 2)
            try write.bind(member.entityName, at: 3)
            try write.bind(position, at: 4)
            try write.run()
            write.rewind()
        }
    }
}

extension SQLiteConnection {
    /// `sql`'s statement, reset: `current`'s when it was prepared for the same `layout` (the
    /// rows of a save come grouped by entity, so the statement is looked up once per group,
    /// not per row), else prepared and remembered in `current`.
    func prepare(_ sql: String, reusing current: inout (layout: SQLiteSchema.EntityLayout, statement: SQLiteStatement)?, for layout: SQLiteSchema.EntityLayout) throws -> SQLiteStatement {
        if let current, current.layout === layout {
            // (Its caller binds every parameter again.)
            current.statement.rewind()
            return current.statement
        }
        let statement = try prepare(sql)
        current = (layout, statement)
        return statement
    }
}
