import Foundation
import Synchronization

/// Mediates between contexts and stores: routes each entity to its store, completes what a
/// store cannot do natively (predicate, sort, range), allocates permanent IDs, keeps the row
/// cache, and sends each save to the stores involved.
///
/// **Threading contract.** A coordinator is `Sendable`; any number of contexts on any threads
/// may use it at once. It serializes calls into each store (see ``PersistentStore``), so a
/// store never sees two calls at once.
public final class PersistentStoreCoordinator: Sendable {
    /// The model every attached store holds (part of).
    public let model: ManagedObjectModel
    /// Rows shared by the coordinator's contexts.
    public let rowCache: RowCache
    /// Names this coordinator in the saves it carries (``ContextDidSave``), so a context merging
    /// a save knows whether its row cache saw it.
    let saveOrigin = UUID()

    // A class: routing copies an entry out of the locked list for every fault, and a struct
    // copy retained and released each of its six fields (a sixteenth of a fault on LMDB).
    final class Entry: Sendable {
        let store: any PersistentStore
        let description: StoreDescription
        let entityNames: Set<String>
        let gate: Gate
        /// The interned store identifier and entity names, so routing an ID compares integers.
        let storeToken: UInt32
        let entityTokens: TokenSet
        /// Whether the store counts `toOne == object` itself (read once: every such count asks).
        let countsRelationshipRows: Bool
        /// The store's ``PersistentStore/foreignCommitCount()`` when the coordinator last looked.
        let foreignCommitsSeen = Guarded<UInt64>(0)

        init(store: any PersistentStore, description: StoreDescription, entityNames: Set<String>, gate: Gate) {
            self.store = store
            self.description = description
            self.entityNames = entityNames
            self.gate = gate
            self.storeToken = InternedNames.shared.token(for: store.identifier)
            self.entityTokens = TokenSet(entityNames.map { InternedNames.shared.token(for: $0) })
            self.countsRelationshipRows = store.capabilities.contains(.countsRelationshipRows)
        }
    }

    /// Serializes calls into one store: every call, or — for a store declaring
    /// ``StoreCapabilities/concurrentReaders`` — only writes (saves and key allocation),
    /// letting reads run in parallel with each other and with a save.
    final class Gate: Sendable {
        private let mutex = Guarded<Void>(())
        let concurrentReads: Bool

        init(concurrentReads: Bool) { self.concurrentReads = concurrentReads }

        func write<T>(_ body: () throws -> T) throws -> T {
            try mutex.withLock { _ in try body() }
        }

        func read<T>(_ body: () throws -> T) throws -> T {
            if concurrentReads { return try body() }
            return try mutex.withLock { _ in try body() }
        }
    }

    /// The attached stores: read without a lock by the routing every fault, fetch and count
    /// does; changed (rarely) by adding and removing stores.
    let entries = PublishedValue<[Entry]>([])

    /// Whether a context may hold an object of a store that is not attached: a removed store's,
    /// or one `object(with:)` made for another coordinator's ID. Until then a save with one
    /// store attached looks at no relationship's destination (see ``save(_:landed:)``).
    let mayReferenceOtherStores = Atomic<Bool>(false)

    /// The stores removed so far, so that meeting one is reported as closed (see ``RemovedStores``).
    let removedStores = RemovedStores()

    /// Creates a coordinator with no stores.
    public init(model: ManagedObjectModel, rowCacheCapacity: Int = 100_000) {
        self.model = model
        self.rowCache = RowCache(capacity: rowCacheCapacity)
    }

