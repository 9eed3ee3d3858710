import OrderedCollections

/// Keeping the two sides of a one-to-many in step when ``ManagedObjectContext/refresh(_:mergeChanges:)``
/// refreshes only one of them.
///
/// A refresh shows the refreshed object as the store holds it now. When another context moved a
/// student from class A to B, refreshing the student showed it in B while A's loaded students
/// still listed it and B's lacked it; refreshing A dropped the student from A's students while
/// the loaded student still named A. Each side is right about the store or about what this
/// context read, but together they describe a graph that never existed, and a save stored
/// changes made on top of it. So the loaded sides a refresh contradicts follow it:
///
/// - the refreshed object's to-one changed: the to-many of its old and its new destination is
///   read again when next touched (recorded changes replayed), as a merge reads them again;
///   when the refresh dropped the object's own move, the two destinations first drop the
///   halves of it they recorded (the to-one is the membership);
/// - the refreshed object's loaded to-many lost or gained members: each such member that is
///   loaded, whose inverse to-one it did not change itself, and that still names the other
///   class takes its stored row under its own changes (as a merge would: another context
///   saved it), and the to-many of the destination it names now is read again.
///
/// ``ManagedObjectContext/refreshAllObjects()`` needs none of this: every loaded object is
/// refreshed with the others. Many-to-many pairs are left to `pairedMembershipChanges(of:)`.
/// One step only: a member taking its row may in turn disagree with partners of its other
/// relationships, which are refreshed when they are.
extension ManagedObjectContext {
    /// What the refreshed object showed of its one-to-many relationships before the refresh:
    /// only what was loaded can disagree with a loaded other side.
    struct ShownInverseSides {
        var destinations: [(relationship: RelationshipDescription, destination: ObjectID?)] = []
        var members: [(relationship: RelationshipDescription, members: OrderedSet<ObjectID>)] = []
        var isEmpty: Bool { destinations.isEmpty && members.isEmpty }
    }

    /// The loaded sides of `object`'s one-to-many relationships (taken before a refresh).
    func shownInverseSides(of object: ManagedObject) -> ShownInverseSides {
        var shown = ShownInverseSides()
        guard !object.isInsertedStorage, !object.isDeletedStorage else { return shown }
        let entity = object.entity
        if !object.isFaultStorage {
            for relationship in entity.toOneRelationships where relationship.inverseIsToMany && relationship.hasInverse && !relationship.isTransient {
                shown.destinations.append((relationship, object.toOneValues[relationship.slot]))
            }
        }
        for relationship in entity.toManyRelationships where !relationship.inverseIsToMany && relationship.hasInverse && !relationship.isTransient {
            if let members = object.toManyStates[relationship.slot].members { shown.members.append((relationship, members)) }
        }
        return shown
    }

    /// Brings the loaded other sides of `object`'s one-to-many relationships in step with what
    /// the refresh showed (see above). A failed read leaves them as they are: a refresh cannot
    /// throw.
    func keepInversesInStep(afterRefreshing object: ManagedObject, shown: ShownInverseSides) {
        guard !shown.isEmpty, object.belongs(to: self), !object.isDeletedStorage else { return }
        if !shown.destinations.isEmpty { followDestinations(of: object, shown.destinations) }
        for (relationship, before) in shown.members { followMembers(of: object, relationship, before) }
    }

    /// The refreshed object's to-ones: the to-manys of the old and the new destination are
    /// read again when they differ.
    private func followDestinations(of object: ManagedObject, _ shown: [(relationship: RelationshipDescription, destination: ObjectID?)]) {
        // Still loaded (changes merged): its to-ones are the stored ones under its own changes.
        // A fault: what it will read when fired, read now (and cached for that).
        var row: RowSnapshot?
        if object.isFaultStorage {
            guard let read = try? coordinator.snapshots(for: [object.objectID]).first else { return }
            statisticsStorage.storeRoundTrips += 1
            row = read
        }
        for (relationship, before) in shown {
            let now = row.map { $0.toOne[relationship.slot] } ?? object.toOneValues[relationship.slot]
            guard now != before, let inverseSlot = relationship.inverseSlot else { continue }
            if !object.changedToOneSlots.contains(relationship.slot) {
                // The refresh dropped the object's own move (or another save moved it): the
                // halves its old and new destinations recorded of a move of this context go
                // with it. Replayed, they listed it where its to-one no longer names, and a
                // cascade from that list deleted it (or a nullify missed it, leaving its key
                // on a deleted row). The to-one is a one-to-many's membership (see
                // pairedMembershipChanges(of:)).
                for id in [before, now] { if let id { forgetRecordedChange(of: object.objectID, at: id, slot: inverseSlot) } }
            }
            for id in [before, now] { if let id { rereadMembers(of: id, slot: inverseSlot) } }
        }
    }

