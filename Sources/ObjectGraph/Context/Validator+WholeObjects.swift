/// The classes' own checks of whole objects at save: Core Data's `validateForInsert()`,
/// `validateForUpdate()` and `validateForDelete()`, which a subclass overrides to check what
/// no single property's rule can (a value that depends on another, a deletion the model
/// allows but the application does not).
///
/// Core Data's save calls these on every changed object, and their `super` implementations
/// are its checks of the properties. Here the save has checked every object's properties
/// already, in one pass, so the methods are called afterwards, on objects of bound classes
/// only (an unbound object cannot override them), with what the save found about each object
/// lent to `super` (see ``ManagedObject/isAskedBySave``): an override calling `super`
/// first stops at an object whose properties are broken, as in Core Data, before reading a
/// missing value, and no violation is reported twice.
extension Validator {
    mutating func validateWholeObjects(_ objects: [ManagedObject], deleted: [ManagedObject]) {
        let link = context.link
        // (Found violations are grouped only when there are some: a save's usual case is
        // none, and each object's `super` then looks at an empty table.)
        if !violations.isEmpty {
            var found: [ObjectID: [ValidationError.Violation]] = [:]
            for violation in violations { found[violation.objectID, default: []].append(violation) }
            link.violationsFoundBySave = found
        }
        link.isAskingWholeObjects = true
        defer {
            link.isAskingWholeObjects = false
            link.violationsFoundBySave = [:]
        }
        // Called directly, each in its own `do`: a generic helper taking the call as a closure
        // cost as much again per object as the call (callgrind, a 20,000-object insert).
        objects.forEachUnretained { object in
            guard object.entity.hasBoundClass else { return }
            if object.isInsertedStorage {
                do { try object.validateForInsert() } catch { collect(error, of: object, "validateForInsert()") }
            } else {
                do { try object.validateForUpdate() } catch { collect(error, of: object, "validateForUpdate()") }
            }
        }
        deleted.forEachUnretained { object in
            // An inaccessible fault the context deleted has no record left to keep.
            guard object.entity.hasBoundClass, !object.isVanishedStorage else { return }
            do { try object.validateForDelete() } catch { collect(error, of: object, "validateForDelete()") }
        }
    }

    /// Collects what `object`'s whole-object check `method` threw that the save has not
    /// reported already.
    private mutating func collect(_ error: any Error, of object: ManagedObject, _ method: String) {
        if let error = error as? ValidationError, !error.violations.isEmpty {
            let known = context.link.violationsFoundBySave[object.objectID] ?? []
            for violation in error.violations where !known.contains(where: { Self.same($0, violation) }) {
                violations.append(violation)
            }
            return
        }
        // A ValidationError without violations included: a refusal with nothing to report
        // must not pass as no refusal.
        violations.append(.init(
            code: .managedObjectValidation, objectID: object.objectID, key: "",
            message: "\(object.objectID) was refused by \(type(of: object)).\(method): \(error)",
            underlying: error))
    }

    /// Whether two violations report the same thing (one the save found, thrown back by `super`).
    private static func same(_ a: ValidationError.Violation, _ b: ValidationError.Violation) -> Bool {
        a.code == b.code && a.objectID == b.objectID && a.key == b.key && a.message == b.message
    }
}