    /// Opens the store `description` names and attaches it. Throws ``StoreError`` with
    /// ``StoreError/Code/incompatibleModel`` when the store holds data of another model.
    @discardableResult
    public func addPersistentStore(_ description: StoreDescription) throws -> any PersistentStore {
        if let name = description.configuration, model.configurations[name] == nil {
            let known = model.configurations.keys.sorted().map { "'\($0)'" }.joined(separator: ", ")
            throw ModelError(.unknownConfiguration, "the model has no configuration '\(name)' (it has \(known.isEmpty ? "none" : known))")
        }
        let request = StoreOpenRequest(model: model, configuration: description.configuration, url: description.url, options: description.options)
        let store = try description.open(request)
        let metadata: StoreMetadata
        do { metadata = try store.metadata() } catch { store.close(); throw error }
        guard metadata.modelVersionHash == request.modelVersionHash else {
            store.close()
            throw StoreError(
                .incompatibleModel,
                "the \(description.type) store\(description.url.map { " at \($0.path)" } ?? "") was written by model \(metadata.modelVersionHash), not this model \(request.modelVersionHash)")
        }
        let names = Set(request.entities.map(\.name))
        let entry = Entry(store: store, description: description, entityNames: names, gate: Gate(concurrentReads: store.capabilities.contains(.concurrentReaders)))
        try entries.update { entries in
            if entries.contains(where: { $0.store.identifier == store.identifier }) {
                store.close()
                throw StoreError(.backend, "a store with identifier \(store.identifier) is already attached")
            }
            entries.append(entry)
            updateRowCacheBypass(entries)
        }
        return store
    }

    /// The attached stores, as last changed.
    var attachedEntries: [Entry] { entries.read { $0 } }

    /// Attaches already opened stores (a child context's stand-ins for its parent's).
    func attach(_ new: [Entry]) {
        entries.update { entries in
            entries.append(contentsOf: new)
            updateRowCacheBypass(entries)
        }
    }

    /// Bypasses the row cache while every attached store reads rows as cheaply as the cache
    /// would (``StoreCapabilities/cheapRowReads``). Called inside an update of the entries.
    private func updateRowCacheBypass(_ entries: [Entry]) {
        rowCache.setBypassed(!entries.isEmpty && entries.allSatisfy { $0.store.capabilities.contains(.cheapRowReads) })
    }

    /// Detaches and closes `store`.
    public func removePersistentStore(_ store: any PersistentStore) {
        // Noted before it is detached: a call that finds it gone at any moment after reports
        // it closed, as one reaching the closing store does.
        removedStores.note(entries.read { $0.filter { $0.store === store } })
        entries.update { entries in
            entries.removeAll { $0.store === store }
            updateRowCacheBypass(entries)
        }
        store.close()
        rowCache.removeAll()
        // Contexts keep the removed store's objects: a relationship set to one must be refused.
        mayReferenceOtherStores.store(true, ordering: .sequentiallyConsistent)
    }

    /// Notes that a context made an object for `id` (see ``mayReferenceOtherStores``).
    func noteObject(for id: ObjectID) {
        guard !id.isTemporary, lentEntry(for: id) == nil else { return }
        mayReferenceOtherStores.store(true, ordering: .sequentiallyConsistent)
    }

    /// The attached stores, in the order they were added.
    public var persistentStores: [any PersistentStore] { entries.read { $0.map(\.store) } }

    /// The ID a URI names, if it is a permanent ID of an attached store and a model entity.
    public func objectID(forURI uri: URL) -> ObjectID? {
        guard let id = ObjectID(uri: uri), !id.isTemporary, model.entity(named: id.entityName) != nil,
              let store = id.storeIdentifier, entries.read({ $0.contains { $0.store.identifier == store } }) else { return nil }
        return id
    }

    /// The store's metadata.
    public func metadata(for store: any PersistentStore) throws -> StoreMetadata { try store.metadata() }

    // MARK: Routing

    func entry(for id: ObjectID) throws -> Entry {
        guard let found = lentEntry(for: id) else { throw routingError(id) }
        return found.takeUnretainedValue()
    }

    /// The entry routing `id`, unretained (the published list keeps it, see ``withEntry(for:_:)``):
    /// a permanent ID by its store, a temporary one by its entity.
    private func lentEntry(for id: ObjectID) -> Unmanaged<Entry>? {
        entries.read { all -> Unmanaged<Entry>? in
            for index in all.indices {
                let matches = id.isTemporary ? all[index].entityTokens.contains(id.entityToken) : all[index].storeToken == id.storeToken
                if matches { return Unmanaged.passUnretained(all[index]) }
            }
            return nil
        }
    }

    private func routingError(_ id: ObjectID) -> any Error {
        if let closed = removedStores.error(for: id) { return closed }
        return id.isTemporary
            ? ObjectGraphError(.noStore, objectID: id, "no attached store holds entity \(id.entityName)")
            : ObjectGraphError(.noStore, objectID: id, "\(id) belongs to store \(id.storeIdentifier ?? "?"), which is not attached")
    }

