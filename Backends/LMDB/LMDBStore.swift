import CLMDB
import Foundation
import ObjectGraph
import Synchronization

/// ObjectGraph's LMDB store: an incremental store on a memory-mapped B+tree, with one write
/// transaction per save and lock-free snapshot readers.
///
/// The layout in named databases is described in the backend's README.md and on
/// ``LMDBLayout``. A file that is not LMDB, or is LMDB but not an ObjectGraph store, is refused
/// with a typed ``ObjectGraph/StoreError`` (``ObjectGraph/StoreError/Code/corrupt``); a store
/// written by another model is refused by the coordinator with
/// ``ObjectGraph/StoreError/Code/incompatibleModel`` (the store then opens none of the
/// model's databases, so the file is left as it was).
///
/// Options: `sync` = `full` (default: every commit is flushed), `meta` (`MDB_NOMETASYNC`) or
/// `none` (`MDB_NOSYNC`, not durable); `initialMapSize` in bytes (default 64 MiB; the map
/// grows by itself either way); `index` = `all` indexes every indexable attribute (tests use
/// it to run every fetch through the index paths). Any other option or value is refused at
/// open (``ObjectGraph/StoreError/Code/invalidOption``).
///
/// **Threading contract.** As ``ObjectGraph/PersistentStore``, with
/// ``ObjectGraph/StoreCapabilities/concurrentReaders``: reads run in their own read-only
/// transactions, concurrently with each other and with a save, and see the last commit.
public final class LMDBStore: PersistentStore, @unchecked Sendable {
    /// The store's UUID.
    public let identifier: String
    /// What the store does natively.
    public let capabilities: StoreCapabilities
    /// The data file (its lock file is beside it, with `-lock` appended).
    public let url: URL
    let model: ManagedObjectModel
    let layout: LMDBLayout
    let codec: RowCodec
    /// Per to-one with a stored to-many inverse (see ``RelationshipPlan/InverseIndex``).
    let inverseIndexes: [IdentityKey: RelationshipPlan.InverseIndex]
    let environment: LMDBEnvironment
    let handles: LMDBHandles
    /// Where each of this store's namespaces (entity) lives: found by the ID's integers, since
    /// looking the hierarchy's database up by root name hashed a string per row read.
    let routes: [ObjectID.Namespace: Route]
    /// The part of ``routes`` a read needs — two integers, so looking one up copies no
    /// reference (a `Route` copy retained its entity and indexes, twice per fault read).
    let rowLocations: [ObjectID.Namespace: RowLocation]
    /// The entity codes each hierarchy's row database may hold (see ``checkSkippedRow(_:_:in:)``).
    let tableCodes: [MDB_dbi: EntityCodes]
    /// The longest index key written.
    let keyLimit: Int
    private let closed = Atomic<Bool>(false)
    /// Keys reserved in the file but not yet handed out, per hierarchy: allocation writes the
    /// counter a block at a time, so most saves need no extra commit.
    private let reserved = Guarded<[String: Range<Int64>]>([:])
    static let reservationBlock: Int64 = 64

    /// Refuses a model the row encoding cannot hold: entity codes, and each row's counts of
    /// attributes and to-ones, are 16-bit (a larger count stopped the process when converted).
    static func checkLimits(_ entities: [EntityDescription], url: URL) throws {
        let limit = Int(UInt16.max)
        if entities.count > limit + 1 {
            throw StoreError(.incompatibleModel, "\(url.path): an LMDB store holds at most \(limit + 1) entities; the model has \(entities.count)")
        }
        for entity in entities where entity.attributes.count > limit || entity.toOneRelationships.count > limit {
            throw StoreError(
                .incompatibleModel,
                "\(url.path): an LMDB row holds at most \(limit) attributes and \(limit) to-one relationships; \(entity.name) has \(entity.attributes.count) and \(entity.toOneRelationships.count)")
        }
    }

