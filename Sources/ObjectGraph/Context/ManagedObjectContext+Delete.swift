import Foundation

/// Deleting objects and applying delete rules.
///
/// `delete(_:)` only marks the object; its relationships' rules (nullify, cascade, deny,
/// no action) are applied by ``processPendingChanges()``, which runs at the end of each
/// perform block, before fetches and at save. Rules are applied through a work list with each
/// object visited once, so cascades through chains, cycles and reflexive relationships end.
extension ManagedObjectContext {
    /// Marks `object` deleted. Its delete rules are applied when pending changes are processed;
    /// a ``DeleteRule/deny`` relationship that still has a destination fails the save (code 1600).
    ///
    /// An object its context let go because another save deleted its row (a merged deletion,
    /// or one a save found) is already deleted in the store, and deleting it does nothing: a
    /// swipe-to-delete racing a background delete is a race the app cannot rule out, and its
    /// outcome is the one the caller asked for. Any other object of another context, or of
    /// none (its context reset or deallocated, or never inserted), stops the process.
    public func delete(_ object: ManagedObject) {
        requireQueue("delete(\(object.objectID))")
        guard object.belongs(to: self) else {
            if object.leftAsDeletedInStore { return }
            ManagedObject.trap("delete(\(object.objectID)): the object belongs to another context (or none)")
        }
        // Deleted by the app now, whatever a cascade did before (see resolve(_:)).
        object.isDeletedByCascadeStorage = false
        markDeleted(object)
    }

    /// (Takes `object` owned: a cascade hands over the reference it made the member with, which
    /// the list of pending deletes keeps, instead of retaining it there and releasing its own.)
    /// `preparing: false` skips ``ManagedObject/prepareForDeletion()``, for a deletion that
    /// already called it (one deleted again after a conflict, see +Conflicts). `byCascade`: a
    /// cascade rule reached the object; a merge policy may spare it when the store shows that
    /// the cascade no longer reaches it.
    func markDeleted(_ object: consuming ManagedObject, preparing: Bool = true, byCascade: Bool = false) {
        guard !object.isDeletedStorage else { return }
        object.isDeletedByCascadeStorage = byCascade
        noteUndoableChange(object)
        if preparing { object.prepareForDeletion() }
        object.isDeletedStorage = true
        if object.isInsertedStorage {
            // Never saved: it leaves the inserted set and never reaches the store, but its
            // rules still apply to the objects it was related to.
            insertedStorage.remove(object)
            object.isInsertedStorage = false
            discardedInserts[ObjectIdentifier(object)] = object
        } else {
            if object.isUpdatedStorage {
                updatedStorage.removeValue(forKey: object.objectID)
                object.isUpdatedStorage = false
            }
            deletedStorage.insert(object)
        }
        changeLog.deleted(object)
        pendingDeletes.append(consume object)
    }

    /// Applies delete rules for pending deletes and posts
    /// ``Foundation/Notification/Name/objectGraphObjectsDidChange`` for what changed.
    public func processPendingChanges() throws {
        try checkQueue("processPendingChanges()")
        try applyPendingDeleteRules()
        endAutomaticUndoGroup()
        // Posted once the processed deletes left `pendingDeletes`: an observer may use the
        // context (fetch, save, process again), and its processing must not find them still
        // pending (they were applied twice, and this call then removed more than was left: a
        // trap).
        if !changeLog.isEmpty, let changes = changeLog.take() {
            NotificationCenter.default.post(
                name: .objectGraphObjectsDidChange, object: self, userInfo: [ObjectsDidChange.key: changes])
        }
    }

    /// Applies the delete rules of every pending delete, wave by wave, and removes the
    /// processed ones (also when a rule throws, so they are not applied again).
    private func applyPendingDeleteRules() throws {
        var index = 0
        defer { pendingDeletes.removeFirst(index) }
        while index < pendingDeletes.count {
            // A wave: everything deleted so far. Its rows and relationships are loaded in a
            // few round trips, then the rules run (and may start the next wave by cascading).
            let end = pendingDeletes.count
            // The loaded objects are held until the wave's rules ran (an object only the
            // registry holds counts as released).
            let loaded = try prepareDeleteRules(pendingDeletes[index..<end])
            while index < end {
                // Unretained: `deletedStorage` holds every deleted object (or, for a discarded
                // insert, `discardedInserts`), and the rules append to `pendingDeletes`.
                try pendingDeletes.unretained(at: index)._withUnsafeGuaranteedRef { try applyDeleteRules($0) }
                index += 1
            }
            withExtendedLifetime(loaded) {}
        }
    }

    /// Whether applying `object`'s delete rules needs its row loaded first. A fault needs it
    /// when a rule reads one of its to-ones (see ``DeletePlan/toOneSlotsRead``), unless the
    /// cascade that is deleting it already cleared that to-one (see
    /// ``unlinkInverse(of:at:from:deletingDestination:)``), and whenever a to-many rule runs:
    /// the row's version then guards the members read (a member added by a concurrent save
    /// bumps it, and this delete conflicts instead of leaving that member dangling).
    private static func rulesNeedRow(_ object: ManagedObject) -> Bool {
        guard object.isFaultStorage, !object.objectID.isTemporary else { return false }
        let plan = object.entity.deletePlan
        return !plan.readingMembers.isEmpty || !plan.toOneSlotsRead.isSubset(of: object.changedToOneSlots)
    }

