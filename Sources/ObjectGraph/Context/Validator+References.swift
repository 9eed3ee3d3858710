import OrderedCollections

/// References to deleted objects (code 1550, Core Data's "dangling reference to an invalid
/// object"), and members deleted in the save left out of relationship counts.
///
/// Delete rules run once, when pending changes are processed. A relationship set to an object
/// after its deletion was processed (`message.chat = deletedChat`, `member.$chats.add(deletedChat)`)
/// is never nullified: the save stored a foreign key or join row naming a row it deleted in
/// the same transaction, and a reload handed out a fault that no row answers (LMDB even kept
/// the membership). Core Data refuses such a save; so does this check, naming the object, the
/// relationship and the deleted destination.
extension Validator {
    /// Reports each to-one `object` set, and each to-many member it added, since the last save
    /// that names an object deleted in this context. Only references this context made are
    /// checked: one a no-action rule left on an unchanged object is Core Data's documented
    /// dangling inverse, not a new reference.
    mutating func validateReferences(of object: ManagedObject) {
        // Nothing is deleted: nothing can be referred to (a bulk insert pays one comparison).
        guard !context.deletedStorage.isEmpty else { return }
        let entity = object.entity
        if !object.toOneValues.isEmpty {
            for relationship in entity.toOneRelationships where !relationship.isTransient {
                guard object.isInsertedStorage || object.changedToOneSlots.contains(relationship.slot),
                      let id = object.toOneValues[relationship.slot], isDeleted(id) else { continue }
                reportDangling(object, relationship, [id])
            }
        }
        for relationship in entity.toManyRelationships where !relationship.isTransient {
            let state = object.toManyStates[relationship.slot]
            guard state.hasChanges else { continue }
            let deleted = state.added.filter(isDeleted)
            if !deleted.isEmpty { reportDangling(object, relationship, Array(deleted)) }
        }
    }

    /// How many of `members` the relationship holds once the save lands: a member deleted in
    /// this context is left out. One with an inverse was taken out by its delete rule already;
    /// one without (a many-to-nil) or behind a no-action rule stays listed until the save, but
    /// the store drops it with its row. Counted, a many-to-nil at its maximum that swapped a
    /// deleted member for a new one was refused, and one whose only member was deleted passed
    /// its minimum and was stored empty.
    func storedCount(of members: OrderedSet<ObjectID>) -> Int {
        guard !context.deletedStorage.isEmpty else { return members.count }
        var count = 0
        for id in members where !isDeleted(id) { count += 1 }
        return count
    }

    /// Whether `id`'s object is registered here and deleted (its deletion unsaved).
    private func isDeleted(_ id: ObjectID) -> Bool {
        context.registeredLive(id)?.isDeletedStorage ?? false
    }

    private mutating func reportDangling(_ object: ManagedObject, _ relationship: RelationshipDescription, _ ids: [ObjectID]) {
        let names = ids.prefix(3).map(\.description).joined(separator: ", ")
        violations.append(.init(
            code: .managedObjectValidation, objectID: object.objectID, key: relationship.name,
            message: "\(object.objectID).\(relationship.name) refers to \(names), deleted in this context (a dangling reference: relate a live object instead, or undo or roll back the deletion)"))
    }
}
