import OrderedCollections

/// Every change to an object's values goes through here, so inverse relationships are
/// maintained on every mutation: set, add, remove, replace, ordered insert and move.
extension ManagedObjectContext {
    func prepareForMutation(_ object: ManagedObject, _ key: String) throws {
        try checkQueue("\(object.objectID).\(key)")
        guard object.belongs(to: self) else {
            throw ObjectGraphError(.objectInaccessible, objectID: object.objectID, key: key, "\(object.objectID) is not in this context (deleted and saved, reset, or never inserted)")
        }
    }

    /// Sets an attribute. `lenient` (typed setters, which cannot throw) keeps an integer that
    /// overflows its width so that validation reports it at save instead of stopping here.
    func setAttribute(_ object: ManagedObject, _ attribute: AttributeDescription, _ value: AttributeValue, lenient: Bool = false) throws {
        try prepareForMutation(object, attribute.name)
        try fulfillFaultIfNeeded(object)
        let checked = try attribute.check(value, lenient: lenient)
        // Identical, not equal: a canonically equivalent string or -0.0 for 0.0 is a change.
        guard !object.attributeValues[attribute.slot].isIdentical(to: checked) else { return }
        if awakingFromFetch > 0 {
            // Inside awakeFromFetch(), as in Core Data: the value is set without recording a
            // change, so establishing transients and caches there leaves the object clean.
            // (The committed row is kept apart, so a later save of the object still compares
            // against what the store holds.)
            object.attributeValues[attribute.slot] = checked
            return
        }
        noteUndoableChange(object)
        object.attributeValues[attribute.slot] = checked
        object.changedAttributeSlots.insert(attribute.slot)
        markUpdated(object)
    }

    func checkDestination(_ destination: ManagedObject, for relationship: RelationshipDescription, of source: ManagedObject) throws {
        guard destination.belongs(to: self) else {
            throw ObjectGraphError(
                .wrongContext, objectID: destination.objectID, key: relationship.name,
                "cannot relate \(source.objectID).\(relationship.name) to \(destination.objectID): it is not in the same context")
        }
        // The destination entity itself, the common case, needs no lookup of the entity by name.
        guard destination.entity.name == relationship.destinationName
            || model.destinationEntity(of: relationship).hierarchyTokens.contains(destination.entity.nameToken) else {
            throw ObjectGraphError(
                .wrongDestination, objectID: source.objectID, key: relationship.name,
                "\(source.entity.name).\(relationship.name) holds \(relationship.destinationName) objects, not \(destination.entity.name)")
        }
    }

    /// Sets a to-one relationship and maintains the inverse on the old and new destinations
    /// (and, for one-to-one, on the new destination's previous partner).
    func setToOne(_ object: ManagedObject, _ relationship: RelationshipDescription, _ destination: ManagedObject?) throws {
        try prepareForMutation(object, relationship.name)
        if let destination { try checkDestination(destination, for: relationship, of: object) }
        try fulfillFaultIfNeeded(object)
        let old = object.toOneValues[relationship.slot]
        guard old != destination?.objectID else { return }
        // A one-to-one reads its destination's row, and its previous partner's, before anything
        // changes: a destination gone from the store then fails the set with nothing changed
        // (it had already moved half of the pair, which the next save stored).
        var previousPartner: ManagedObject? = nil
        if let destination, let inverseSlot = relationship.inverseSlot, !relationship.inverseIsToMany {
            try fulfillFaultIfNeeded(destination)
            if let previous = destination.toOneValues[inverseSlot], previous != object.objectID {
                let partner = registeredOrFault(previous)
                do {
                    try fulfillFaultIfNeeded(partner)
                    previousPartner = partner
                } catch let error as ObjectGraphError where error.code == .objectNotFound {
                    // Gone already: nothing of it points at the destination any more.
                }
            }
        }
        assignToOne(object, relationship, destination?.objectID)
        guard let inverseSlot = relationship.inverseSlot else { return }
        if let old {
            try unlinkInverse(of: relationship, at: registeredOrFault(old), from: object)
        }
        guard let destination else { return }
        if relationship.inverseIsToMany {
            noteUndoableChange(destination)
            // A new object that pointed nowhere is in no set: appended unhashed (appendNew).
            let added = old == nil && object.objectID.isTemporary
                ? destination.toManyStates[inverseSlot].appendNew(object.objectID)
                : destination.toManyStates[inverseSlot].addMirroring(object.objectID)
            if added { markUpdated(destination) }
        } else {
            let inverse = model.inverse(of: relationship)!
            if let previousPartner, previousPartner.toOneValues[relationship.slot] == destination.objectID {
                assignToOne(previousPartner, relationship, nil)
            }
            assignToOne(destination, inverse, object.objectID)
        }
    }