    /// Loads, for a wave of deleted objects, the rows and to-many members their rules will
    /// read: one batched round trip per entity and relationship instead of one per object
    /// (a cascade over 10,000 messages is then a handful of queries).
    private func prepareDeleteRules(_ wave: ArraySlice<ManagedObject>) throws -> [ManagedObject] {
        var faults: [ManagedObject] = []
        // A wave touches a handful of relationships: a short list searched by identity, not a
        // dictionary hashed once per deleted object.
        var toMany: [(relationship: RelationshipDescription, objects: [ManagedObject])] = []
        wave.forEachUnretained { object in
            guard !object.objectID.isTemporary && !object.isInaccessibleStorage else { return }
            let entity = object.entity
            // Rows are read before their members (see rulesNeedRow).
            if Self.rulesNeedRow(object) { faults.append(object) }
            for relationship in entity.deletePlan.readingMembers where object.toManyStates[relationship.slot].isFault {
                if let index = toMany.firstIndex(where: { $0.relationship === relationship }) {
                    toMany[index].objects.append(object)
                } else {
                    toMany.append((relationship, [object]))
                }
            }
        }
        if !faults.isEmpty { try fulfillFaults(faults) }
        // Members whose inverse is a to-one are unlinked by clearing that to-one, which reads
        // their rows: load those in one go too. A cascade's members are the exception: they
        // are deleted next, and their to-one is cleared without reading the row.
        var destinations: [ManagedObject] = []
        for (relationship, objects) in toMany { try loadToMany(relationship, for: objects) }
        reserveForMembers(of: toMany)
        for (relationship, objects) in toMany {
            guard relationship.hasInverse && !relationship.inverseIsToMany && relationship.deleteRule != .cascade else { continue }
            for object in objects {
                for id in object.toManyStates[relationship.slot].members ?? [] {
                    let destination = registeredOrFault(id)
                    if destination.isFaultStorage { destinations.append(destination) }
                }
            }
        }
        if !destinations.isEmpty { try fulfillFaults(destinations) }
        return destinations
    }

    /// Makes room, once per wave, for the members its rules will reach (registered as faults)
    /// and, for cascades, delete: grown one object at a time instead, the registry and the
    /// deleted objects were rehashed at every doubling (a cascade over 10,000 messages, perf).
    private func reserveForMembers(of toMany: [(relationship: RelationshipDescription, objects: [ManagedObject])]) {
        var reached = 0
        var cascaded = 0
        for (relationship, objects) in toMany {
            var members = 0
            for object in objects { members += object.toManyStates[relationship.slot].members?.count ?? 0 }
            reached += members
            if relationship.deleteRule == .cascade { cascaded += members }
        }
        if reached > 0 { registry.reserveCapacity(registry.count + reached) }
        if cascaded > 0 { deletedStorage.reserveCapacity(deletedStorage.count + cascaded) }
    }

    private func applyDeleteRules(_ object: ManagedObject) throws {
        let entity = object.entity
        if Self.rulesNeedRow(object) {
            do { try fulfillFaultIfNeeded(object) } catch let error as ObjectGraphError where error.code == .objectNotFound {
                return  // already gone from the store; nothing to propagate
            }
        }
        // (Deny is checked at save, so a rollback can still undo the delete.)
        for relationship in entity.deletePlan.acting {
            // A fault still here has no to-one its rules read (rulesNeedRow): a cascade's
            // member, whose to-one back was cleared. Nothing to visit, as destinations(of:_:)
            // would find.
            if object.isFaultStorage && !relationship.isToMany { continue }
            switch relationship.deleteRule {
            case .noAction, .deny:
                continue
            case .nullify:
                for destination in try destinations(of: object, relationship) {
                    try unlinkInverse(of: relationship, at: destination, from: object)
                }
            case .cascade:
                let sourceMembersAsStored = relationship.isToMany && !object.toManyStates[relationship.slot].hasChanges
                guard relationship.isToMany else {
                    for destination in try destinations(of: object, relationship) {
                        if relationship.hasInverse { try unlinkInverse(of: relationship, at: destination, from: object) }
                        markDeleted(destination, byCascade: true)
                    }
                    continue
                }
                // Member by member, each object made and deleted in turn: an array of them
                // first (destinations(of:_:)) took and dropped one more reference to each.
                // The members are a copy: a rule that changes the set copies it, once.
                try loadToManyIfNeeded(object, relationship)
                for id in object.toManyStates[relationship.slot].members ?? [] {
                    let destination = registeredOrFault(id)
                    if relationship.hasInverse {
                        try unlinkInverse(of: relationship, at: destination, from: object, deletingDestination: sourceMembersAsStored)
                    }
                    markDeleted(destination, byCascade: true)
                }
            }
        }
    }

    /// The objects a relationship of `object` points at, loading it if needed.
    func destinations(of object: ManagedObject, _ relationship: RelationshipDescription) throws -> [ManagedObject] {
        if relationship.isToMany {
            try loadToManyIfNeeded(object, relationship)
            return (object.toManyStates[relationship.slot].members ?? []).map(registeredOrFault)
        }
        guard !object.isFaultStorage, let id = object.toOneValues[relationship.slot] else { return [] }
        return [registeredOrFault(id)]
    }
}
