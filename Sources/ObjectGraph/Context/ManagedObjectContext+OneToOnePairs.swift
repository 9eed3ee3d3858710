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