    /// Refuses a model whose layout LMDB cannot open: a database name, or a metadata key,
    /// longer than LMDB's keys (its names are keys of the main database: entity and property
    /// names of some 260 characters each failed at open with `MDB_BAD_VALSIZE`), or more
    /// named databases than an environment holds (`MDB_DBS_FULL`). Both were backend errors
    /// naming neither the model nor the limit; checked before any file is made.
    static func checkLimits(_ layout: LMDBLayout, indexEverything: Bool, url: URL) throws {
        let keyLimit = LMDBEnvironment.maxKeySize
        func check(_ name: String, _ what: @autoclosure () -> String) throws {
            let bytes = name.utf8.count
            guard bytes > keyLimit else { return }
            throw StoreError(
                .incompatibleModel,
                "\(url.path): the LMDB store cannot hold this model: \(what()) needs a name of \(bytes) bytes (UTF-8), and LMDB's names are at most \(keyLimit) bytes (shorten the names, or use another store)")
        }
        for root in layout.roots {
            try check(LMDBLayout.primaryKeyCounterKey(root), "the key counter of entity hierarchy \(root)")
        }
        let databases = layout.databases
        for database in databases {
            switch database {
            case .rows(let root):
                try check(database.name, "the rows database of entity hierarchy \(root)")
            case .members(let relationship):
                try check(database.name, "the members database of relationship \(relationship.name) of entity \(relationship.entityName)")
            case .owners(let relationship):
                try check(database.name, "the owners database of relationship \(relationship.name) of entity \(relationship.entityName)")
            case .index(_, let attribute):
                try check(database.name, "the index database of attribute \(attribute.name) of entity \(attribute.entityName)")
            }
        }
        // The metadata database is one of them. (Counted for this store alone: stores of
        // other configurations on the same file, in this process, share the environment's
        // slots, and such a pair is still refused by LMDB, as a backend error.)
        let needed = databases.count + 1
        if needed > LMDBEnvironment.maxDatabases {
            var counts = (rows: 0, members: 0, owners: 0, indexes: 0)
            for database in databases {
                switch database {
                case .rows: counts.rows += 1
                case .members: counts.members += 1
                case .owners: counts.owners += 1
                case .index: counts.indexes += 1
                }
            }
            throw StoreError(
                .incompatibleModel,
                "\(url.path): the LMDB store cannot hold this model: it needs \(needed) named databases (the metadata, \(counts.rows) entity hierarchies, \(counts.members) to-many relationships, \(counts.owners) of them without an inverse, \(counts.indexes) indexed attributes\(indexEverything ? " with option index: all" : "")); the LMDB store holds at most \(LMDBEnvironment.maxDatabases)")
        }
    }

    /// The sizes option `initialMapSize` takes: a page at least, and no more than a 64-bit
    /// process can map (a negative size reached LMDB as 2^64 - 1).
    static let mapSizes = 4096...(1 << 46)

