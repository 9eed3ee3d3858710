import CSQLite
import Foundation
import ObjectGraph
import Synchronization

/// ObjectGraph's SQLite store: an incremental store that reads and writes only what is asked,
/// in one SQLite file (WAL journal, `synchronous=NORMAL` unless the `synchronous` option says
/// `FULL`).
///
/// The table layout is described on ``SQLiteSchema``. A file that is not SQLite, or is SQLite
/// but not an ObjectGraph store, is refused with a typed ``ObjectGraph/StoreError``; so is a
/// store written by another model (by the coordinator, from the metadata's model hash).
///
/// **Threading contract.** As ``ObjectGraph/PersistentStore``: the coordinator serializes
/// calls; the store additionally serializes its writes with a lock and gives every read or
/// write a connection of its own, so it is safe however it is called.
///
/// Connections are pooled, and any of them reads or writes: each operation takes the idle
/// connection used last (or opens one), and a save takes the write lock first. Without
/// concurrency, reads and the save after them then run on one connection, whose page cache
/// already holds what the reads touched; with a dedicated write connection, a cascade's members
/// were read into a reader's cache and then read from the file again by the writer's `DELETE`s
/// (the SQL alone, in C: 14.2 ms against 13.8 ms). In WAL mode a connection reads the last
/// committed state whoever writes, so reads still never wait behind a save, and a save never
/// waits behind a read (it takes another connection).
///
/// A read leaves its transaction open on its connection ("parked"), and the next read there
/// keeps it only while the WAL index shows no commit since, by any connection or process
/// (`SQLiteConnection+ParkedRead.swift`): a fault is then one B-tree lookup instead of a
/// transaction begun and ended around it (two `fcntl` locks and an `fstat`). Parked
/// transactions are ended before each write, so that they do not hold back its checkpoint, and
/// at most ``parkedReadLifetime`` after the read that parked them.
public final class SQLiteStore: PersistentStore, @unchecked Sendable {
    /// The store's UUID.
    public let identifier: String
    /// What the store does natively.
    public let capabilities: StoreCapabilities = [.persistent, .durable, .multiProcess, .concurrentReaders, .evaluatesPredicates, .sorts, .groups]
    /// The database file.
    public let url: URL
    let schema: SQLiteSchema
    /// Row decoding per table, by root entity name (see ``SQLiteRowReader``).
    let rowReaders: [String: SQLiteRowReader]
    /// Layouts by the namespace of this store's IDs: an ID's entity without its name.
    let layoutsByNamespace: [ObjectID.Namespace: SQLiteSchema.EntityLayout]
    /// How to read one row by ID, by the namespace of this store's IDs: a fault is then one
    /// lookup by two integers, where it was four by name and SQL text (see ``PointRead``).
    let pointReads: [ObjectID.Namespace: PointRead]
    let model: ManagedObjectModel
    /// Held by the one write (save, key allocation) in progress.
    private let writeLock = Guarded<Void>(())
    /// What this store knows of the file's commits (see `SQLiteStore+ForeignCommits`).
    let commitWatch = Guarded(CommitWatch())
    private let closed = Atomic<Bool>(false)
    /// Ends the parked read transactions soon after the last read (``endParkedReads()``).
    private let parkedReadsEnd = CoalescedDelay(SQLiteStore.parkedReadLifetime)
    /// Idle connections, the one used last at the end (see the type's summary).
    private let idle = Guarded<[SQLiteConnection]>([])
    /// `NORMAL` or `FULL`: set on every connection, since it is a connection's setting.
    private let synchronous: String
    /// Fetches compiled to SQL, by shape (see ``SQLiteQueryShape``).
    let queryCache = Guarded<[SQLiteQueryShape: CompiledQuery]>([:])

