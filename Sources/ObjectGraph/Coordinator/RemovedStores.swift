/// The stores removed from a coordinator (``PersistentStoreCoordinator/removePersistentStore(_:)``,
/// which ``PersistentContainer/close()`` calls for each), remembered so that an object, ID or
/// fetch meeting one afterwards is refused with ``StoreError`` ``StoreError/Code/closed`` naming
/// the store. A read or save that races the removal and reaches the store itself gets that error
/// from the closed store; without this list one arriving a moment later found no store at all
/// and threw ``ObjectGraphError/Code/noStore``, so a caller shutting down needed two checks for
/// one situation. `noStore` stays the answer for an entity or store the coordinator never had.
///
/// Consulted only after routing has failed: faults, fetches and saves never touch it.
final class RemovedStores: Sendable {
    private struct Removed: Sendable {
        let identifier: String
        let entityNames: Set<String>
        /// "the sqlite store at /path" or "the memory store <identifier>", for messages.
        let name: String
    }

    private let removed = Guarded<[Removed]>([])

    /// Remembers `entries`, which were just detached.
    func note(_ entries: [PersistentStoreCoordinator.Entry]) {
        guard !entries.isEmpty else { return }
        let notes = entries.map { entry in
            let place = entry.description.url.map { "at \($0.path)" } ?? entry.store.identifier
            return Removed(identifier: entry.store.identifier, entityNames: entry.entityNames, name: "the \(entry.description.type) store \(place)")
        }
        removed.withLock { $0.append(contentsOf: notes) }
    }

    /// The error for `id` when routing found no attached store for it: a permanent ID of a
    /// removed store, or a temporary one of an entity a removed store held. `nil` otherwise.
    func error(for id: ObjectID) -> StoreError? {
        let found = removed.withLock { all in
            id.isTemporary
                ? all.last { $0.entityNames.contains(id.entityName) }
                : all.last { $0.identifier == id.storeIdentifier }
        }
        return found.map { Self.closed($0, "\(id) cannot be read or saved") }
    }

    /// The error for a fetch of `entity` that found no attached store holding it or, with
    /// sub-entities, any of `hierarchy`: `nil` unless a removed store held one of them.
    func error(forEntity entity: String, hierarchy: Set<String>) -> StoreError? {
        let found = removed.withLock { all in all.last { !$0.entityNames.isDisjoint(with: hierarchy) } }
        return found.map { Self.closed($0, "\(entity) cannot be fetched") }
    }

    /// The error for a store identifier that is no longer attached: `nil` unless it was removed.
    func error(forStore identifier: String) -> StoreError? {
        removed.withLock { all in all.last { $0.identifier == identifier } }.map { Self.closed($0, "nothing can be assigned to it") }
    }

    private static func closed(_ store: Removed, _ consequence: String) -> StoreError {
        StoreError(.closed, "\(store.name) is closed (removed from its coordinator): \(consequence)")
    }
}
