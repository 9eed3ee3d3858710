import Foundation

/// A collision of an inserted object's constrained values, found by a save's validation under
/// a merge policy that resolves conflicts (Core Data's `NSConstraintConflict`).
struct UniquenessConflict {
    /// The inserted object that collides: it is merged into `survivor` and then discarded.
    let object: ManagedObject
    /// The object of the stored row using the values, or an object inserted before `object`.
    let survivor: ManagedObject
    /// What the save throws when the conflict cannot be resolved.
    let violation: ValidationError.Violation
}

/// A save's re-check inside the store's write found a row another save stored after this
/// save's validation (see ``PersistentStoreCoordinator``'s `recheckUniqueness`), before any
/// store of the save wrote anything: the save validates again, resolving the new conflicts.
struct UniquenessRaceLost: Error {
    let error: ValidationError
}

/// Resolving uniqueness-constraint conflicts by the merge policy (Core Data's
/// `resolve(constraintConflicts:)`); what each policy does is documented on ``MergePolicy``.
extension ManagedObjectContext {
    /// How many times a save merges and validates again before it gives up: a merge can make
    /// the survivor collide with yet another row (a loser carrying a second constrained value).
    private static let uniquenessRounds = 4

    /// Validates the save's objects, throwing one ``ValidationError`` with every violation.
    /// Uniqueness conflicts of inserted objects are resolved by ``mergePolicy`` (unless it is
    /// ``MergePolicy/error``) and the lists, which the merges change, validated again.
    ///
    /// A save that has other violations merges nothing: it fails, and the context is left as
    /// it was. One that fails after merging (the merged objects break a rule) keeps the merges.
    func validateForSave(_ inserted: inout [ManagedObject], _ updated: inout [ManagedObject], _ deleted: inout [ManagedObject]) throws {
        for round in 0...Self.uniquenessRounds {
            var validator = Validator(context: self)
            let entriesBefore = listEntries
            try validator.validate(changed: inserted + updated, deleted: deleted)
            // A validate(_:forKey:) hook that inserted, deleted or
            // changed an object the save had not listed: the save would store without it,
            // leaving the object claiming unsaved changes that no save ever sends.
            guard listEntries == entriesBefore else {
                throw ObjectGraphError(
                    .changedDuringValidation,
                    "validation inserted, deleted or changed an object the save had not listed (in a validate(_:forKey:) hook, or an override of validateForInsert(), validateForUpdate() or validateForDelete()); make such changes in willSave(), which runs before validation")
            }
            let conflicts = validator.uniquenessConflicts
            guard !conflicts.isEmpty else {
                if !validator.violations.isEmpty { throw ValidationError(violations: validator.violations) }
                return
            }
            guard validator.violations.isEmpty, round < Self.uniquenessRounds else {
                throw ValidationError(violations: validator.violations + conflicts.map(\.violation))
            }
            let unresolved = try resolveUniquenessConflicts(conflicts)
            if !unresolved.isEmpty { throw ValidationError(violations: unresolved) }
            inserted = insertedInSaveOrder()
            updated = inSaveOrder(updatedStorage)
            deleted = deletedInSaveOrder()
        }
    }

    /// Merges each conflict's inserted object into its survivor; returns the violations of
    /// the conflicts that cannot be merged.
    ///
    /// Recorded for undo, as a group of its own (the save processed the pending changes
    /// first, which ended the open group): a save keeps the history, and the merges change
    /// objects the earlier groups never recorded (the survivor takes the loser's values and
    /// memberships). Unrecorded, undoing the loser's insert after the save left the survivor
    /// holding a member whose own state undo had put back elsewhere (a book in two authors'
    /// sets). Undoing the group brings the loser back as an unsaved insert, which the next
    /// save merges again.
    private func resolveUniquenessConflicts(_ conflicts: [UniquenessConflict]) throws -> [ValidationError.Violation] {
        var losers: [ObjectID: ManagedObject] = [:]
        var unresolved: [ValidationError.Violation] = []
        for conflict in conflicts {
            let loser = conflict.object
            // Merged already (it collided on another constraint too).
            guard loser.isInsertedStorage else { continue }
            let survivor = Self.survivor(of: conflict.survivor, losers)
            guard survivor !== loser else { continue }
            // A row deleted since the probe found it collides with nothing any more.
            guard try prepareSurvivor(survivor) else { continue }
            if let blocker = mergeBlocker(loser, into: survivor) {
                var violation = conflict.violation
                violation.message += "; policy \(mergePolicyStorage) cannot merge it into \(survivor.objectID): \(blocker)"
                unresolved.append(violation)
                continue
            }
            try merge(loser, into: survivor, losers)
            losers[loser.objectID] = survivor
            uniquenessMerges.append((loser, survivor))
        }
        guard !losers.isEmpty else { return unresolved }
        repointReferencesWithoutInverse(to: losers)
        // Posts what the merges changed (the losers as deleted, the survivors as updated).
        try processPendingChanges()
        return unresolved
    }