    /// Opens (creating if needed) the store at `request.url`.
    public init(request: StoreOpenRequest) throws {
        guard let url = request.url else { throw StoreError(.io, "an LMDB store needs a file URL") }
        self.url = url
        self.model = request.model
        // Every option checked before a file is made; the environment reads them as checked here.
        try request.checkOptionNames(["sync", "initialMapSize", "index"], storeType: "lmdb")
        let sync = try request.option("sync", oneOf: ["full", "meta", "none"], storeType: "lmdb")
        _ = try request.integerOption("initialMapSize", in: Self.mapSizes, storeType: "lmdb")
        let indexEverything = try request.option("index", oneOf: ["all"], storeType: "lmdb") != nil
        try Self.checkLimits(request.entities, url: url)
        let layout = LMDBLayout(model: request.model, entities: request.entities, indexEverything: indexEverything)
        try Self.checkLimits(layout, indexEverything: indexEverything, url: url)
        self.layout = layout
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        // One environment per file: the same file under another spelling must not open twice.
        let path = url.standardizedFileURL.deletingLastPathComponent().resolvingSymlinksInPath().appendingPathComponent(url.lastPathComponent).path
        let environment: LMDBEnvironment
        do {
            environment = try LMDBEnvironment.open(path: path, options: request.options)
        } catch let error as StoreError where error.code == .io && access(path, W_OK) != 0
                    && LMDBLayoutUpgrade.storedFormat(readOnly: path) == LMDBLayout.listFormatValue {
            // Its layout is upgraded by the write transaction that opens it, which this process
            // cannot begin: said as such, not only as the permission it lacks. (Only for a file
            // it may not write: another I/O failure, a full disk, is not about the layout.)
            throw StoreError(
                .io, "\(path) is an ObjectGraph LMDB store of the older layout \(LMDBLayout.listFormatValue): it needs to be opened writable once to upgrade its layout to \(LMDBLayout.formatValue) (\(error.message))",
                underlying: error.underlying)
        }
        self.environment = environment
        self.keyLimit = min(environment.maxKeySize, 480)
        do {
            let keyLimit = keyLimit
            let opened = try environment.write { txn in try Self.prepare(txn, layout: layout, request: request, path: url.path, keyLimit: keyLimit) }
            identifier = opened.identifier
            handles = opened.handles.resolvingIdentities(in: layout)
        } catch {
            environment.release()
            throw error
        }
        codec = RowCodec(layout: layout, storeIdentifier: identifier)
        let reaching = Reaching.plans(layout, model: request.model)
        var routes: [ObjectID.Namespace: Route] = [:]
        for (code, namespace) in codec.namespaces.enumerated() {
            guard let entity = request.model.entity(named: layout.entityNames[code]), let rows = handles.rows[entity.rootName] else { continue }
            routes[namespace] = Route(
                rows: rows, code: UInt16(code), entity: entity, indexes: layout.indexes(of: entity),
                reaching: reaching[IdentityKey(entity)] ?? [])
        }
        self.routes = routes
        rowLocations = routes.mapValues { RowLocation(rows: $0.rows, code: $0.code, indexed: !$0.indexes.isEmpty) }
        var tableCodes: [MDB_dbi: EntityCodes] = [:]
        for route in routes.values { tableCodes[route.rows, default: EntityCodes()].insert(route.code) }
        self.tableCodes = tableCodes
        inverseIndexes = RelationshipPlan.inverseIndexes(model: request.model, layout: layout, codec: codec, handles: handles)
        capabilities = StoreCapabilities([.persistent, .multiProcess, .concurrentReaders, .evaluatesPredicates, .sorts, .groups, .cheapRowReads, .countsRelationshipRows])
            .union(sync == "none" ? [] : [.durable])
    }

    /// Reads (or, in an empty environment, writes) the store's identity and opens the model's
    /// databases, upgrading a store of the older layout (``LMDBLayoutUpgrade``); a store of
    /// another model opens none (the coordinator refuses it).
    private static func prepare(_ txn: LMDBTransaction, layout: LMDBLayout, request: StoreOpenRequest, path: String, keyLimit: Int) throws -> (identifier: String, handles: LMDBHandles) {
        let environment = txn.environment
        let meta: MDB_dbi
        var format = LMDBLayout.formatValue
        if let existing = try environment.database(LMDBLayout.metadataName, in: txn, create: false, duplicates: false) {
            meta = existing
            let stored = try txn.get(meta, Array(LMDBLayout.formatKey.utf8)).map { String(decoding: $0, as: UTF8.self) }
            guard let stored, stored == LMDBLayout.formatValue || stored == LMDBLayout.listFormatValue else {
                let found = stored.map { "is \($0)" } ?? "is missing"
                throw StoreError(.corrupt, "\(path) is an LMDB environment but not an ObjectGraph store of a known format (its metadata's format \(found), not \(LMDBLayout.formatValue) or \(LMDBLayout.listFormatValue))")
            }
            format = stored
        } else {
            guard try txn.mainDatabaseEntries() == 0 else {
                throw StoreError(.corrupt, "\(path) is an LMDB environment but not an ObjectGraph store (it has no \(LMDBLayout.metadataName) database)")
            }
            meta = try environment.database(LMDBLayout.metadataName, in: txn, create: true, duplicates: false)!
            for (key, value) in [(LMDBLayout.formatKey, LMDBLayout.formatValue), ("storeIdentifier", UUID().uuidString),
                                 ("modelVersionHash", request.modelVersionHash), ("userInfo", "{}")] {
                try txn.put(meta, Array(key.utf8), Array(value.utf8))
            }
        }
        guard let identifier = try txn.get(meta, Array("storeIdentifier".utf8)).map({ String(decoding: $0, as: UTF8.self) }) else {
            throw StoreError(.corrupt, "\(path) has no store identifier in its metadata")
        }
        let hash = try txn.get(meta, Array("modelVersionHash".utf8)).map { String(decoding: $0, as: UTF8.self) }
        // A store of another model is left as it is, in either format: nothing is read from it.
        guard hash == request.modelVersionHash else { return (identifier, LMDBHandles(metadata: meta)) }
        if format == LMDBLayout.listFormatValue { try LMDBLayoutUpgrade.upgrade(txn, layout: layout, metadata: meta, path: path) }
        var existingIndexes: Set<String> = []
        for attribute in layout.indexedAttributes.values {
            let name = LMDBLayout.indexName(attribute)
            if try environment.database(name, in: txn, create: false, duplicates: true) != nil { existingIndexes.insert(name) }
        }
        let handles = try LMDBHandles.open(layout, metadata: meta, in: txn)
        try synchronizeIndexes(txn, layout: layout, handles: handles, metadata: meta, identifier: identifier, keyLimit: keyLimit, existing: existingIndexes)
        return (identifier, handles)
    }

