import Foundation
import OrderedCollections

/// Validating on demand what a save validates (Core Data's `validateForInsert()`,
/// `validateForUpdate()`, `validateForDelete()` — declared, overridable, in ``ManagedObject``
/// — and `validateValue(_:forKey:)`): an editor can report a broken rule while the user types
/// instead of at save.
///
/// Each check throws one ``ValidationError`` holding every violation it finds, with the codes,
/// keys and messages a save would report; other errors (the object is in no context, its row
/// cannot be read) are thrown as they are. Uniqueness constraints are checked at save only:
/// they compare the save's objects with each other and with the store.
extension ManagedObject {
    /// What ``validateForInsert()`` and ``validateForUpdate()`` do unless overridden: checked
    /// on demand, every rule of the object; inside a save (whose own checks have already
    /// covered the object), the violations the save found for it, so that an override calling
    /// `super` first stops where Core Data's would, and nothing is reported twice.
    func validateWholeObject(_ operation: String) throws {
        if isAskedBySave { return try throwViolationsFoundBySave() }
        try validateObject(operation)
    }

    /// What ``validateForDelete()`` does unless overridden (see ``validateWholeObject(_:)``
    /// for a save): that no ``DeleteRule/deny`` relationship holds a live object.
    func validateWholeDeletion() throws {
        if isAskedBySave { return try throwViolationsFoundBySave() }
        let context = try requireContext("validateForDelete()")
        var validator = Validator(context: context)
        try validator.validateDeletion(self)
        if !validator.violations.isEmpty { throw ValidationError(violations: validator.violations) }
    }

    /// Checks `value` as the value of `key` without setting it: for an attribute, the value
    /// converted as ``setValue(_:forKey:)`` converts it (a value of the wrong type throws
    /// ``ObjectGraphError``), then its requiredness, width and rules; for a to-one, its
    /// requiredness; for a to-many (any sequence of objects), its member count. A relationship
    /// value ``setValue(_:forKey:)`` would refuse (not an object, or one of another entity or
    /// context) throws the same ``ObjectGraphError``. Then, if those
    /// pass and the class validates `key` itself (``validatedKeys``), its
    /// ``validate(_:forKey:)`` with the value as a save passes it (an attribute's converted; a
    /// to-many's members as a set, or an ordered set for an ordered one).
    public func validateValue(_ value: Any?, forKey key: String) throws {
        let context = try requireContext(key)
        var validator = Validator(context: context)
        let proposed: Any?
        switch try property(key) {
        case .attribute(let attribute):
            let converted = try attribute.convert(value)
            validator.validateValue(converted, of: attribute, in: self)
            proposed = try attribute.userValue(converted)
        case .relationship(let relationship) where relationship.isToMany:
            let members = try Self.objects(in: value is NSNull ? nil : value, key: key, entity: entity)
            // Members setValue(_:forKey:) would refuse (of another entity or context) are
            // refused here too: counted as they were, they passed, and a hook got them.
            for member in members { try context.checkDestination(member, for: relationship, of: self) }
            // Counted as the save counts (see Validator.storedCount): a member deleted in this
            // context is not stored, so it made a relationship look fuller than it would be.
            let live = members.filter { !$0.isDeletedStorage }
            validator.validateCount(Set(live.map(ObjectIdentifier.init)).count, of: relationship, in: self)
            // As value(forKey:) gives it, so a hook sees the shape a save passes it: an array
            // passed as is slipped past a hook casting to a set.
            proposed = relationship.isOrdered ? OrderedSet(members) as Any : Set(members) as Any
        case .relationship(let relationship):
            // Refused as setValue(_:forKey:) refuses it: anything but an object of the
            // destination entity in this context passed as a filled to-one.
            var destination: ManagedObject?
            if let value, !(value is NSNull) {
                guard let object = value as? ManagedObject else {
                    throw ObjectGraphError(.wrongValueType, objectID: objectID, key: key, "\(entity.name).\(key) is a to-one relationship; got \(type(of: value))")
                }
                try context.checkDestination(object, for: relationship, of: self)
                destination = object
            }
            validator.validateToOne(isEmpty: destination == nil, of: relationship, in: self)
            proposed = destination
        }
        if validator.violations.isEmpty && entity.customValidatedKeys.contains(key) {
            validator.validateCustom(self, key, proposed)
        }
        if !validator.violations.isEmpty { throw ValidationError(violations: validator.violations) }
    }

    private func validateObject(_ operation: String) throws {
        let context = try requireContext(operation)
        var validator = Validator(context: context)
        try validator.validateOne(self)
        if !validator.violations.isEmpty { throw ValidationError(violations: validator.violations) }
    }
}