    /// `object`, or the object it was merged into (a chain: an object inserted twice over
    /// collides with the first, which may have merged into a stored row).
    private static func survivor(of object: ManagedObject, _ losers: [ObjectID: ManagedObject]) -> ManagedObject {
        var current = object
        while let next = losers[current.objectID], next !== current { current = next }
        return current
    }

    /// Loads `survivor`. A stored one with no changes here is first brought up to the row
    /// stored now (another save may have changed it since it was read here), so the merge
    /// starts from the stored values and writes at the current version. False when the row
    /// is gone.
    private func prepareSurvivor(_ survivor: ManagedObject) throws -> Bool {
        if survivor.isInsertedStorage { return true }
        if !survivor.isFaultStorage && !survivor.isUpdatedStorage {
            statisticsStorage.storeRoundTrips += 1
            guard let row = try coordinator.snapshot(for: survivor.objectID, caching: false) else { return false }
            if row.version > (survivor.committedVersion ?? 0) {
                install(row, keepingChangesOf: survivor)
                undoStackStorage?.rebase(survivor, onto: row)
            }
        }
        do {
            try fulfillFaultIfNeeded(survivor)
        } catch let error as ObjectGraphError where error.code == .objectNotFound {
            return false
        }
        return true
    }

    /// Why `loser` cannot be merged into `survivor` without losing something (`nil` when it
    /// can). Only objects of different entities of one hierarchy (a constraint of a parent
    /// covers its sub-entities) can disagree: a value or a relationship the loser holds that
    /// the survivor's entity has no property for, or a relationship that cannot hold the
    /// survivor's entity.
    private func mergeBlocker(_ loser: ManagedObject, into survivor: ManagedObject) -> String? {
        let source = loser.entity
        let target = survivor.entity
        guard source !== target else { return nil }
        for attribute in source.attributes where loser.changedAttributeSlots.contains(attribute.slot) && !loser.attributeValues[attribute.slot].isNull {
            guard let theirs = target.attribute(named: attribute.name), theirs.type == attribute.type else {
                return "\(target.name) has no \(attribute.type.rawValue) attribute \(attribute.name) for its value"
            }
        }
        for relationship in source.toOneRelationships + source.toManyRelationships where holdsSomething(loser, relationship) {
            guard let theirs = target.relationship(named: relationship.name), theirs.isToMany == relationship.isToMany else {
                return "\(target.name) has no relationship \(relationship.name) for its destinations"
            }
            if let inverse = model.inverse(of: relationship), !accepts(inverse, target) {
                return "\(inverse.entityName).\(inverse.name) cannot hold a \(target.name)"
            }
        }
        for object in objectsWithChanges() {
            for relationship in object.entity.toOneRelationships + object.entity.toManyRelationships where !relationship.hasInverse && !accepts(relationship, target) {
                if refers(object, relationship, to: loser.objectID) {
                    return "\(object.objectID).\(relationship.name) names it and cannot hold a \(target.name)"
                }
            }
        }
        return nil
    }

    private func holdsSomething(_ object: ManagedObject, _ relationship: RelationshipDescription) -> Bool {
        relationship.isToMany ? !members(of: object, relationship.slot).isEmpty : object.toOneValues[relationship.slot] != nil
    }