    /// Opens (creating if needed) the store at `request.url`.
    public init(request: StoreOpenRequest) throws {
        guard let url = request.url else {
            throw StoreError(.io, "an SQLite store needs a file URL")
        }
        self.url = url
        self.model = request.model
        self.schema = SQLiteSchema(model: request.model, entities: request.entities)
        // Before any file is made: such a model failed half-way through creating one.
        if let clash = schema.nameClash {
            throw StoreError(.incompatibleModel, "\(url.path): the SQLite store cannot hold this model: \(clash) (rename one, or use another store)")
        }
        if let wide = schema.tooManyColumns() {
            throw StoreError(.incompatibleModel, "\(url.path): the SQLite store cannot hold this model: \(wide) (use fewer properties in the hierarchy, or another store)")
        }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try request.checkOptionNames(["synchronous"], storeType: "sqlite")
        let synchronous = try request.option("synchronous", oneOf: ["NORMAL", "FULL"], storeType: "sqlite") ?? "NORMAL"
        self.synchronous = synchronous
        let connection = try SQLiteConnection(path: url.path, create: true)
        do {
            try Self.enableWAL(connection)
            try Self.configure(connection, synchronous: synchronous)
            self.identifier = try Self.prepareSchema(connection, schema: schema, request: request, url: url)
            try Self.synchronizeIndexes(connection, schema: schema, request: request)
            self.rowReaders = SQLiteRowReader.readers(for: schema, storeIdentifier: identifier)
            var layoutsByNamespace: [ObjectID.Namespace: SQLiteSchema.EntityLayout] = [:]
            for (name, layout) in schema.layouts {
                layoutsByNamespace[ObjectID.Namespace(entityName: name, storeIdentifier: identifier)] = layout
            }
            self.layoutsByNamespace = layoutsByNamespace
            var pointReads: [ObjectID.Namespace: PointRead] = [:]
            for (namespace, layout) in layoutsByNamespace {
                let root = layout.entity.rootName
                guard let reader = rowReaders[root], let sql = schema.selectByKey[root] else { continue }
                pointReads[namespace] = PointRead(reader: reader, sql: sql)
            }
            self.pointReads = pointReads
            connection.resetActive()
            idle.withLock { $0.append(connection) }
        } catch {
            connection.close()
            throw error
        }
    }

    /// Reads the store's identity, creating the schema in an empty file.
    ///
    /// The file is seen empty outside a transaction, and then looked at again inside the
    /// write transaction that would create the schema: another opener (a second process
    /// starting at the same moment) may have created it between the two, and creating it
    /// again failed with "table og_metadata already exists" (an audit: 140 of 200 pairs of
    /// simultaneous first opens).
    private static func prepareSchema(_ connection: SQLiteConnection, schema: SQLiteSchema, request: StoreOpenRequest, url: URL) throws -> String {
        var names = try tableNames(connection)
        if names.isEmpty {
            let identifier = UUID().uuidString
            try connection.execute("BEGIN IMMEDIATE;")
            do {
                names = try tableNames(connection)
            } catch {
                try? connection.execute("ROLLBACK;")
                throw error
            }
            if !names.isEmpty {
                try connection.execute("ROLLBACK;")
                return try existingIdentifier(connection, names: names, url: url)
            }
            do {
                try connection.execute(schema.creationSQL)
                for (key, value) in [("storeIdentifier", identifier), ("modelVersionHash", request.modelVersionHash), ("userInfo", "{}")] {
                    let statement = try connection.prepare("INSERT INTO og_metadata (key, value) VALUES (?, ?)")
                    try statement.bind(key, at: 1)
                    try statement.bind(value, at: 2)
                    try statement.run()
                }
                try connection.execute("COMMIT;")
            } catch {
                try? connection.execute("ROLLBACK;")
                throw error
            }
            return identifier
        }
        return try existingIdentifier(connection, names: names, url: url)
    }

