import OrderedCollections

extension ManagedObjectContext {
    /// Loads a fault's values (from the row cache or the store).
    func fulfillFaultIfNeeded(_ object: ManagedObject) throws {
        guard object.isFaultStorage else { return }
        // An object of this context (alive: its method runs) is in a context without a weak load.
        if !object.belongs(to: self) && object.contextStorage == nil {
            throw ObjectGraphError(.objectInaccessible, objectID: object.objectID, "\(object.objectID) is no longer in a context (deleted and saved, or its context was reset)")
        }
        if object.isInaccessibleStorage {
            // Still registered, but an earlier attempt found no record: say so again, the same way.
            throw ObjectGraphError(.objectNotFound, objectID: object.objectID, "the record for \(object.objectID) does not exist (deleted by another context or never saved)")
        }
        guard !object.objectID.isTemporary else {
            throw ObjectGraphError(.objectNotFound, objectID: object.objectID, "\(object.objectID) is a temporary ID that was never saved")
        }
        if !batchGroups.isEmpty, let group = batchGroups[object.objectID] {
            // The object came from a batched fetch: load its batch in one round trip.
            for id in group.ids { batchGroups.removeValue(forKey: id) }
            let members = group.ids.compactMap { registeredLive($0) }
            try fulfillFaults(members)
            // The fetch's prefetching key paths, for this batch only (as Core Data prefetches
            // a batched result's): loading them for every object at the fetch fired every
            // batch there, so a batch size bounded nothing.
            for steps in group.prefetching { try prefetch(steps, from: members) }
            if !object.isFaultStorage { return }
        }
        // (The cache lent, not retained: the coordinator holds it, and the context the coordinator.)
        var snapshot = Unmanaged.passUnretained(coordinator.rowCache)._withUnsafeGuaranteedRef { $0.snapshot(for: object.objectID) }
        if snapshot != nil {
            statisticsStorage.rowCacheHits += 1
        } else {
            statisticsStorage.storeRoundTrips += 1
            snapshot = try coordinator.snapshot(for: object.objectID)
        }
        // Moved out of the optional, not bound: binding copied the row (retaining its values)
        // and destroyed the optional's copy afterwards, at every fault.
        guard let row = snapshot.take() else {
            object.isInaccessibleStorage = true
            throw ObjectGraphError(.objectNotFound, objectID: object.objectID, "the record for \(object.objectID) does not exist (deleted by another context or never saved)")
        }
        statisticsStorage.faultsFired += 1
        object.install(consume row)
        awake(object)
    }

    /// Calls `object`'s ``ManagedObject/awakeFromFetch()`` with change tracking suspended, as
    /// Core Data does around it: attributes set there (transients, caches) do not make the
    /// object or the context changed.
    @inline(__always)
    func awake(_ object: ManagedObject) {
        awakingFromFetch += 1
        object.awakeFromFetch()
        awakingFromFetch -= 1
    }

    /// Fires many faults in one round trip (used by batches, prefetching and sorting).
    /// `cachingRows: false` keeps the loaded rows out of the coordinator's row cache (cached
    /// rows are still used).
    func fulfillFaults(_ objects: [ManagedObject], cachingRows: Bool = true) throws {
        // Change tracking is suspended for every awakeFromFetch below at once (see awake(_:)).
        awakingFromFetch += 1
        defer { awakingFromFetch -= 1 }
        var missing: [ObjectID] = []
        var byID: [ObjectID: ManagedObject] = [:]
        for object in objects where object.isFaultStorage && !object.objectID.isTemporary {
            if let cached = coordinator.rowCache.snapshot(for: object.objectID) {
                statisticsStorage.rowCacheHits += 1
                statisticsStorage.faultsFired += 1
                object.install(cached)
                object.awakeFromFetch()
            } else if byID[object.objectID] == nil {
                missing.append(object.objectID)
                byID[object.objectID] = object
            }
        }
        guard !missing.isEmpty else { return }
        statisticsStorage.storeRoundTrips += 1
        for snapshot in try coordinator.snapshots(for: missing, caching: cachingRows) {
            guard let object = byID[snapshot.objectID], object.isFaultStorage else { continue }
            statisticsStorage.faultsFired += 1
            object.install(consume snapshot)
            object.awakeFromFetch()
        }
    }

    /// Loads a to-many relationship's members if it is still a fault.
    ///
    /// An ordered one's owner, still a fault, is loaded first (also by ``loadToMany(_:for:)``):
    /// a save sends an ordered list whole, checked against the owner's version, and an owner
    /// first read at the save had the version stored then, newer than the members this context
    /// had read and reordered. Another context's insert in between passed unseen: the save
    /// wrote the stale order over it (the inserted member dropped, or on SQLite kept at its old
    /// position, an audit). Read first, the version is no newer than the members, so such a
    /// save is a conflict for the merge policy.
    func loadToManyIfNeeded(_ object: ManagedObject, _ relationship: RelationshipDescription) throws {
        guard object.toManyStates[relationship.slot].isFault else { return }
        if object.objectID.isTemporary || relationship.isTransient {
            object.toManyStates[relationship.slot].load(stored: [])
            return
        }
        if relationship.isOrdered && object.isFaultStorage { try fulfillFaults([object]) }
        statisticsStorage.storeRoundTrips += 1
        statisticsStorage.relationshipFaultsFired += 1
        let related = try coordinator.relatedIDs(for: relationship, of: [object.objectID])
        object.toManyStates[relationship.slot].load(stored: related.first ?? [])
    }

    /// Loads one to-many relationship for many objects in one round trip.
    func loadToMany(_ relationship: RelationshipDescription, for objects: [ManagedObject]) throws {
        // Positions and IDs, the objects read in place: gathering them into a filtered array
        // and zipping it with the answer retained and released every object three times
        // (atomic updates, a tenth of prefetching 10,000 students' subjects).
        var positions: [Int] = []
        var ids: [ObjectID] = []
        objects.withUnsafeBufferPointer { objects in
            for position in objects.indices where objects[position].withToManyState(relationship.slot, { $0.pointee.isFault }) && !objects[position].objectID.isTemporary {
                positions.append(position)
                ids.append(objects[position].objectID)
            }
        }
        guard !ids.isEmpty else { return }
        if relationship.isOrdered {
            let owners = positions.map { objects[$0] }.filter(\.isFaultStorage)
            if !owners.isEmpty { try fulfillFaults(owners) }
        }
        statisticsStorage.storeRoundTrips += 1
        statisticsStorage.relationshipFaultsFired += ids.count
        let related = try coordinator.relatedIDs(for: relationship, of: ids)
        objects.withUnsafeBufferPointer { objects in
            for (position, members) in zip(positions, related) { objects[position].toManyStates[relationship.slot].load(stored: members) }
        }
    }
}

/// The IDs of one batch of a batched `fetch`, shared by its members, and the relationships
/// the fetch prefetches, loaded with the batch.
final class BatchGroup {
    let ids: [ObjectID]
    let prefetching: [[RelationshipDescription]]
    init(ids: [ObjectID], prefetching: [[RelationshipDescription]]) {
        self.ids = ids
        self.prefetching = prefetching
    }
}