    /// Whether `relationship` may name an object of `entity`.
    private func accepts(_ relationship: RelationshipDescription, _ entity: EntityDescription) -> Bool {
        entity.name == relationship.destinationName || model.destinationEntity(of: relationship).hierarchyTokens.contains(entity.nameToken)
    }

    /// The members of an inserted object's to-many (loaded: an insert's are never a fault).
    private func members(of object: ManagedObject, _ slot: Int) -> [ObjectID] {
        let state = object.toManyStates[slot]
        return Array(state.members ?? state.added)
    }

    private func refers(_ object: ManagedObject, _ relationship: RelationshipDescription, to id: ObjectID) -> Bool {
        if relationship.isToMany {
            let state = object.toManyStates[relationship.slot]
            return state.added.contains(id) || (state.members?.contains(id) ?? false)
        }
        return !object.isFaultStorage && object.toOneValues[relationship.slot] == id
    }

    /// Inserted and changed objects: only they can refer to an unsaved object.
    private func objectsWithChanges() -> [ManagedObject] {
        Array(insertedStorage) + Array(updatedStorage.values)
    }

    /// Puts `loser`'s values and relationships on `survivor` as the policy says, moves every
    /// relationship with an inverse from the loser to the survivor through the mutation path
    /// (so both ends stay paired), and discards the loser as an insert that never reaches the
    /// store. Properties are matched by name (see ``mergeBlocker(_:into:)``).
    private func merge(_ loser: ManagedObject, into survivor: ManagedObject, _ losers: [ObjectID: ManagedObject]) throws {
        let target = survivor.entity
        func current(_ id: ObjectID?) -> ObjectID? {
            guard let id else { return nil }
            if id == loser.objectID { return survivor.objectID }
            return Self.survivor(of: registeredOrFault(id), losers).objectID
        }
        let placements = orderedPlacements(of: loser, survivor)
        // Recorded whole before anything changes, so undoing the merge brings it back.
        noteUndoableChange(loser)
        for attribute in loser.entity.attributes {
            guard let theirs = target.attribute(named: attribute.name),
                  takesLoserValue(set: loser.changedAttributeSlots.contains(attribute.slot), survivorHasNone: survivor.attributeValues[theirs.slot].isNull) else { continue }
            try setAttribute(survivor, theirs, loser.attributeValues[attribute.slot], lenient: true)
        }
        for relationship in loser.entity.toOneRelationships {
            let mine = loser.toOneValues[relationship.slot]
            guard let theirs = target.relationship(named: relationship.name), !theirs.isToMany else { continue }
            let stored = survivor.toOneValues[theirs.slot]
            let takesMine = takesLoserValue(set: loser.changedToOneSlots.contains(relationship.slot), survivorHasNone: stored == nil)
            // The loser's destination lets go of it first (a to-many inverse drops it, a
            // one-to-one partner is cleared), whichever value wins.
            if mine != nil { try setToOne(loser, relationship, nil) }
            let winner = takesMine ? current(mine) : stored
            if winner != stored { try setToOne(survivor, theirs, winner.map(registeredOrFault)) }
        }
        // To-many memberships are unioned under every policy: each is also the member's own
        // state (its inverse), and dropping one would lose it.
        for relationship in loser.entity.toManyRelationships {
            let ids = members(of: loser, relationship.slot)
            guard !ids.isEmpty, let theirs = target.relationship(named: relationship.name), theirs.isToMany else { continue }
            for id in ids {
                try removeFromToMany(loser, relationship, registeredOrFault(id))
                if let destination = current(id) { try addToMany(survivor, theirs, registeredOrFault(destination)) }
            }
        }
        // The survivor takes the loser's place in ordered to-manys it was not in (the moves
        // above appended it), as a re-pointed reference would.
        for (destination, inverse, index) in placements {
            try moveToMany(destination, inverse, survivor, to: index)
        }
        insertedStorage.remove(loser)
        loser.isInsertedStorage = false
        loser.isDeletedStorage = true
        discardedInserts[ObjectIdentifier(loser)] = loser
        changeLog.deleted(loser)
    }