    /// Brings a file's indexes in line with the schema's (``SQLiteSchema/attributeIndexes`` and
    /// ``SQLiteSchema/uniquenessIndexes``). Neither uniqueness constraints nor `indexed` are part
    /// of the model hash, so a file made by an earlier version of the model, or of this
    /// library, opens as this model's while lacking an index: without it the save-time
    /// uniqueness check and every fetch on the attribute scan the table. An index missing is
    /// made; an index on a string or URI column in byte order (made before attribute indexes
    /// took `OG_NATURAL`, the collation every comparison the compiler writes names, so SQLite
    /// never used it) is made again in that collation. An index the schema no longer wants is
    /// left: another process may still run a model that uses it.
    ///
    /// Only a file of this very model (its stored hash is this model's) is touched: another
    /// model's is refused by the coordinator after the open, and its columns may not exist:
    /// SQLite then reads a missing column's quoted name as a string literal, and without the
    /// check an index on that constant went into the other model's file without a word.
    ///
    /// The indexes are compared first, outside any transaction, so that an up-to-date file
    /// opens without taking the write lock; again inside `BEGIN IMMEDIATE`, since another
    /// process may have made them meanwhile. A file this connection cannot write (a read-only
    /// file or folder, or a writer holding the lock past the busy timeout) is left as it is,
    /// quietly: a missing index makes queries slower, never wrong, and a later open adds it.
    ///
    /// The tables of roots without columns (``SQLiteSchema/columnlessRoots``) are made the same
    /// way when a file lacks them: files made before such roots got a table have none, and
    /// their model hash is this model's.
    ///
    /// So is the entity index (``SQLiteSchema/entityIndexes``) of a file made when it had
    /// the name an indexed attribute `entity` takes (``SQLiteSchema/formerEntityIndexName(_:)``):
    /// that index is dropped (kept, it would be a second index on the column, maintained at
    /// every write) and made again under its name, and the attribute's index is made.
    private static func synchronizeIndexes(_ connection: SQLiteConnection, schema: SQLiteSchema, request: StoreOpenRequest) throws {
        let wanted = schema.attributeIndexes + schema.uniquenessIndexes + schema.entityIndexes
        let columnless = schema.columnlessRoots
        guard !wanted.isEmpty || !columnless.isEmpty else { return }
        // (Ends the read the identity's statement left open, before the write begins.)
        connection.resetActive()
        // (SQLite's names ignore ASCII case, as its schema's do: see SQLiteSchema+Names.)
        func missingTables() throws -> [String] {
            guard !columnless.isEmpty else { return [] }
            let names = Set(try tableNames(connection).map { $0.lowercased() })
            return columnless.filter { !names.contains($0.lowercased()) }
        }
        func storedHashMatches() throws -> Bool {
            let hash = try connection.prepare("SELECT value FROM og_metadata WHERE key = 'modelVersionHash'")
            defer { hash.reset() }
            return try hash.step() && hash.string(0) == request.modelVersionHash
        }
        // Another model's file (refused by the coordinator after the open) is not locked.
        guard try !indexesToMake(wanted, connection).isEmpty || !missingTables().isEmpty || !formerEntityIndexes(schema, connection).isEmpty,
              try storedHashMatches(),
              let handle = connection.handle, sqlite3_db_readonly(handle, "main") == 0 else { return }
        func cannotWrite(_ error: StoreError) -> Bool { error.code == .busy || error.code == .io }
        do {
            try connection.execute("BEGIN IMMEDIATE;")
        } catch let error as StoreError where cannotWrite(error) {
            return
        }
        do {
            let matches = try storedHashMatches()
            if matches {
                // Tables first: an index may be on one of them.
                var sql = try missingTables().map { schema.tableSQL(root: $0, columns: [], ifMissing: true) }
                // Before the indexes are made: an attribute's may take the dropped one's name.
                let former = try formerEntityIndexes(schema, connection)
                sql += former.map { "DROP INDEX \(SQLiteSchema.quote($0));" }
                sql += try indexesToMake(wanted, connection, dropping: Set(former.map { $0.lowercased() }))
                    .map { "DROP INDEX IF EXISTS \(SQLiteSchema.quote($0.name));\n\($0.sql)" }
                if !sql.isEmpty { try connection.execute(sql.joined(separator: "\n")) }
            }
            try connection.execute(matches ? "COMMIT;" : "ROLLBACK;")
        } catch let error as StoreError where cannotWrite(error) {
            try? connection.execute("ROLLBACK;")
        } catch {
            try? connection.execute("ROLLBACK;")
            throw error
        }
    }