    /// `body` with the entry routing `id`, lent without a reference of its own: a published
    /// list stays allocated while the coordinator lives (see ``PublishedValue``), and taking
    /// the entry retained and released it at every fault.
    @inline(__always)
    func withEntry<R>(for id: ObjectID, _ body: (Entry) throws -> R) throws -> R {
        guard let found = lentEntry(for: id) else { throw routingError(id) }
        return try found._withUnsafeGuaranteedRef(body)
    }

    /// The entry of the one store holding `entity`, lent (see ``withEntry(for:_:)``); `nil`
    /// when none or several do, or when another store holds some of its sub-entities (which a
    /// count including them must read too, see ``subentityParts(of:besides:)``).
    func soleEntry(holding entity: EntityDescription) -> Unmanaged<Entry>? {
        let token = entity.nameToken
        return entries.read { all -> Unmanaged<Entry>? in
            var found: Unmanaged<Entry>? = nil
            for index in all.indices where all[index].entityTokens.contains(token) {
                if found != nil { return nil }
                found = Unmanaged.passUnretained(all[index])
            }
            // (Looked at only with several stores and a hierarchy: one store answers at once.)
            if found != nil, all.count > 1, entity.hierarchyNames.count > 1,
               all.contains(where: { !$0.entityTokens.contains(token) && !$0.entityNames.isDisjoint(with: entity.hierarchyNames) }) {
                return nil
            }
            return found
        }
    }

    /// The stores holding `entity`, none when no store does (compared by interned name: every
    /// fetch and count asks).
    func storesHolding(_ entity: EntityDescription) -> [Entry] {
        let token = entity.nameToken
        return entries.read { all in
            // Usually every store holds the entity (one store): the array itself is the answer,
            // not a filtered copy allocated for every fetch and count.
            all.allSatisfy { $0.entityTokens.contains(token) } ? all : all.filter { $0.entityTokens.contains(token) }
        }
    }

    /// How many stores are attached.
    var attachedCount: Int { entries.read { $0.count } }

    // MARK: Reading

    /// The row for `id` (one fault), without the arrays of ``snapshots(for:caching:)``.
    func snapshot(for id: ObjectID, caching: Bool = true) throws -> RowSnapshot? {
        guard !id.isTemporary else { return nil }
        let mark = rowCache.readMark
        let row = try withEntry(for: id) { entry in try entry.gate.read { try entry.store.snapshot(for: id) } }
        // Asked first: wrapping the row to offer it copied it (retaining its values) even when
        // the cache takes nothing, as for stores whose rows are cheap to read again.
        if caching, !rowCache.isBypassed, let row { rowCache.store(CollectionOfOne(row), readSince: mark) }
        return row
    }

    /// Rows for `ids`, grouped into one call per store. With `caching` false the rows are not
    /// added to the row cache (used for scans, which would otherwise evict everything and
    /// hold a cache's worth of rows nobody asks for again).
    func snapshots(for ids: [ObjectID], caching: Bool = true) throws -> [RowSnapshot] {
        if ids.count == 1, let id = ids.first, !id.isTemporary {
            // One fault: no grouping by store.
            return try snapshot(for: id, caching: caching).map { [$0] } ?? []
        }
        var byStore: [UInt32: (Entry, [ObjectID])] = [:]
        for id in ids where !id.isTemporary {
            let entry = try entry(for: id)
            byStore[entry.storeToken, default: (entry, [])].1.append(id)
        }
        var result: [RowSnapshot] = []
        for (entry, storeIDs) in byStore.values {
            let mark = rowCache.readMark
            let rows = try entry.gate.read { try entry.store.snapshots(for: storeIDs) }
            if caching { rowCache.store(rows, readSince: mark) }
            result.append(contentsOf: rows)
        }
        return result
    }