    /// Where `loser` sits in the ordered to-manys that hold it through an inverse and do not
    /// hold `survivor`: each holder, its relationship and the loser's position there.
    private func orderedPlacements(of loser: ManagedObject, _ survivor: ManagedObject) -> [(ManagedObject, RelationshipDescription, Int)] {
        var placements: [(ManagedObject, RelationshipDescription, Int)] = []
        for relationship in loser.entity.toOneRelationships + loser.entity.toManyRelationships {
            guard let inverse = model.inverse(of: relationship), inverse.isOrdered else { continue }
            let ids = relationship.isToMany ? members(of: loser, relationship.slot) : loser.toOneValues[relationship.slot].map { [$0] } ?? []
            for id in ids {
                let holder = registeredOrFault(id)
                // A holder whose members are not loaded had the loser appended: so is the survivor.
                guard let members = holder.toManyStates[inverse.slot].members, !members.contains(survivor.objectID),
                      let index = members.firstIndex(of: loser.objectID) else { continue }
                placements.append((holder, inverse, index))
            }
        }
        return placements
    }

    /// Whether a merge puts the loser's value of a property on the survivor: `set` says the
    /// loser was given a value (not merely its default), `survivorHasNone` that the survivor's
    /// is nil.
    private func takesLoserValue(set: Bool, survivorHasNone: Bool) -> Bool {
        switch mergePolicyStorage {
        case .objectTrumps: return set
        case .overwrite: return true
        case .storeTrumps: return set && survivorHasNone
        case .rollback, .error: return false
        }
    }

    /// Re-points the references to merged-away objects that the merges could not reach from
    /// the loser's side: relationships without an inverse (one-to-nil, many-to-nil) held by
    /// other objects. Only objects with changes can name an unsaved object.
    private func repointReferencesWithoutInverse(to losers: [ObjectID: ManagedObject]) {
        guard model.entities.contains(where: { entity in
            (entity.toOneRelationships + entity.toManyRelationships).contains { !$0.hasInverse }
        }) else { return }
        for object in objectsWithChanges() {
            if !object.isFaultStorage {
                for relationship in object.entity.toOneRelationships where !relationship.hasInverse {
                    guard let id = object.toOneValues[relationship.slot], let loser = losers[id] else { continue }
                    assignToOne(object, relationship, Self.survivor(of: loser, losers).objectID)
                }
            }
            for relationship in object.entity.toManyRelationships where !relationship.hasInverse {
                let state = object.toManyStates[relationship.slot]
                let named = state.added.union(state.members ?? []).filter { losers[$0] != nil }
                for id in named {
                    guard let loser = losers[id] else { continue }
                    noteUndoableChange(object)
                    let survivorID = Self.survivor(of: loser, losers).objectID
                    // An ordered one keeps the position: the survivor goes where the loser was.
                    let members = object.toManyStates[relationship.slot].members
                    let index = relationship.isOrdered && !(members?.contains(survivorID) ?? true) ? members?.firstIndex(of: id) : nil
                    _ = object.toManyStates[relationship.slot].remove(id)
                    _ = object.toManyStates[relationship.slot].addMirroring(survivorID)
                    if let index, var moved = object.toManyStates[relationship.slot].members,
                       let from = moved.firstIndex(of: survivorID), from != index {
                        moved.remove(at: from)
                        moved.insert(survivorID, at: index)
                        object.toManyStates[relationship.slot].members = moved
                        object.toManyStates[relationship.slot].orderChanged = true
                    }
                    markUpdated(object)
                }
            }
        }
    }

    /// What the save reports in ``ContextDidSave/mergedIDs``: each merged-away object's ID
    /// with the ID of the object that holds its row now (permanent by then).
    func takeUniquenessMerges() -> [ObjectID: ObjectID] {
        guard !uniquenessMerges.isEmpty else { return [:] }
        var survivors: [ObjectIdentifier: ManagedObject] = [:]
        for (loser, survivor) in uniquenessMerges { survivors[ObjectIdentifier(loser)] = survivor }
        var result: [ObjectID: ObjectID] = [:]
        for (loser, survivor) in uniquenessMerges {
            var final = survivor
            while let next = survivors[ObjectIdentifier(final)], next !== final { final = next }
            result[loser.objectID] = final.objectID
        }
        uniquenessMerges = []
        return result
    }
}