    /// The indexes of `wanted` that the file lacks (or will, once the ones named in `dropping`,
    /// lowercased, are dropped), or holds in byte order where `wanted` has them in `OG_NATURAL`.
    private static func indexesToMake(
        _ wanted: [(name: String, sql: String)], _ connection: SQLiteConnection, dropping: Set<String> = []
    ) throws -> [(name: String, sql: String)] {
        let statement = try connection.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index'")
        defer { statement.reset() }
        var existing: [String: String] = [:]
        while try statement.step() { if let name = statement.string(0) { existing[name.lowercased()] = statement.string(1) ?? "" } }
        for name in dropping { existing[name] = nil }
        return wanted.filter { index in
            guard let sql = existing[index.name.lowercased()] else { return true }
            return index.sql.contains("COLLATE OG_NATURAL") && !sql.contains("OG_NATURAL")
        }
    }

    /// The indexes of the file named as an entity index was before it took its own name
    /// (``SQLiteSchema/formerEntityIndexName(_:)``) and on the entity column: an attribute's
    /// index of that name, on the attribute's column, is kept.
    private static func formerEntityIndexes(_ schema: SQLiteSchema, _ connection: SQLiteConnection) throws -> [String] {
        let columns = try connection.prepare("SELECT name FROM pragma_index_info(?)")
        defer { columns.reset() }
        var former: [String] = []
        for root in schema.entityIndexedRoots {
            let name = SQLiteSchema.formerEntityIndexName(root)
            columns.reset()
            try columns.bind(name, at: 1)
            var names: [String?] = []
            while try columns.step() { names.append(columns.string(0)) }
            if names == ["entity"] { former.append(name) }
        }
        return former
    }

    /// Switches the file to WAL (a no-op once it is). Switching a new file needs its exclusive
    /// lock, and two openers switching it at once can each hold the shared lock the other
    /// waits on: SQLite then answers `SQLITE_BUSY` at once instead of calling the busy handler
    /// (which could deadlock), and one of two simultaneous first opens failed with "database
    /// is locked" (an audit: 1 pair in 200). So a busy answer is retried, for about as long as
    /// the busy timeout would have waited.
    private static func enableWAL(_ connection: SQLiteConnection) throws {
        for attempt in 0... {
            do {
                try connection.execute("PRAGMA journal_mode=WAL;")
                return
            } catch let error as StoreError where error.code == .busy && attempt < 500 {
                usleep(10_000)
            }
        }
    }

    /// The names of the file's tables.
    private static func tableNames(_ connection: SQLiteConnection) throws -> [String] {
        let tables = try connection.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        defer { tables.reset() }
        var names: [String] = []
        while try tables.step() { if let name = tables.string(0) { names.append(name) } }
        return names
    }

    /// The identity of a file that has tables (`names`): refused unless it is an ObjectGraph store.
    private static func existingIdentifier(_ connection: SQLiteConnection, names: [String], url: URL) throws -> String {
        guard names.contains("og_metadata") else {
            throw StoreError(.corrupt, "\(url.path) is an SQLite database but not an ObjectGraph store (it has no og_metadata table)")
        }
        let read = try connection.prepare("SELECT value FROM og_metadata WHERE key = 'storeIdentifier'")
        guard try read.step(), let identifier = read.string(0) else {
            throw StoreError(.corrupt, "\(url.path) has no store identifier in its metadata")
        }
        return identifier
    }

