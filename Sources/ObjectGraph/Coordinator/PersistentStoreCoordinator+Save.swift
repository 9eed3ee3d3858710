import Foundation
import Synchronization

/// Writing: a context's save sent to the stores involved, each store's part checked (no
/// relationship across stores; uniqueness again inside the store's write) and landed atomically.
extension PersistentStoreCoordinator {
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
