import Foundation
import OrderedCollections

/// Objects not inserted yet: as in Core Data, `init(entity:insertInto: nil)` makes an object
/// that belongs to no context but holds attribute values — its entity's defaults, then what is
/// set — which ``ManagedObjectContext/insert(_:)`` keeps. (Until 2026-11-28 reading one stopped
/// the process and setting a value stopped it too, so an object could not be filled in before
/// choosing its context.)
///
/// Relationships exist only within a context: an object not inserted reads none (a to-one
/// `nil`, a to-many no members) and setting one is refused — thrown by ``setValue(_:forKey:)``,
/// stopping a typed setter — as Core Data refuses relating objects of different contexts.
/// Insert it, then relate it.
///
/// The values are given lazily, at the first access, not by the initializer: the framework
/// makes every fault through that same initializer, and a fault must not pay for defaults it
/// is about to replace.
extension ManagedObject {
    /// Gives an object not inserted yet its entity's default values, once.
    final func materializeUninsertedValues() {
        guard isFaultStorage else { return }
        attributeValues = AttributeValues(entity.defaultValues)
        toOneValues = ToOneValues(repeating: nil, count: entity.toOneRelationships.count)
        isFaultStorage = false
    }

    /// Turns an object the framework is making into a fault or a key-path probe's prototype
    /// back into a fault: an initializer override set a value, which gave it values. (Out of
    /// line: the fault path only tests for it.)
    @inline(never)
    static func refault(_ object: ManagedObject) {
        object.turnIntoFault()
    }

    /// An attribute's stored value on an object not inserted yet.
    final func uninsertedAttribute(_ attribute: AttributeDescription) -> AttributeValue {
        materializeUninsertedValues()
        return attributeValues[attribute.slot]
    }

    /// Sets an attribute of an object not inserted yet, checked as a context checks it
    /// (`lenient` as there), and notes it as set: once inserted, the object reports it among
    /// its changed values, and a merge policy resolving a uniqueness conflict of the insert
    /// takes it, as it takes values set after the insert.
    final func setUninsertedAttribute(_ attribute: AttributeDescription, _ value: AttributeValue, lenient: Bool) throws {
        let checked = try attribute.check(value, lenient: lenient)
        materializeUninsertedValues()
        attributeValues[attribute.slot] = checked
        changedAttributeSlots.insert(attribute.slot)
    }

    /// ``value(forKey:)`` on an object not inserted yet.
    final func uninsertedValue(forKey key: String) throws -> Any? {
        switch try property(key) {
        case .attribute(let attribute):
            return try attribute.userValue(uninsertedAttribute(attribute))
        case .relationship(let relationship):
            guard relationship.isToMany else { return nil }
            return relationship.isOrdered ? OrderedSet<ManagedObject>() as Any : Set<ManagedObject>() as Any
        }
    }

    /// ``setValue(_:forKey:)`` on an object not inserted yet: attributes are set; a
    /// relationship only to none (which it already is).
    final func setUninsertedValue(_ value: Any?, forKey key: String) throws {
        switch try property(key) {
        case .attribute(let attribute):
            try setUninsertedAttribute(attribute, try attribute.convert(value), lenient: false)
        case .relationship(let relationship):
            if relationship.isToMany {
                guard try Self.objects(in: value, key: key, entity: entity).isEmpty else { throw uninsertedRelationshipError(relationship) }
            } else if let value, !(value is NSNull) {
                guard value is ManagedObject else {
                    throw ObjectGraphError(.wrongValueType, objectID: objectID, key: key, "\(entity.name).\(key) is a to-one relationship; got \(type(of: value))")
                }
                throw uninsertedRelationshipError(relationship)
            }
        }
    }

    /// Why a relationship of an object not inserted yet cannot be set.
    final func uninsertedRelationshipError(_ relationship: RelationshipDescription) -> ObjectGraphError {
        ObjectGraphError(
            .wrongContext, objectID: objectID, key: relationship.name,
            "cannot set \(objectID).\(relationship.name): the object is not inserted in a context, and relationships are kept by one; insert(_:) it first")
    }
}