    /// The metadata key listing the secondary indexes the last opener maintains, one database
    /// name a line.
    static let indexesKey = "indexes"

    /// Brings the secondary indexes in line with this opening's layout. Which attributes are
    /// indexed is not part of the model version hash (`indexed:`, the first attribute of a
    /// uniqueness constraint, option `index: all`), so a store may be opened with an index its
    /// earlier openers did not keep: that index's database was created empty (or left stale
    /// by an opener that did not maintain it), and every fetch through it missed the rows —
    /// an equality fetch found nothing, and a uniqueness constraint added later let a second
    /// row with a taken value be saved (an audit). Every index this layout has that the
    /// metadata does not list as maintained is rebuilt from the rows; the metadata then lists
    /// this layout's indexes. (A file without the list, written before it was kept, is taken
    /// to maintain the index databases it has.) Two openers with different indexes at the
    /// same time still disagree: the one without an index does not maintain it while both run.
    private static func synchronizeIndexes(
        _ txn: LMDBTransaction, layout: LMDBLayout, handles: LMDBHandles, metadata: MDB_dbi, identifier: String, keyLimit: Int, existing: Set<String>
    ) throws {
        let wanted = layout.indexedAttributes.values.map(LMDBLayout.indexName).sorted()
        let stored = try txn.get(metadata, Array(indexesKey.utf8)).map { String(decoding: $0, as: UTF8.self) }
        let maintained = stored.map { Set($0.split(separator: "\n").map(String.init)) } ?? existing
        let stale = layout.indexedAttributes.filter { !maintained.contains(LMDBLayout.indexName($0.value)) }
        if !stale.isEmpty {
            let codec = RowCodec(layout: layout, storeIdentifier: identifier)
            for (key, attribute) in stale.sorted(by: { $0.key < $1.key }) {
                guard let dbi = handles.indexes[key], let declaring = layout.model.entity(named: attribute.entityName),
                      let rows = handles.rows[declaring.rootName] else { continue }
                try check(mdb_drop(txn.txn, dbi, 0), "emptying index \(LMDBLayout.indexName(attribute)) of \(txn.environment.path)")
                var entries: [(key: [UInt8], entry: [UInt8])] = []
                try txn.withCursor(rows) { cursor in
                    var next = try cursor.move(MDB_FIRST)
                    while let row = next {
                        if let code = codec.entityCode(of: row.value), Int(code) < layout.entityNames.count,
                           let entity = layout.model.entity(named: layout.entityNames[Int(code)]),
                           let slot = entity.attributes.firstIndex(where: { LMDBLayout.key($0) == key }) {
                            let pk = try PrimaryKeyBytes.decode(row.key)
                            let snapshot: RowSnapshot
                            // (Only the values matter here: a damaged version is refused
                            // when the row is read, not by every open.)
                            do { snapshot = try codec.decode(row.value, primaryKey: pk, checkingVersion: false) } catch {
                                throw StoreError(.corrupt, "the row with key \(pk) in \(txn.environment.path) is damaged or of an unknown format", underlying: error)
                            }
                            entries.append((IndexKey.storedKey(snapshot.attributes[slot], type: attribute.type, limit: keyLimit), IndexKey.entry(pk: pk, code: code)))
                        }
                        next = try cursor.move(MDB_NEXT)
                    }
                }
                for (indexKey, entry) in entries { try txn.put(dbi, indexKey, entry, flags: UInt32(MDB_NODUPDATA)) }
            }
        }
        let list = wanted.joined(separator: "\n")
        if stored != list { try txn.put(metadata, Array(indexesKey.utf8), Array(list.utf8)) }
    }

