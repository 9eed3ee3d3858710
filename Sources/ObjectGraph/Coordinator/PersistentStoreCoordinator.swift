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
    private let entries = PublishedValue<[Entry]>([])

    /// Whether a context may hold an object of a store that is not attached: a removed store's,
    /// or one `object(with:)` made for another coordinator's ID. Until then a save with one
    /// store attached looks at no relationship's destination (see ``save(_:landed:)``).
    private let mayReferenceOtherStores = Atomic<Bool>(false)

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

    // MARK: Writing

    /// Sends one context save to the stores involved: each store's part lands atomically.
    /// (A save that spans several stores is atomic per store, not across stores.)
    func save(_ changes: StoreChangeSet) throws {
        var landed: Set<String> = []
        try save(changes, landed: &landed)
    }

    /// ``save(_:)``, skipping the parts of the stores in `landed` and adding each store whose
    /// part lands: when a later store's part fails, `landed` names the stores that already
    /// hold theirs, so a save sent again after its conflicts are resolved does not send those
    /// parts a second time (their inserts would exist already, their versions have moved on).
    func save(_ changes: StoreChangeSet, landed: inout Set<String>) throws {
        var parts: [String: (Entry, StoreChangeSet)] = [:]
        let all = entries.read { $0 }
        if all.count == 1 {
            // One store: no partitioning; every ID must still be one of its own.
            let entry = all[0]
            let identifier = entry.store.identifier
            func check(_ id: ObjectID) throws {
                guard id.storeToken == entry.storeToken else { _ = try self.entry(for: id); return }
            }
            for row in changes.inserted { try check(row.objectID) }
            for row in changes.updated { try check(row.values.objectID) }
            for row in changes.deleted { try check(row.objectID) }
            for change in changes.toMany { try check(change.source) }
            // A destination of a store not attached would be stored as this store's key (see
            // checkSameStore); only possible once such an object was made, so only then looked at.
            if mayReferenceOtherStores.load(ordering: .sequentiallyConsistent) { try checkSameStore(changes, entry) }
            parts[identifier] = (entry, changes)
        } else {
            func part(_ id: ObjectID) throws -> String {
                let entry = try entry(for: id)
                if parts[entry.store.identifier] == nil { parts[entry.store.identifier] = (entry, StoreChangeSet()) }
                return entry.store.identifier
            }
            for row in changes.inserted { parts[try part(row.objectID)]!.1.inserted.append(row) }
            for row in changes.updated { parts[try part(row.values.objectID)]!.1.updated.append(row) }
            for row in changes.deleted { parts[try part(row.objectID)]!.1.deleted.append(row) }
            for change in changes.toMany { parts[try part(change.source)]!.1.toMany.append(change) }
            if let user = changes.userMetadata { for key in parts.keys { parts[key]?.1.userMetadata = user } }
            // Before any store writes: a reference is stored as a key of the writing store, so
            // one naming another store's row would come back as a row of this store.
            for (entry, part) in parts.values { try checkSameStore(part, entry) }
        }
        for (entry, part) in parts.values.sorted(by: { $0.0.store.identifier < $1.0.store.identifier }) {
            guard !landed.contains(entry.store.identifier) else { continue }
            do {
                try entry.gate.write {
                    guard model.hasUniquenessConstraints else { return try entry.store.save(part) }
                    try entry.store.save(part) { fetch in
                        try withoutActuallyEscaping(fetch) { fetch in try recheckUniqueness(part, of: changes, holding: (entry, fetch)) }
                    }
                }
            } catch let error as StoreError where error.code == .conflict {
                rowCache.remove(error.conflicts.map(\.objectID))
                throw error
            }
            // Updated rows must replace what the cache holds; new rows are cached only when few
            // (a bulk insert would evict the whole cache for rows its objects already hold).
            if rowCache.keepsBatch(of: part.inserted.count) { rowCache.store(part.inserted) }
            // (Lazily: a bypassed cache takes nothing, and an array of the rows copied each
            // one, retaining its values, for nothing.)
            rowCache.store(part.updated.lazy.map { $0.values })
            rowCache.remove(part.deleted.map(\.objectID))
            landed.insert(entry.store.identifier)
        }
    }

    /// Refuses a change set whose relationships name objects of another store (as Core Data
    /// refuses a relationship between objects in different stores), attached or not. A store keeps a reference
    /// as its own key: the SQLite and LMDB stores would read it back as the row of that key in
    /// their own table (another object, or none), atomic stores as a member no inverse lists.
    /// Only new references are checked (not a to-one an update leaves alone, nor removals), so
    /// the check costs nothing while one store is attached.
    private func checkSameStore(_ part: StoreChangeSet, _ entry: Entry) throws {
        func check(_ source: ObjectID, _ relationship: @autoclosure () -> String, _ destination: ObjectID) throws {
            // (A temporary destination is a parent context's unsaved object, in a child's save
            // to it: checked when the parent saves, by then with its permanent ID.)
            guard destination.storeToken != entry.storeToken, !destination.isTemporary else { return }
            throw ObjectGraphError(
                .crossStoreRelationship, objectID: source, key: relationship(),
                "\(source).\(relationship()) names \(destination) of store \(destination.storeIdentifier ?? "?"), but \(source) is in store \(entry.store.identifier); a relationship cannot join objects of different stores")
        }
        func checkToOne(_ row: RowSnapshot, _ slots: SlotSet?) throws {
            for slot in row.toOne.indices {
                guard let destination = row.toOne[slot], slots?.contains(slot) ?? true else { continue }
                try check(row.objectID, model.entity(for: row.objectID)?.toOneRelationships[slot].name ?? "to-one \(slot)", destination)
            }
        }
        for row in part.inserted { try checkToOne(row, nil) }
        for update in part.updated { try checkToOne(update.values, update.changedToOne) }
        for change in part.toMany {
            for destination in change.added { try check(change.source, change.relationship.name, destination) }
            for destination in change.order ?? [] { try check(change.source, change.relationship.name, destination) }
        }
    }

    /// Checks the uniqueness constraints of the rows `changes` inserts, or whose constrained
    /// values it changes, again inside the store's write transaction, right before they are
    /// written (``PersistentStore/save(_:checking:)``).
    ///
    /// The context validated them against the store before the save, but another save could
    /// land between that check and this write: six contexts inserting the same unique email at
    /// once all saved (an audit), through one coordinator or two. Inside the write nothing
    /// else lands, so the second save sees the first's row and fails with the same
    /// ``ValidationError`` (code 1551). Stored rows this save updates or deletes are judged by
    /// their new state, as the context judged them — in every store of the save (`whole`), not
    /// only the one writing now: a value moving from a row of one store to a row of another
    /// was refused when the receiving store's part was sent first.
    private func recheckUniqueness(_ changes: StoreChangeSet, of whole: StoreChangeSet, holding entry: (Entry, (StoreFetchRequest) throws -> StoreFetchResult)) throws {
        var violations: [ValidationError.Violation] = []
        var rewritten: Set<ObjectID>?
        func check(_ row: RowSnapshot, changed: SlotSet?) throws {
            guard let entity = model.entity(for: row.objectID), !entity.uniquenessConstraints.isEmpty else { return }
            for constraint in entity.uniquenessConstraints {
                guard let probe = UniquenessProbe(constraint, of: entity, values: { row.attributes[$0] }, in: model) else { continue }
                if let changed, !probe.attributes.contains(where: { changed.contains($0.slot) }) { continue }
                if rewritten == nil { rewritten = Set(whole.updated.map(\.values.objectID)).union(whole.deleted.map(\.objectID)) }
                let stored = try fetch(probe.request, holding: entry).ids
                if let other = stored.first(where: { $0 != row.objectID && !rewritten!.contains($0) }) {
                    violations.append(.init(
                        code: .uniquenessConstraint, objectID: row.objectID, key: probe.key,
                        message: "\(row.objectID) has \(probe.valuesDescription), already used by \(other) (saved while this save was validated)"))
                }
            }
        }
        for row in changes.inserted { try check(row, changed: nil) }
        for update in changes.updated { try check(update.values, changed: update.changedAttributes) }
        if !violations.isEmpty { throw ValidationError(violations: violations) }
    }
}
