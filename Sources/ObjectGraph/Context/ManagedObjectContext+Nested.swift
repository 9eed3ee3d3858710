import OrderedCollections
import Foundation

/// Parent and child contexts: a child's store is its parent.
///
/// A child context gets a coordinator of its own whose stores stand in for the parent's (one
/// ``ParentContextStore`` per store of the parent, with the same identifier, so object IDs are
/// shared by the whole family). Everything a context does with a store — fetch, fire faults,
/// load relationships, prefetch, batch, allocate keys, save — then reaches the parent:
///
/// - a child's fetches see the parent's unsaved inserts, changes and deletes;
/// - saving a child pushes its changes into the parent (as unsaved changes there), never to
///   the store; only the root context's save reaches the store;
/// - discarding a child (or rolling it back) leaves the parent untouched;
/// - every ID a child or parent hands out is permanent: a child obtains permanent IDs from the
///   real store at save, and a parent gives its own new objects permanent IDs before a child
///   sees them, so an ID passed between contexts of the family always resolves.
///
/// A child's save overwrites, in the parent, the values it changed (those that differ from the
/// row it read); the parent's other values stay, its own later changes included (no version
/// check between child and parent). Work on the parent runs through its
/// `performAndWait`, so a parent must not wait on its child's queue while the child works.
extension ManagedObjectContext {
    /// Creates a child context of `parent`, on a private queue by default.
    public convenience init(concurrencyType: ConcurrencyType = .privateQueue, parent: ManagedObjectContext, name: String? = nil) {
        let coordinator = PersistentStoreCoordinator(model: parent.model, rowCacheCapacity: parent.coordinator.rowCache.capacity)
        let parentEntries = parent.coordinator.attachedEntries
        coordinator.attach(parentEntries.map { entry in
            let store = ParentContextStore(parent: parent, standingInFor: entry)
            return .init(store: store, description: entry.description, entityNames: entry.entityNames, gate: .init(concurrentReads: false))
        })
        self.init(concurrencyType: concurrencyType, coordinator: coordinator, name: name)
        parentStorage = parent
    }

    /// A new child context of this one.
    public func newChildContext(concurrencyType: ConcurrencyType = .privateQueue, name: String? = nil) -> ManagedObjectContext {
        ManagedObjectContext(concurrencyType: concurrencyType, parent: self, name: name)
    }

    /// The parent of a child context; `nil` for a context on a coordinator.
    public var parent: ManagedObjectContext? { parentStorage }

    /// The coordinator of the family's root context (for a root context, its own coordinator;
    /// a child's ``coordinator`` is the one standing in for its parent).
    public var rootCoordinator: PersistentStoreCoordinator { parentStorage?.rootCoordinator ?? coordinator }

    /// What this context saves into: its parent, or its coordinator. Contexts saving into the
    /// same target see each other's saves (automatic merging).
    var saveTarget: AnyObject { parentStorage ?? coordinator }

    // MARK: Answering a child (run on this context's queue)

    /// Gives inserted objects permanent IDs before a child sees them, remembering their
    /// temporary ones (see ManagedObjectContext+HandedOverIDs).
    func prepareForChild() throws {
        let temporary = Array(insertedStorage.filter(\.objectID.isTemporary))
        guard !temporary.isEmpty else { return }
        let oldIDs = temporary.map(\.objectID)
        try obtainPermanentIDs(for: temporary)
        for (old, object) in zip(oldIDs, temporary) where !object.objectID.isTemporary { handedOverIDs[old] = object.objectID }
    }

    /// The row a child reads for `object`: its current values, unsaved changes included.
    func childRow(for id: ObjectID) throws -> RowSnapshot? {
        let object = registeredOrFault(id)
        guard !object.isDeletedStorage else { return nil }
        do { try fulfillFaultIfNeeded(object) } catch let error as ObjectGraphError where error.code == .objectNotFound || error.code == .objectInaccessible {
            return nil
        }
        return snapshot(of: object, version: object.committedVersion ?? 1)
    }