    /// Members of a to-many relationship for each source, in the order of `sources` (see
    /// ``PersistentStore/relatedIDs(for:of:)``); a temporary source has none.
    func relatedIDs(for relationship: RelationshipDescription, of sources: [ObjectID]) throws -> [[ObjectID]] {
        let single = entries.read { $0.count == 1 ? $0[0] : nil }
        if let entry = single, sources.allSatisfy({ $0.storeToken == entry.storeToken }) {
            // One store: its answer is the answer.
            let related = try entry.gate.read { try entry.store.relatedIDs(for: relationship, of: sources) }
            try Self.checkAligned(related, sources, entry)
            return related
        }
        var byStore: [UInt32: (entry: Entry, sources: [(id: ObjectID, position: Int)])] = [:]
        for (position, id) in sources.enumerated() where !id.isTemporary {
            let entry = try entry(for: id)
            byStore[entry.storeToken, default: (entry, [])].sources.append((id, position))
        }
        var result = [[ObjectID]](repeating: [], count: sources.count)
        for (entry, storeSources) in byStore.values {
            let storeIDs = storeSources.map(\.id)
            let related = try entry.gate.read { try entry.store.relatedIDs(for: relationship, of: storeIDs) }
            try Self.checkAligned(related, storeIDs, entry)
            for (members, source) in zip(related, storeSources) { result[source.position] = members }
        }
        return result
    }

    /// A store's answer must hold one list per source it was asked about.
    private static func checkAligned(_ related: [[ObjectID]], _ sources: [ObjectID], _ entry: Entry) throws {
        guard related.count == sources.count else {
            throw StoreError(.backend, "store \(entry.store.identifier) answered \(related.count) member lists for \(sources.count) sources")
        }
    }

    /// Permanent IDs for temporary ones, in the same order: one key allocation per store and
    /// entity hierarchy.
    func permanentIDs(for temporaries: [ObjectID]) throws -> [ObjectID] {
        try permanentIDs(for: temporaries, routing: entry(for:))
    }

    /// Permanent IDs in the attached store `identifier` for temporary IDs of entities it holds,
    /// whichever store an insert of their entities would go to (``ManagedObjectContext/assign(_:to:)``).
    func permanentIDs(for temporaries: [ObjectID], inStore identifier: String) throws -> [ObjectID] {
        guard let entry = entries.read({ $0.first { $0.store.identifier == identifier } }) else {
            if let closed = removedStores.error(forStore: identifier) { throw closed }
            throw ObjectGraphError(.noStore, "store \(identifier) is not attached to this coordinator")
        }
        if let foreign = temporaries.first(where: { !entry.entityTokens.contains($0.entityToken) }) {
            let configuration = entry.description.configuration.map { "its configuration '\($0)'" } ?? "it"
            throw ObjectGraphError(.noStore, objectID: foreign, "store \(identifier) does not hold entity \(foreign.entityName): \(configuration) leaves it out")
        }
        return try permanentIDs(for: temporaries, routing: { _ in entry })
    }

    /// Permanent IDs for temporary ones, allocated in the store `route` gives each.
    private func permanentIDs(for temporaries: [ObjectID], routing route: (ObjectID) throws -> Entry) throws -> [ObjectID] {
        // Grouped by entity (a temporary ID's store follows from its entity) with integer keys
        // first, then merged per store and entity hierarchy.
        // IDs come in runs of one entity (a save's inserts in creation order): a run's group is
        // found without hashing (two dictionary probes per ID were half of this, perf).
        var byEntity: [(entry: Entry, indexes: [Int])] = []
        var positions: [UInt32: Int] = [:]
        var run: (token: UInt32, position: Int)? = nil
        for (index, id) in temporaries.enumerated() {
            let token = id.entityToken
            let position: Int
            if let run, run.token == token {
                position = run.position
            } else if let known = positions[token] {
                position = known
            } else {
                position = byEntity.count
                positions[token] = position
                byEntity.append((try route(id), []))
            }
            run = (token, position)
            byEntity[position].indexes.append(index)
        }
        var byRoot: [String: (entry: Entry, root: String, indexes: [Int])] = [:]
        for group in byEntity {
            let first = temporaries[group.indexes[0]]
            let root = model.entity(for: first)?.rootName ?? first.entityName
            byRoot[group.entry.store.identifier + "|" + root, default: (group.entry, root, [])].indexes.append(contentsOf: group.indexes)
        }
        var result = temporaries
        for group in byRoot.values {
            let entry = group.entry
            let first = try entry.gate.write { try entry.store.allocatePrimaryKeys(rootEntity: group.root, count: group.indexes.count) }
            for (offset, index) in group.indexes.sorted().enumerated() {
                let namespace = ObjectID.Namespace(entityToken: temporaries[index].entityToken, storeToken: entry.storeToken)
                result[index] = namespace.objectID(primaryKey: first + Int64(offset))
            }
        }
        return result
    }
}