    /// Drops what the to-many at `slot` of the registered object `ownerID` recorded about
    /// `member` (added or removed); an owner left with no change is no longer updated.
    private func forgetRecordedChange(of member: ObjectID, at ownerID: ObjectID, slot: Int) {
        guard let owner = registeredLive(ownerID), owner.belongs(to: self), !owner.isDeletedStorage,
              slot < owner.toManyStates.count else { return }
        let state = owner.toManyStates[slot]
        guard state.added.contains(member) || state.removed.contains(member) else { return }
        if owner.isInsertedStorage {
            // An inserted owner's additions are its members (nothing to read again).
            owner.toManyStates[slot].remove(member)
        } else {
            owner.toManyStates[slot].added.remove(member)
        }
        owner.toManyStates[slot].removed.remove(member)
        guard owner.isUpdatedStorage, owner.changedAttributeSlots.isEmpty, owner.changedToOneSlots.isEmpty,
              !owner.toManyStates.contains(where: \.hasChanges) else { return }
        updatedStorage.removeValue(forKey: owner.objectID)
        owner.isUpdatedStorage = false
        changeLog.discardedUpdate(owner)
    }

    /// The refreshed object's to-many with a to-one inverse: members that left or joined in
    /// the store and still name the other side take their stored rows.
    private func followMembers(of object: ManagedObject, _ relationship: RelationshipDescription, _ before: OrderedSet<ObjectID>) {
        guard let inverseSlot = relationship.inverseSlot,
              let stored = try? coordinator.relatedIDs(for: relationship, of: [object.objectID]).first else { return }
        statisticsStorage.storeRoundTrips += 1
        // Read now, so kept: they are what the refreshed object's members are read from.
        if object.toManyStates[relationship.slot].isFault { object.toManyStates[relationship.slot].load(stored: stored) }
        let storedSet = Set(stored)
        var stale: [ManagedObject] = []
        for id in before.union(stored) {
            guard let member = registeredLive(id), member.belongs(to: self), !member.isFaultStorage,
                  !member.isInsertedStorage, !member.isDeletedStorage, inverseSlot < member.toOneValues.count,
                  !member.changedToOneSlots.contains(inverseSlot) else { continue }
            let namesObject = member.toOneValues[inverseSlot] == object.objectID
            if namesObject != storedSet.contains(id) { stale.append(member) }
        }
        guard !stale.isEmpty, let rows = try? coordinator.snapshots(for: stale.map(\.objectID)) else { return }
        statisticsStorage.storeRoundTrips += 1
        var fresh: [ObjectID: RowSnapshot] = [:]
        for row in rows { fresh[row.objectID] = row }
        for member in stale {
            guard let row = fresh[member.objectID] else { continue }
            let before = member.toOneValues[inverseSlot]
            install(row, keepingChangesOf: member)
            undoStackStorage?.rebase(member, onto: row)
            changeLog.refreshed(member)
            let now = member.toOneValues[inverseSlot]
            // The refreshed object's own members are read again already.
            for id in [before, now] { if let id, id != object.objectID { rereadMembers(of: id, slot: relationship.slot) } }
        }
    }

    /// Drops the loaded members of the to-many at `slot` of the registered object `id`, so
    /// that they are read again when next touched, its recorded changes replayed.
    private func rereadMembers(of id: ObjectID, slot: Int) {
        guard let owner = registeredLive(id), owner.belongs(to: self), !owner.isInsertedStorage,
              slot < owner.toManyStates.count, !owner.toManyStates[slot].isFault else { return }
        owner.toManyStates[slot].unload()
        undoStackStorage?.rebase(owner, onto: nil)
    }
}