    func assignToOne(_ object: ManagedObject, _ relationship: RelationshipDescription, _ id: ObjectID?) {
        noteUndoableChange(object)
        object.toOneValues[relationship.slot] = id
        object.changedToOneSlots.insert(relationship.slot)
        markUpdated(object)
    }

    /// Removes `source` from `destination`'s side of `relationship`'s inverse.
    ///
    /// `deletingDestination` says that a cascade deletes `destination` next and that it is a
    /// member of `source`'s to-many as stored (no unsaved adds or removes). A destination that
    /// is still a fault then points at `source` in the store and has no changes of its own, so
    /// its to-one is cleared without reading its row: the cleared value is kept over the row
    /// if the row is ever loaded (``ManagedObject/install(_:)``). A cascade over 10,000
    /// messages reads none of them.
    func unlinkInverse(of relationship: RelationshipDescription, at destination: ManagedObject, from source: ManagedObject, deletingDestination: Bool = false) throws {
        guard let inverseSlot = relationship.inverseSlot else { return }
        if relationship.inverseIsToMany {
            noteUndoableChange(destination)
            if destination.toManyStates[inverseSlot].removeMirroring(source.objectID) { markUpdated(destination) }
        } else if deletingDestination && destination.isFaultStorage && !destination.isInaccessibleStorage && !destination.objectID.isTemporary {
            noteUndoableChange(destination)
            if destination.toOneValues.isEmpty {
                destination.toOneValues = ToOneValues(repeating: nil, count: destination.entity.toOneRelationships.count)
            }
            destination.toOneValues[inverseSlot] = nil
            destination.changedToOneSlots.insert(inverseSlot)
        } else {
            do { try fulfillFaultIfNeeded(destination) } catch let error as ObjectGraphError where error.code == .objectNotFound {
                return  // the destination is gone already; nothing points back
            }
            if destination.toOneValues[inverseSlot] == source.objectID {
                assignToOne(destination, model.inverse(of: relationship)!, nil)
            }
        }
    }

    /// Adds `destination` to a to-many relationship (at `index` for ordered ones) and maintains
    /// the inverse; a destination with a to-one inverse leaves its previous owner's set.
    func addToMany(_ object: ManagedObject, _ relationship: RelationshipDescription, _ destination: ManagedObject, at index: Int? = nil) throws {
        try prepareForMutation(object, relationship.name)
        try checkDestination(destination, for: relationship, of: object)
        if let index {
            try loadToManyIfNeeded(object, relationship)
            // Positions run from 0 to the count (append); anything else is refused, as an
            // array's insert would refuse it (by trapping).
            let count = object.toManyStates[relationship.slot].members?.count ?? 0
            guard index >= 0, index <= count else {
                throw ObjectGraphError(
                    .wrongValueType, objectID: object.objectID, key: relationship.name,
                    "cannot insert at index \(index) of \(object.entity.name).\(relationship.name) (\(count) members)")
            }
        }
        // A member whose to-one is the inverse is read before anything changes: one gone from
        // the store fails the add with nothing changed.
        if relationship.inverseSlot != nil && !relationship.inverseIsToMany { try fulfillFaultIfNeeded(destination) }
        noteUndoableChange(object)
        guard object.toManyStates[relationship.slot].add(destination.objectID, at: index) else {
            if let index { try moveToMany(object, relationship, destination, to: index) }
            return
        }
        markUpdated(object)
        guard let inverseSlot = relationship.inverseSlot else { return }
        if relationship.inverseIsToMany {
            noteUndoableChange(destination)
            if destination.toManyStates[inverseSlot].addMirroring(object.objectID) { markUpdated(destination) }
        } else {
            if let previous = destination.toOneValues[inverseSlot], previous != object.objectID {
                let previousOwner = registeredOrFault(previous)
                noteUndoableChange(previousOwner)
                if previousOwner.toManyStates[relationship.slot].removeMirroring(destination.objectID) { markUpdated(previousOwner) }
            }
            assignToOne(destination, model.inverse(of: relationship)!, object.objectID)
        }
    }