    /// Applies a child's save as unsaved changes of this context. The child has applied every
    /// rule already and its change set holds both ends of each relationship change, so values
    /// are set as given; deletions are applied with this context's delete rules (which also
    /// reach objects only this context relates to the deleted ones). With an undo stack, the
    /// whole save is recorded (one group, as Core Data's parent records a child's save), so
    /// undoing it puts back every object it touched, both ends of each relationship included.
    func applyChildSave(_ changes: StoreChangeSet) throws {
        var missing: [StoreError.Conflict] = []
        // Held strongly: the registry alone would let loaded objects go before they are changed.
        var targets: [ManagedObject] = []
        for row in changes.updated {
            let object = registeredOrFault(row.values.objectID)
            targets.append(object)
            if object.isDeletedStorage || (try? fulfillFaultIfNeeded(object)) == nil {
                missing.append(.init(objectID: row.values.objectID, expectedVersion: row.expectedVersion, storedVersion: nil, storedSnapshot: nil))
            }
        }
        if !missing.isEmpty {
            throw StoreError(.conflict, "\(missing.count) object\(missing.count == 1 ? " was" : "s were") deleted in parent context '\(name)'", conflicts: missing)
        }
        for row in changes.inserted {
            guard let entity = model.entity(named: row.objectID.entityName) else { continue }
            // A fault this context made for the ID before the child's save (the child handed
            // the permanent ID over early) becomes the object: one object per record here.
            // A second instance left the app's fault dead, never to find its record.
            let early = registeredLive(row.objectID).flatMap { $0.isFaultStorage && !$0.isInsertedStorage && !$0.isDeletedStorage ? $0 : nil }
            let object = early ?? entity.managedClass.init(entity: entity, insertInto: nil)
            object.objectID = row.objectID
            object.isInaccessibleStorage = false
            noteUndoableChange(object)
            object.contextStorage = self
            object.attributeValues = row.attributes
            // The values the child gave count as set here, as an insert's own do: a merge
            // policy resolving a uniqueness conflict of this insert (+Uniqueness) takes the set
            // values only, and without these it dropped all the child's values. The row does
            // not say which the child set; those differing from the default were.
            for attribute in entity.attributes {
                if attribute.isTransient {
                    object.attributeValues[attribute.slot] = attribute.defaultValue
                } else if !row.attributes[attribute.slot].isIdentical(to: attribute.defaultValue) {
                    object.changedAttributeSlots.insert(attribute.slot)
                }
            }
            object.toOneValues = row.toOne
            for relationship in entity.toOneRelationships where row.toOne[relationship.slot] != nil {
                object.changedToOneSlots.insert(relationship.slot)
            }
            object.toManyStates = Array(repeating: .inserted, count: entity.toManyRelationships.count)
            object.isFaultStorage = false
            object.isInsertedStorage = true
            if early == nil { register(object) }
            insertedStorage.insert(object)
            changeLog.inserted(object)
        }
        // Only the values the child changed (those that differ from the row it read): the
        // others may be stale in the child, and writing them back would undo changes this
        // context made after the child read the object (a lost update, and a to-one put back
        // without its inverse).
        for (row, object) in zip(changes.updated, targets) {
            noteUndoableChange(object)
            for attribute in object.entity.attributes where !attribute.isTransient && row.changedAttributes?.contains(attribute.slot) != false
                && !object.attributeValues[attribute.slot].isIdentical(to: row.values.attributes[attribute.slot]) {
                object.attributeValues[attribute.slot] = row.values.attributes[attribute.slot]
                object.changedAttributeSlots.insert(attribute.slot)
                markUpdated(object)
            }
            for relationship in object.entity.toOneRelationships where !relationship.isTransient && row.changedToOne?.contains(relationship.slot) != false
                && object.toOneValues[relationship.slot] != row.values.toOne[relationship.slot] {
                let replaced = object.toOneValues[relationship.slot]
                assignToOne(object, relationship, row.values.toOne[relationship.slot])
                // The destination this context had may not be the one the child read (this
                // context changed the to-one since): the child's change set then does not
                // unlink it, and it kept naming the object (a chat listing a message that now
                // names another chat, an address whose student has another address).
                if let replaced, relationship.hasInverse {
                    let destination = registeredOrFault(replaced)
                    if !destination.isDeletedStorage { try unlinkInverse(of: relationship, at: destination, from: object) }
                }
            }
        }
        for change in changes.toMany {
            let object = registeredOrFault(change.source)
            guard !object.isDeletedStorage else { continue }
            noteUndoableChange(object)
            var changed = false
            for id in change.removed { changed = object.toManyStates[change.relationship.slot].remove(id) || changed }
            for id in change.added { changed = object.toManyStates[change.relationship.slot].add(id) || changed }
            if let order = change.order {
                try loadToManyIfNeeded(object, change.relationship)
                // The child's order, for the members both hold; members the child never saw
                // (this context added them after the child read the relationship) follow in
                // this context's order, as a reload keeps a local reorder (ToManyState.load).
                // Taking the child's list whole dropped them from the set while their to-one
                // still named this owner, and the stores then disagreed on where they went.
                let current = object.toManyStates[change.relationship.slot].members ?? []
                var reordered = OrderedSet(order.filter(current.contains))
                reordered.append(contentsOf: current)
                if current != reordered {
                    object.toManyStates[change.relationship.slot].members = reordered
                    object.toManyStates[change.relationship.slot].orderChanged = true
                    changed = true
                }
            }
            if changed { markUpdated(object) }
        }
        let changed = changes.deleted.isEmpty ? [] : Set(changes.updated.map(\.values.objectID)).union(changes.toMany.map(\.source))
        for row in changes.deleted {
            let object = registeredOrFault(row.objectID)
            if !changed.isEmpty { try dropMembersMovedAway(from: object, changed: changed) }
            markDeleted(object)
        }
        try processPendingChanges()
    }

