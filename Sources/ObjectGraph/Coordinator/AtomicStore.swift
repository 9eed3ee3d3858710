import Foundation
import Synchronization

/// The shared base of atomic stores (Core Data's NSAtomicStore): all rows live in memory as
/// ``AtomicStoreContents``, fetches run the shared evaluator over them, and each save builds
/// the new contents, hands them to ``persist(_:)`` and only then makes them current.
///
/// The in-memory store is this base with no file; a file store overrides ``persist(_:)`` (and
/// loads the contents it passes to the initializer). A JSON or XML store is a page of code.
///
/// **Threading contract.** As ``PersistentStore``; additionally, reads work on an immutable
/// copy of the contents (copy-on-write), so they never wait for a save's ``persist(_:)``.
open class AtomicStore: PersistentStore, @unchecked Sendable {
    /// The store's UUID.
    public let identifier: String
    /// What the store can do.
    public let capabilities: StoreCapabilities
    /// The model.
    public let model: ManagedObjectModel
    private let state: Guarded<AtomicStoreContents>
    private let saveLock = Guarded<Void>(())
    private let closed = Atomic<Bool>(false)
    /// The namespace of this store's IDs per entity name, so rows become IDs without hashing names.
    let namespaces: [String: ObjectID.Namespace]

    /// Creates a store holding `contents` (empty contents for a new store).
    public init(request: StoreOpenRequest, contents: AtomicStoreContents, capabilities: StoreCapabilities) {
        self.identifier = contents.metadata.storeIdentifier
        self.model = request.model
        self.capabilities = capabilities.union([.atomic, .evaluatesPredicates, .sorts, .concurrentReaders])
        self.state = Guarded(contents)
        var namespaces: [String: ObjectID.Namespace] = [:]
        for entity in request.model.entities {
            namespaces[entity.name] = ObjectID.Namespace(entityName: entity.name, storeIdentifier: contents.metadata.storeIdentifier)
        }
        self.namespaces = namespaces
    }

    /// Where the store is, for error messages: a file store names its file.
    open var location: String { "the store \(identifier)" }

    /// Writes the new contents somewhere lasting; called during each save before the contents
    /// become current. Throwing fails the save and leaves the old contents in place.
    open func persist(_ contents: AtomicStoreContents) throws {}

    /// Marks the store closed, once any save in progress has finished: a save that had
    /// passed its open check wrote the file after `close()` returned (and, for the binary
    /// store, after its lock was released, so it overwrote a save another opener made
    /// meanwhile: seen in an audit). Saves that start later throw ``StoreError/Code/closed``.
    /// A subclass releasing resources calls this first.
    open func close() {
        saveLock.withLock { _ in closed.store(true, ordering: .sequentiallyConsistent) }
    }

    /// The current contents (an immutable copy).
    public func currentContents() throws -> AtomicStoreContents {
        try checkOpen()
        return state.withLock { $0 }
    }

    private func checkOpen() throws {
        if closed.load(ordering: .sequentiallyConsistent) {
            throw StoreError(.closed, "the store \(identifier) is closed")
        }
    }

    // MARK: PersistentStore

    /// The stored metadata.
    public func metadata() throws -> StoreMetadata { try currentContents().metadata }

    /// Hands out keys from the hierarchy's counter.
    public func allocatePrimaryKeys(rootEntity: String, count: Int) throws -> Int64 {
        try checkOpen()
        return try state.withLock { contents in
            // Keys start at 1, and past every stored row's when a file's rows came without their
            // counter (a counter behind its rows is refused when the file is read), as the
            // SQLite and LMDB stores hand them out: such a file failed every insert on an
            // existing key (a review).
            let counter = contents.nextPrimaryKey[rootEntity]
            var first = max(counter ?? 1, 1)
            if counter == nil, let last = contents.tables[rootEntity]?.keys.max() {
                first = max(first, try PrimaryKeyCounter.end(from: last, count: 1, rootEntity: rootEntity, location: location))
            }
            contents.nextPrimaryKey[rootEntity] = try PrimaryKeyCounter.end(from: first, count: Int64(count), rootEntity: rootEntity, location: location)
            return first
        }
    }

    /// Evaluates the fetch with the shared evaluator and sort.
    public func fetch(_ request: StoreFetchRequest) throws -> StoreFetchResult {
        let contents = try currentContents()
        let source = AtomicRowSource(contents: contents, model: model, storeIdentifier: identifier, namespaces: namespaces)
        let evaluator = PredicateEvaluator(source: source)
        let names = request.entityNames
        var rows: [AtomicRowSource.Row] = []
        for (pk, row) in contents.tables[request.entity.rootName] ?? [:] where names.contains(row.entityName) {
            rows.append(AtomicRowSource.Row(primaryKey: pk, row: row))
        }
        let compiled = try request.compiled(in: model)
        if let predicate = compiled.predicate {
            rows = try rows.filter { try evaluator.evaluate(predicate, on: $0) }
        }
        if request.resultType == .count {
            return StoreFetchResult(count: request.rangedCount(rows.count), applied: .all)
        }
        let sort = compiled.sort
        rows = try sort.sort(rows, using: evaluator)
        let sliced = PersistentStoreCoordinator.slice(rows, offset: request.offset, limit: request.limit)
        if request.resultType == .snapshots {
            return StoreFetchResult(snapshots: sliced.map { source.snapshot($0) }, applied: .all)
        }
        return StoreFetchResult(objectIDs: sliced.map { source.objectID(of: $0) }, applied: .all)
    }

    /// Rows for the IDs that exist.
    public func snapshots(for ids: [ObjectID]) throws -> [RowSnapshot] {
        let contents = try currentContents()
        let source = AtomicRowSource(contents: contents, model: model, storeIdentifier: identifier, namespaces: namespaces)
        return ids.compactMap { id in source.row(for: id).map { source.snapshot($0) } }
    }

    /// Members that still exist, in stored order.
    public func relatedIDs(for relationship: RelationshipDescription, of sources: [ObjectID]) throws -> [[ObjectID]] {
        let contents = try currentContents()
        let source = AtomicRowSource(contents: contents, model: model, storeIdentifier: identifier, namespaces: namespaces)
        return sources.map { id in
            guard let row = source.row(for: id) else { return [] }
            return row.row.toMany[relationship.slot].filter { source.row(for: $0) != nil }
        }
    }

    /// Checks versions, applies the change set to a copy, persists it, then makes it current.
    public func save(_ changes: StoreChangeSet) throws {
        try checkOpen()
        try saveLock.withLock { _ in
            // (Checked again under the lock: close() may have run since.)
            try checkOpen()
            var contents = state.withLock { $0 }
            try AtomicChangeApplier(model: model, storeIdentifier: identifier).apply(changes, to: &contents)
            try persist(contents)
            state.withLock { current in
                // Keys allocated while this save ran must not be handed out again.
                for (root, next) in current.nextPrimaryKey where next > contents.nextPrimaryKey[root] ?? 0 {
                    contents.nextPrimaryKey[root] = next
                }
                current = contents
            }
        }
    }
}
