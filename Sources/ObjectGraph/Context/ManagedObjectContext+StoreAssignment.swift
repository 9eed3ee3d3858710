extension ManagedObjectContext {
    /// Specifies the store a newly inserted object is saved in (Core Data's `assign(_:to:)`).
    ///
    /// Needed only when several attached stores hold the object's entity: an insert otherwise
    /// goes to the first store added that holds it. The object gets its permanent ID in
    /// `store` now, as ``obtainPermanentIDs(for:)`` would give it, so the choice survives a
    /// save through a child context and shows in the ID handed to other contexts. Assigning
    /// an object to the store its permanent ID already names does nothing.
    ///
    /// A relationship between objects of different stores is still refused at save
    /// (``ObjectGraphError/Code/crossStoreRelationship``): assign related objects together.
    ///
    /// - Throws: ``ObjectGraphError`` — `wrongContext` for an object of another context;
    ///   `noStore` when `store` is not attached to the coordinator or does not hold the
    ///   object's entity; `notAssignable` for an object that is not newly inserted (saved, or
    ///   fetched) or that already has a permanent ID of another store.
    public func assign(_ object: ManagedObject, to store: any PersistentStore) throws {
        try checkQueue("assign(_:to:)")
        guard object.belongs(to: self) else {
            throw ObjectGraphError(.wrongContext, objectID: object.objectID, "\(object.objectID) is not an object of context '\(name)'")
        }
        guard object.isInsertedStorage else {
            let state = object.isDeletedStorage ? "deleted" : "already saved"
            throw ObjectGraphError(
                .notAssignable, objectID: object.objectID,
                "\(object.objectID) is \(state), not newly inserted: only an insert chooses its store")
        }
        let id = object.objectID
        guard id.isTemporary else {
            guard id.storeIdentifier == store.identifier else {
                throw ObjectGraphError(
                    .notAssignable, objectID: id,
                    "\(id) already has a permanent ID of store \(id.storeIdentifier ?? "?"), so it cannot be saved in store \(store.identifier)")
            }
            return
        }
        let assigned = try coordinator.permanentIDs(for: [id], inStore: store.identifier)
        statisticsStorage.storeRoundTrips += 1
        // (Not inside `undoStackStorage?.remap(…)`: without an undo stack the optional chain
        // would skip the remapping itself.)
        let map = remapIDs([object], from: [id], to: assigned, coversInserted: false)
        undoStackStorage?.remap(map)
    }
}
