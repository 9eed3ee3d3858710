/// One-to-one relationships saved as whole pairs.
///
/// A one-to-one is two to-ones, each stored in its own row. Every mutation sets both, but
/// `refresh(_:mergeChanges: false)` drops the refreshed object's side only: after
/// `student.address = address; refresh(address, mergeChanges: false)` the save stored the
/// student naming the address and the address naming no student, on every store (an audit).
/// Before a save, each one-to-one this context set whose partner does not name the setter
/// back is completed on the partner, so the pair is stored whole: the side still changed wins,
/// as for a many-to-many pair (``refresh(_:mergeChanges:)``).
extension ManagedObjectContext {
    /// Completes the one-to-one pairs that the inserted and updated objects' changed to-ones
    /// start (see the extension's summary).
    func pairOneToOnes() throws {
        // (A model without one-to-ones skips the walk: it cost a 20,000-object LMDB insert 1.6%
        // of its instructions, callgrind.)
        guard model.hasOneToOnes else { return }
        // Per entity, its one-to-ones (most have none: a bulk insert pays one comparison per
        // object, unretained).
        var last: (entity: ObjectIdentifier, oneToOnes: [RelationshipDescription])?
        var unpaired: [(object: ManagedObject, relationship: RelationshipDescription, partner: ManagedObject)] = []
        func visit(_ object: ManagedObject) {
            guard !object.isFaultStorage, !object.isDeletedStorage else { return }
            let entity = object.entity
            if last?.entity != ObjectIdentifier(entity) {
                last = (ObjectIdentifier(entity), entity.toOneRelationships.filter { $0.hasInverse && !$0.inverseIsToMany && !$0.isTransient })
            }
            guard let oneToOnes = last?.oneToOnes, !oneToOnes.isEmpty else { return }
            for relationship in oneToOnes {
                guard object.isInsertedStorage || object.changedToOneSlots.contains(relationship.slot),
                      let id = object.toOneValues[relationship.slot], let partner = registeredLive(id),
                      !partner.isDeletedStorage else { continue }
                unpaired.append((object, relationship, partner))
            }
        }
        insertedStorage.forEachUnretained(visit)
        for object in Array(updatedStorage.values) { visit(object) }
        for (object, relationship, partner) in unpaired {
            guard let inverseSlot = relationship.inverseSlot, let inverse = model.inverse(of: relationship),
                  object.toOneValues[relationship.slot] == partner.objectID else { continue }
            do { try fulfillFaultIfNeeded(partner) } catch let error as ObjectGraphError where error.code == .objectNotFound { continue }
            guard partner.toOneValues[inverseSlot] != object.objectID else { continue }
            // Through the mutation path: the partner's previous partner lets go of it too.
            try setToOne(partner, inverse, object)
        }
    }
}

extension ManagedObjectContext {
    /// The changed one-to-ones of `object` before a refresh drops its changes: each
    /// relationship with the destination the object names now.
    func changedOneToOnes(of object: ManagedObject) -> [(relationship: RelationshipDescription, destination: ObjectID?)] {
        guard model.hasOneToOnes, !object.isFaultStorage, !object.isInsertedStorage, !object.isDeletedStorage,
              !object.changedToOneSlots.isEmpty else { return [] }
        return object.entity.toOneRelationships.compactMap { relationship in
            guard relationship.hasInverse, !relationship.inverseIsToMany, !relationship.isTransient,
                  object.changedToOneSlots.contains(relationship.slot) else { return nil }
            return (relationship, object.toOneValues[relationship.slot])
        }
    }

    /// After `refresh(_:mergeChanges: false)`: a one-to-one change of `object` that its
    /// partner still records is made again, so the context shows the pair the save stores.
    ///
    /// The save completes a pair from the side still changed (``pairOneToOnes()``), so the
    /// refresh could not drop such a change, only hide it: after `car.engine = e2;
    /// refresh(car, mergeChanges: false)` the car named its old engine while `e2.car` named the
    /// car, and deleting the car then nullified the old engine's side and left `e2` naming a
    /// deleted row, which failed the save (an audit). Set to nil, the pair had no side to
    /// complete it from at all: the old partner's cleared to-one was stored next to the car
    /// still naming it. A change the partner no longer records (it has moved on) stays dropped.
    func keepOneToOnePairs(of object: ManagedObject, _ pairs: [(relationship: RelationshipDescription, destination: ObjectID?)]) {
        guard !pairs.isEmpty, object.belongs(to: self), !object.isDeletedStorage else { return }
        // Not undoable, as the refresh is not: undo keeps the states it recorded before it.
        let stack = undoStackStorage
        undoStackStorage = nil
        defer { undoStackStorage = stack }
        for (relationship, destination) in pairs {
            guard let inverseSlot = relationship.inverseSlot else { continue }
            func records(_ partner: ManagedObject, _ named: (ObjectID?) -> Bool) -> Bool {
                guard partner.isInsertedStorage || partner.changedToOneSlots.contains(inverseSlot),
                      inverseSlot < partner.toOneValues.count else { return false }
                return named(partner.toOneValues[inverseSlot])
            }
            if let destination {
                guard let partner = registeredLive(destination), partner.belongs(to: self), !partner.isDeletedStorage,
                      records(partner, { $0 == object.objectID }) else { continue }
                try? setToOne(object, relationship, partner)
            } else {
                guard (try? fulfillFaultIfNeeded(object)) != nil, let shown = object.toOneValues[relationship.slot],
                      let partner = registeredLive(shown), partner.belongs(to: self),
                      partner.isDeletedStorage || records(partner, { $0 != object.objectID }) else { continue }
                try? setToOne(object, relationship, nil)
            }
        }
    }
}
