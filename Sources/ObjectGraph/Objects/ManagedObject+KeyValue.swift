import Foundation
import OrderedCollections

/// Key-based access, checked against the model: an unknown key or a value of the wrong type
/// throws ``ObjectGraphError`` naming the entity and key — never a crash.
extension ManagedObject {
    func requireContext(_ key: String) throws -> ManagedObjectContext {
        guard let context = contextStorage else {
            if isUnknownEntityStandIn {
                throw ObjectGraphError(.unknownEntity, objectID: objectID, key: key, "the model has no entity \(objectID.entityName); cannot use '\(key)' of \(objectID)")
            }
            if isUninserted {
                throw ObjectGraphError(.objectInaccessible, objectID: objectID, key: key, "\(objectID) is not inserted in a context; insert(_:) it before using '\(key)'")
            }
            throw ObjectGraphError(.objectInaccessible, objectID: objectID, key: key, "\(objectID) is not in a context (deleted and saved, reset, or its context gone); cannot use '\(key)'")
        }
        try context.checkQueue("\(objectID).\(key)")
        return context
    }

    func property(_ key: String) throws -> EntityDescription.Property {
        guard let property = entity.property(named: key) else {
            throw ObjectGraphError(.unknownKey, objectID: objectID, key: key, "entity \(entity.name) has no property '\(key)' (it has \(entity.propertyNames.joined(separator: ", ")))")
        }
        return property
    }

    /// The value of a property: an attribute's Swift value (`nil` for none; transformables
    /// decoded), a to-one's object, a to-many's `Set<ManagedObject>` or, for ordered ones,
    /// `OrderedSet<ManagedObject>`. Fires the fault if needed.
    public func value(forKey key: String) throws -> Any? {
        if isUninserted { return try uninsertedValue(forKey: key) }
        let context = try requireContext(key)
        switch try property(key) {
        case .attribute(let attribute):
            try context.fulfillFaultForAccess(self)
            return try attribute.userValue(attributeValues[attribute.slot])
        case .relationship(let relationship):
            if relationship.isToMany {
                let members = try relatedObjects(relationship, context: context)
                return relationship.isOrdered ? OrderedSet(members) as Any : Set(members) as Any
            }
            try context.fulfillFaultForAccess(self)
            return toOneValues[relationship.slot].map(context.reachedObject)
        }
    }

    /// Sets a property, converting and checking the value against the model; relationship
    /// changes maintain inverses. To-many relationships take any sequence of objects. Setting
    /// the value a property already holds (identical: `-0.0` for `0.0`, or a canonically
    /// equivalent string, is a change) records nothing and leaves the object unchanged, where
    /// Core Data marks it updated and saves it again.
    public func setValue(_ value: Any?, forKey key: String) throws {
        if isUninserted { return try setUninsertedValue(value, forKey: key) }
        let context = try requireContext(key)
        switch try property(key) {
        case .attribute(let attribute):
            try context.setAttribute(self, attribute, try attribute.convert(value))
        case .relationship(let relationship):
            if relationship.isToMany {
                let objects = try Self.objects(in: value, key: key, entity: entity)
                try context.replaceToMany(self, relationship, with: objects)
            } else {
                if value == nil || value is NSNull {
                    try context.setToOne(self, relationship, nil)
                    return
                }
                guard let object = value as? ManagedObject else {
                    throw ObjectGraphError(.wrongValueType, objectID: objectID, key: key, "\(entity.name).\(key) is a to-one relationship; got \(type(of: value!))")
                }
                try context.setToOne(self, relationship, object)
            }
        }
    }

    static func objects(in value: Any?, key: String, entity: EntityDescription) throws -> [ManagedObject] {
        guard let value else { return [] }
        if let array = value as? [ManagedObject] { return array }
        if let set = value as? Set<ManagedObject> { return Array(set) }
        if let sequence = value as? any Sequence {
            var result: [ManagedObject] = []
            for element in sequence {
                guard let object = element as? ManagedObject else {
                    throw ObjectGraphError(.wrongValueType, key: key, "\(entity.name).\(key) is a to-many relationship; the collection holds a \(type(of: element))")
                }
                result.append(object)
            }
            return result
        }
        throw ObjectGraphError(.wrongValueType, key: key, "\(entity.name).\(key) is a to-many relationship; got \(type(of: value))")
    }

    func relatedObjects(_ relationship: RelationshipDescription, context: ManagedObjectContext) throws -> [ManagedObject] {
        try context.loadToManyIfNeeded(self, relationship)
        return (toManyStates[relationship.slot].members ?? []).map(context.reachedObject)
    }

    func requireRelationship(_ key: String, toMany: Bool) throws -> RelationshipDescription {
        guard case .relationship(let relationship) = try property(key), relationship.isToMany == toMany else {
            throw ObjectGraphError(.wrongValueType, objectID: objectID, key: key, "\(entity.name).\(key) is not a \(toMany ? "to-many" : "to-one") relationship")
        }
        return relationship
    }

    /// Adds `object` to the to-many relationship `key` (at the end of ordered ones).
    public func add(_ object: ManagedObject, to key: String) throws {
        let context = try requireContext(key)
        try context.addToMany(self, try requireRelationship(key, toMany: true), object)
    }

    /// Removes `object` from the to-many relationship `key`.
    public func remove(_ object: ManagedObject, from key: String) throws {
        let context = try requireContext(key)
        try context.removeFromToMany(self, try requireRelationship(key, toMany: true), object)
    }

    /// Inserts `object` at `index` of the ordered relationship `key` (moving it if present).
    public func insert(_ object: ManagedObject, at index: Int, in key: String) throws {
        let context = try requireContext(key)
        let relationship = try requireRelationship(key, toMany: true)
        guard relationship.isOrdered else {
            throw ObjectGraphError(.wrongValueType, objectID: objectID, key: key, "\(entity.name).\(key) is not ordered")
        }
        try context.addToMany(self, relationship, object, at: index)
    }

    /// Moves the member at `from` of the ordered relationship `key` to `to`.
    public func move(from: Int, to: Int, in key: String) throws {
        let context = try requireContext(key)
        let relationship = try requireRelationship(key, toMany: true)
        let members = try relatedObjects(relationship, context: context)
        guard relationship.isOrdered, members.indices.contains(from), members.indices.contains(to) else {
            throw ObjectGraphError(.wrongValueType, objectID: objectID, key: key, "cannot move \(from) → \(to) in \(entity.name).\(key) (\(members.count) members\(relationship.isOrdered ? "" : ", not ordered"))")
        }
        try context.moveToMany(self, relationship, members[from], to: to)
    }

    /// Replaces the member at `index` of the ordered relationship `key` with `object`.
    public func replace(at index: Int, with object: ManagedObject, in key: String) throws {
        let context = try requireContext(key)
        let relationship = try requireRelationship(key, toMany: true)
        var members = try relatedObjects(relationship, context: context)
        guard relationship.isOrdered, members.indices.contains(index) else {
            throw ObjectGraphError(.wrongValueType, objectID: objectID, key: key, "cannot replace index \(index) of \(entity.name).\(key)")
        }
        members[index] = object
        try context.replaceToMany(self, relationship, with: members)
    }
}
