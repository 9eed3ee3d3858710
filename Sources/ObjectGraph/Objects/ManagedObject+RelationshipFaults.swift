/// Looking at a relationship without firing its faults: Core Data's
/// `hasFault(forRelationshipNamed:)` and `objectIDs(forRelationshipNamed:)`.
///
/// Both take a relationship's name; a name the entity does not have, or an attribute's, throws
/// ``ObjectGraphError/Code/unknownKey`` (Core Data raises an exception).
extension ManagedObject {
    /// Whether reading the relationship `key` would fire a fault: for a to-many, whether its
    /// members are not loaded yet; for a to-one, whether the object's own values are not loaded
    /// (the destination is not known yet) or its destination is a fault. A relationship
    /// holding no object is not a fault. Fires nothing.
    public func hasFault(forRelationshipNamed key: String) throws -> Bool {
        let context = try requireContext(key)
        let relationship = try relationship(named: key)
        if relationship.isToMany { return toManyStates[relationship.slot].isFault }
        guard !isFaultStorage else { return true }
        guard let id = toOneValues[relationship.slot] else { return false }
        return context.registeredLive(id)?.isFaultStorage ?? true
    }

    /// The IDs of the objects in the relationship `key`, unsaved changes included, in order for
    /// an ordered relationship; none of them is made into an object. A to-many whose members
    /// are not loaded is read from the store (one round trip) and stays a fault, so this is the
    /// way to learn a large relationship's members without loading it. A to-one needs the
    /// object's own values: they are loaded if it is a fault.
    public func objectIDs(forRelationshipNamed key: String) throws -> [ObjectID] {
        let context = try requireContext(key)
        let relationship = try relationship(named: key)
        if !relationship.isToMany {
            try context.fulfillFaultForAccess(self)
            return toOneValues[relationship.slot].map { [$0] } ?? []
        }
        if let members = toManyStates[relationship.slot].members { return Array(members) }
        return try context.memberIDs(of: self, relationship)
    }

    /// The relationship named `key`; an unknown name, or an attribute's, throws `unknownKey`.
    func relationship(named key: String) throws -> RelationshipDescription {
        guard case .relationship(let relationship) = try property(key) else {
            throw ObjectGraphError(.unknownKey, objectID: objectID, key: key, "\(entity.name).\(key) is an attribute, not a relationship")
        }
        return relationship
    }
}

extension ManagedObjectContext {
    /// The members of `object`'s to-many `relationship`, still a fault: what the store holds
    /// with the recorded changes replayed, on a copy of its state (the object's stays a fault).
    func memberIDs(of object: ManagedObject, _ relationship: RelationshipDescription) throws -> [ObjectID] {
        var state = object.toManyStates[relationship.slot]
        if object.objectID.isTemporary || relationship.isTransient {
            state.load(stored: [])
        } else {
            statisticsStorage.storeRoundTrips += 1
            state.load(stored: try coordinator.relatedIDs(for: relationship, of: [object.objectID]).first ?? [])
        }
        return Array(state.members ?? [])
    }

    /// The members of `object`'s to-many `relationship` before its unsaved changes (see
    /// ``ManagedObject/committedValues(forKeys:)``), without loading it. Loaded members without
    /// recorded changes are given as they are; otherwise the store (a child's parent) is asked.
    /// Undoing the recorded additions and removals on the loaded members cannot be trusted:
    /// they record intents ("make it a member"), not differences from what is stored — a
    /// stored member removed and added back is recorded as an addition, one added and removed
    /// again as a removal — and in a child the members may have been read before the parent
    /// changed them, so a member the parent holds was missed.
    func committedMemberIDs(of object: ManagedObject, _ relationship: RelationshipDescription) throws -> [ObjectID] {
        let state = object.toManyStates[relationship.slot]
        if let members = state.members, !state.hasChanges { return Array(members) }
        if object.objectID.isTemporary { return [] }
        statisticsStorage.storeRoundTrips += 1
        return try coordinator.relatedIDs(for: relationship, of: [object.objectID]).first ?? []
    }
}