    /// The settings SQLite keeps per connection.
    private static func configure(_ connection: SQLiteConnection, synchronous: String) throws {
        try connection.execute("PRAGMA synchronous=\(synchronous); PRAGMA foreign_keys=OFF;")
    }

    /// Runs `body` with a connection of its own, under the write lock: one write at a time.
    /// Read transactions parked on idle connections are ended first, so that they do not keep
    /// the write's checkpoint from restarting the WAL.
    func withConnection<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try writeLock.withLock { _ in
            endParkedReads()
            let connection = try takeConnection()
            defer { returnConnection(connection) }
            try connection.endParkedRead()
            return try body(connection)
        }
    }

    /// Runs `body` with a connection of its own, for reading (from the pool, or a new one), in
    /// a read transaction that sees the last commit (see ``takeReader()``).
    func withReader<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        let connection = try takeReader()
        do {
            let result = try body(connection)
            returnReader(connection)
            return result
        } catch {
            returnReader(connection, failed: true)
            throw error
        }
    }

    /// A connection for reading, its read transaction current: the one parked on it if no
    /// transaction has committed since, else a new one (see `SQLiteConnection+ParkedRead`).
    /// Handed back with ``returnReader(_:failed:)``.
    func takeReader() throws -> SQLiteConnection {
        let connection = try takeConnection()
        do {
            try connection.beginRead()
        } catch {
            returnReader(connection, failed: true)
            throw error
        }
        noteObserved(connection.parkedSnapshot)
        return connection
    }

    /// Hands back a reader: its transaction stays parked for the next read (ended after a
    /// failure, and at most ``parkedReadLifetime`` later in any case).
    func returnReader(_ connection: SQLiteConnection, failed: Bool = false) {
        if failed {
            // Its statements first: one a failure left mid-step would keep the transaction.
            connection.resetActive()
            try? connection.endParkedRead()
        }
        let parked = connection.hasParkedRead
        returnConnection(connection)
        if parked { scheduleParkedReadsEnd() }
    }

    /// How long a parked read transaction outlives the read that parked it, at most.
    static let parkedReadLifetime = DispatchTimeInterval.milliseconds(50)

    /// Schedules ``endParkedReads()``, unless it is scheduled: one timer per
    /// ``parkedReadLifetime`` of reading, not one per read.
    private func scheduleParkedReadsEnd() {
        parkedReadsEnd.request(for: self) { $0.endParkedReads() }
    }

    /// `body` with the idle connections, under the pool's lock (for tests to inspect them).
    func withIdleConnections<T>(_ body: ([SQLiteConnection]) -> T) -> T {
        idle.withLock { body($0) }
    }

    /// Ends the read transactions parked on idle connections (taken out of the pool meanwhile,
    /// so no read uses them).
    func endParkedReads() {
        let parked = idle.withLock { pool -> [SQLiteConnection] in
            let parked = pool.filter(\.hasParkedRead)
            if !parked.isEmpty { pool.removeAll(where: \.hasParkedRead) }
            return parked
        }
        for connection in parked {
            try? connection.endParkedRead()
            returnConnection(connection)
        }
    }

    /// A connection of the caller's own: the idle one used last, or a new one. For a caller
    /// that would otherwise capture large values in ``withReader(_:)``'s closure (each
    /// captured value is copied into it); handed back with ``returnConnection(_:)``.
    func takeConnection() throws -> SQLiteConnection {
        guard !closed.load(ordering: .acquiring) else { throw StoreError(.closed, "the SQLite store at \(url.path) is closed") }
        if let connection = idle.withLock({ $0.popLast() }) { return connection }
        let connection = try SQLiteConnection(path: url.path)
        do { try Self.configure(connection, synchronous: synchronous) } catch {
            connection.close()
            throw error
        }
        return connection
    }

    /// Ends the statements of `connection` and keeps it for reuse (closes it when enough are
    /// kept or the store is closed).
    func returnConnection(_ connection: SQLiteConnection) {
        connection.resetActive()
        let keep = idle.withLock { pool -> Bool in
            guard !closed.load(ordering: .acquiring), pool.count < 5 else { return false }
            pool.append(connection)
            return true
        }
        if !keep { connection.close() }
    }

    /// Runs `body` on slices of at most 500 rows (well under SQLite's bound-parameter limit);
    /// full chunks share one cached statement shape.
    func forEachChunk<Row>(of rows: [Row], _ body: (ArraySlice<Row>) throws -> Void) throws {
        var start = 0
        while start < rows.count {
            try body(rows[start..<min(rows.count, start + 500)])
            start += 500
        }
    }

    /// `?, ?, …` for `count` bound parameters.
    static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }

    /// The stored metadata.
    public func metadata() throws -> StoreMetadata {
        try withReader { connection in
            let statement = try connection.prepare("SELECT key, value FROM og_metadata")
            var values: [String: String] = [:]
            while try statement.step() { values[statement.string(0) ?? ""] = statement.string(1) ?? "" }
            return try StoreMetadata(
                storeIdentifier: values["storeIdentifier"] ?? identifier, modelVersionHash: values["modelVersionHash"],
                userInfoJSON: values["userInfo"].map { Data($0.utf8) }, location: "\(url.path) (table og_metadata)")
        }
    }

    /// Reserves keys in `og_primary_keys`, in its own transaction, so keys are never reused.
    public func allocatePrimaryKeys(rootEntity: String, count: Int) throws -> Int64 {
        try withConnection { connection in
            try inWriteTransaction(connection) {
                let read = try connection.prepare("SELECT next FROM og_primary_keys WHERE root = ?")
                try read.bind(rootEntity, at: 1)
                var first: Int64 = 1
                if try read.step() { first = read.int64(0) }
                // Keys taken by rows written by any means still count.
                let maximum = try connection.prepare("SELECT COALESCE(MAX(pk), 0) FROM \(SQLiteSchema.table(rootEntity))")
                if try maximum.step() {
                    first = max(first, try PrimaryKeyCounter.end(from: maximum.int64(0), count: 1, rootEntity: rootEntity, location: url.path))
                }
                let write = try connection.prepare("INSERT INTO og_primary_keys (root, next) VALUES (?, ?) ON CONFLICT(root) DO UPDATE SET next = excluded.next")
                try write.bind(rootEntity, at: 1)
                try write.bind(try PrimaryKeyCounter.end(from: first, count: Int64(count), rootEntity: rootEntity, location: url.path), at: 2)
                try write.run()
                return first
            }
        }
    }

    /// Closes the connections (after a save in progress; one reading closes when it ends).
    public func close() {
        writeLock.withLock { _ in
            _ = closed.exchange(true, ordering: .acquiringAndReleasing)
        }
        let connections = idle.withLock { pool -> [SQLiteConnection] in
            defer { pool.removeAll() }
            return pool
        }
        for connection in connections { connection.close() }
    }
}

extension StoreDescription {
    /// An SQLite store in the file at `url`. Options: `synchronous` = `NORMAL` (default) or `FULL`;
    /// any other option or value is refused at open (``StoreError/Code/invalidOption``).
    public static func sqlite(at url: URL, configuration: String? = nil, options: [String: String] = [:]) -> StoreDescription {
        StoreDescription(type: "sqlite", url: url, configuration: configuration, options: options) { request in
            try SQLiteStore(request: request)
        }
    }
}

/// Reading one row of an entity by primary key: the row's decoder and its prepared query,
/// whose statement each connection caches under this object's identity.
final class PointRead {
    let reader: SQLiteRowReader
    let sql: String

    init(reader: SQLiteRowReader, sql: String) {
        self.reader = reader
        self.sql = sql
    }
}