    /// Drops from `deleted`'s cascade and deny relationships the members that the child moved
    /// away before deleting it. A child's change set holds no changes of the objects it deletes,
    /// so here their members are as this context last knew them: the moved member's own side
    /// says it left (its inverse, which the child did send, no longer names `deleted`), yet
    /// the cascade deleted it here too, or the deny refused the parent's save. Only members
    /// the child changed (`changed`) can have left; the others are related here as well, and
    /// this context's rules reach them as before.
    private func dropMembersMovedAway(from deleted: ManagedObject, changed: Set<ObjectID>) throws {
        for relationship in deleted.entity.relationships where relationship.hasInverse && !relationship.isTransient
            && (relationship.deleteRule == .cascade || relationship.deleteRule == .deny) {
            guard let inverse = model.inverse(of: relationship) else { continue }
            do {
                if relationship.isToMany {
                    try loadToManyIfNeeded(deleted, relationship)
                    for id in deleted.toManyStates[relationship.slot].members ?? [] where changed.contains(id) {
                        guard try !names(registeredOrFault(id), inverse, deleted) else { continue }
                        noteUndoableChange(deleted)
                        deleted.toManyStates[relationship.slot].remove(id)
                    }
                } else {
                    try fulfillFaultIfNeeded(deleted)
                    if let id = deleted.toOneValues[relationship.slot], changed.contains(id), try !names(registeredOrFault(id), inverse, deleted) {
                        assignToOne(deleted, relationship, nil)
                    }
                }
            } catch let error as ObjectGraphError where error.code == .objectNotFound {
                continue  // the deleted object's row is gone already: no rule of it runs
            }
        }
    }

    /// Whether `member`'s side of a relationship (`inverse`) names `owner`; a member whose row
    /// is gone names nothing.
    private func names(_ member: ManagedObject, _ inverse: RelationshipDescription, _ owner: ManagedObject) throws -> Bool {
        do {
            if inverse.isToMany {
                try loadToManyIfNeeded(member, inverse)
                return member.toManyStates[inverse.slot].members?.contains(owner.objectID) ?? false
            }
            try fulfillFaultIfNeeded(member)
            return member.toOneValues[inverse.slot] == owner.objectID
        } catch let error as ObjectGraphError where error.code == .objectNotFound {
            return false
        }
    }
}