    /// Removes `destination` from a to-many relationship and maintains the inverse.
    func removeFromToMany(_ object: ManagedObject, _ relationship: RelationshipDescription, _ destination: ManagedObject) throws {
        try prepareForMutation(object, relationship.name)
        // An object of another context (the same record's instance there, say) is refused as
        // an add refuses it: going on removed the record's ID here and then unlinked the inverse
        // on the other context's object, which this context then listed as updated and saved.
        guard destination.belongs(to: self) else {
            throw ObjectGraphError(
                .wrongContext, objectID: destination.objectID, key: relationship.name,
                "cannot remove \(destination.objectID) from \(object.objectID).\(relationship.name): it is not in the same context")
        }
        noteUndoableChange(object)
        guard object.toManyStates[relationship.slot].remove(destination.objectID) else { return }
        markUpdated(object)
        try unlinkInverse(of: relationship, at: destination, from: object)
    }

    /// Moves a member of an ordered relationship to `index`.
    func moveToMany(_ object: ManagedObject, _ relationship: RelationshipDescription, _ destination: ManagedObject, to index: Int) throws {
        try prepareForMutation(object, relationship.name)
        try loadToManyIfNeeded(object, relationship)
        guard var members = object.toManyStates[relationship.slot].members,
              let from = members.firstIndex(of: destination.objectID) else { return }
        let target = min(max(index, 0), members.count - 1)
        guard from != target else { return }
        noteUndoableChange(object)
        object.toManyStates[relationship.slot].willReorder()
        members.remove(at: from)
        members.insert(destination.objectID, at: target)
        object.toManyStates[relationship.slot].members = members
        object.toManyStates[relationship.slot].orderChanged = true
        markUpdated(object)
    }

    /// Replaces a to-many relationship's members with `destinations` (in that order, for
    /// ordered ones), as removals and additions so every inverse follows.
    func replaceToMany(_ object: ManagedObject, _ relationship: RelationshipDescription, with destinations: [ManagedObject]) throws {
        try prepareForMutation(object, relationship.name)
        for destination in destinations { try checkDestination(destination, for: relationship, of: object) }
        try loadToManyIfNeeded(object, relationship)
        let wanted = OrderedSet(destinations.map(\.objectID))
        let current = object.toManyStates[relationship.slot].members ?? []
        // New members whose to-one is the inverse are read before anything changes, as
        // addToMany reads one (in one round trip here): one gone from the store then fails the
        // replace with nothing changed. Read member by member, the removals were done already,
        // and a caught error left the relationship holding a part of the old members and a
        // part of the new (an audit: a playlist kept one track of three).
        if relationship.inverseSlot != nil && !relationship.inverseIsToMany {
            let adding = destinations.filter { $0.isFaultStorage && !current.contains($0.objectID) }
            if !adding.isEmpty {
                try fulfillFaults(adding)
                for destination in adding where destination.isFaultStorage { try fulfillFaultIfNeeded(destination) }
            }
        }
        for id in current where !wanted.contains(id) {
            try removeFromToMany(object, relationship, registeredOrFault(id))
        }
        for destination in destinations where !current.contains(destination.objectID) {
            try addToMany(object, relationship, destination)
        }
        if relationship.isOrdered, object.toManyStates[relationship.slot].members != wanted {
            noteUndoableChange(object)
            object.toManyStates[relationship.slot].willReorder()
            object.toManyStates[relationship.slot].members = wanted
            object.toManyStates[relationship.slot].orderChanged = true
            markUpdated(object)
        }
    }
}