    func checkOpen() throws {
        if closed.load(ordering: .acquiring) { throw StoreError(.closed, "the LMDB store at \(url.path) is closed") }
    }

    /// Runs `body` in a read-only snapshot transaction.
    func read<T>(_ body: (LMDBTransaction) throws -> T) throws -> T {
        try checkOpen()
        return try environment.read(body)
    }

    /// The stored metadata.
    public func metadata() throws -> StoreMetadata {
        try read { txn in
            func value(_ key: String) throws -> String? {
                try txn.get(handles.metadata, Array(key.utf8)).map { String(decoding: $0, as: UTF8.self) }
            }
            return try StoreMetadata(
                storeIdentifier: try value("storeIdentifier") ?? identifier, modelVersionHash: try value("modelVersionHash"),
                userInfoJSON: try value("userInfo").map { Data($0.utf8) }, location: "\(url.path) (database \(LMDBLayout.metadataName))")
        }
    }

    /// Hands out keys from a block reserved in the file; a new block is reserved in its own
    /// write transaction, past the counter and past every stored key, so keys are never reused
    /// in this or any other process.
    public func allocatePrimaryKeys(rootEntity: String, count: Int) throws -> Int64 {
        try checkOpen()
        let wanted = Int64(max(count, 0))
        if let first = reserved.withLock({ blocks -> Int64? in
            guard let block = blocks[rootEntity], block.count >= wanted else { return nil }
            blocks[rootEntity] = block.lowerBound + wanted..<block.upperBound
            return block.lowerBound
        }) { return first }
        guard let rows = handles.rows[rootEntity] else {
            throw StoreError(.backend, "the LMDB store at \(url.path) holds no entity hierarchy \(rootEntity)")
        }
        let counterKey = Array(LMDBLayout.primaryKeyCounterKey(rootEntity).utf8)
        let block = try environment.write { txn -> Range<Int64> in
            // Keys start at 1: a counter below that (damaged) is passed over as the SQLite
            // store's is, where it made the spare block's end overflow (the fuzz test).
            var first: Int64 = 1
            if let stored = try txn.get(handles.metadata, counterKey) { first = max(first, try PrimaryKeyBytes.decode(stored)) }
            if let last = try txn.withCursor(rows, { try $0.move(MDB_LAST) }) {
                first = max(first, try PrimaryKeyCounter.end(from: try PrimaryKeyBytes.decode(last.key), count: 1, rootEntity: rootEntity, location: url.path))
            }
            // The spare block shrinks to what is left below Int64.max, rather than overflow.
            let needed = try PrimaryKeyCounter.end(from: first, count: wanted, rootEntity: rootEntity, location: url.path)
            let end = needed + min(Self.reservationBlock, Int64.max - needed)
            try txn.put(handles.metadata, counterKey, PrimaryKeyBytes.encode(end))
            return first..<end
        }
        reserved.withLock { $0[rootEntity] = block.lowerBound + wanted..<block.upperBound }
        return block.lowerBound
    }

    /// Closes the store; the environment closes with its last store in the process.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        environment.release()
    }
}

extension StoreDescription {
    /// An LMDB store in the file at `url` (LMDB's lock file goes beside it, `-lock` appended).
    /// Options: see ``LMDBStore``.
    public static func lmdb(at url: URL, configuration: String? = nil, options: [String: String] = [:]) -> StoreDescription {
        StoreDescription(type: "lmdb", url: url, configuration: configuration, options: options) { request in
            try LMDBStore(request: request)
        }
    }
}
