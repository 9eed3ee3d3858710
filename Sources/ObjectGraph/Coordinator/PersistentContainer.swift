import Foundation

/// The convenient way in: a model and store descriptions become a coordinator with its stores
/// attached, a main-queue ``viewContext`` and background contexts on demand.
///
/// ```swift
/// let container = try PersistentContainer(model: model, stores: [.inMemory()])
/// let context = container.newBackgroundContext()
/// try context.performAndWait { … }
/// ```
/// A container is `Sendable`; its contexts follow their own threading contract.
public final class PersistentContainer: Sendable {
    /// The model.
    public let model: ManagedObjectModel
    /// The coordinator with every store attached.
    public let coordinator: PersistentStoreCoordinator
    /// A context on the main queue, for UI-facing or main-thread code.
    public let viewContext: ManagedObjectContext

    /// Opens every store in `stores` on a new coordinator. When one cannot be opened, the
    /// stores opened before it are closed again and its error is thrown.
    public init(model: ManagedObjectModel, stores: [StoreDescription]) throws {
        self.model = model
        let coordinator = PersistentStoreCoordinator(model: model)
        do {
            for description in stores { try coordinator.addPersistentStore(description) }
        } catch {
            // No container is returned to close them: they kept their files locked (a binary
            // store's lock, an LMDB environment) until the process ended.
            for store in coordinator.persistentStores { coordinator.removePersistentStore(store) }
            throw error
        }
        self.coordinator = coordinator
        self.viewContext = ManagedObjectContext(concurrencyType: .mainQueue, coordinator: coordinator, name: "viewContext")
    }

    /// A new private-queue context on the container's coordinator.
    public func newBackgroundContext(name: String? = nil) -> ManagedObjectContext {
        ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: name)
    }

    /// Runs `body` on a new private-queue context and returns its result once the block has
    /// ended (Core Data's `async` `performBackgroundTask`). The context lives as long as the
    /// block; save in it to keep its changes.
    ///
    /// As with ``ManagedObjectContext/perform(_:)``, cancelling the calling task does not stop
    /// the block (nor does Core Data's): it runs to completion and its result is returned.
    public func performBackgroundTask<T: Sendable>(_ body: @escaping @Sendable (ManagedObjectContext) throws -> T) async throws -> T {
        let context = newBackgroundContext(name: "backgroundTask")
        return try await context.perform { try body(context) }
    }

    /// Schedules `body` on a new private-queue context and returns at once (Core Data's
    /// fire-and-forget `performBackgroundTask(_:)`); use ``performBackgroundTask(_:)`` to wait
    /// for a result. (Distinct names, as ``ManagedObjectContext/enqueue(_:)`` and
    /// ``ManagedObjectContext/perform(_:)`` have, so that `await` never silently picks this one.)
    public func enqueueBackgroundTask(_ body: @escaping @Sendable (ManagedObjectContext) -> Void) {
        let context = newBackgroundContext(name: "backgroundTask")
        context.enqueue { body(context) }
    }

    /// Closes every store and detaches it from the coordinator.
    ///
    /// Contexts of this container stay valid objects but can no longer reach a store: a fetch,
    /// count, save, fault, relationship fault or `existingObject(with:)` that needs one throws
    /// ``StoreError`` with code ``StoreError/Code/closed``, whose message names the store — both
    /// after `close()` returns and while it runs (a call reaching a store as it closes gets the
    /// same error from the store). One check, `(error as? StoreError)?.code == .closed`, tells a
    /// caller shutting down that the container was closed. What needs no store keeps working:
    /// values already loaded, `object(with:)`, unsaved changes. (A context whose coordinator
    /// never had a store for an entity still gets ``ObjectGraphError`` `noStore`.)
    public func close() {
        for store in coordinator.persistentStores { coordinator.removePersistentStore(store) }
    }
}
