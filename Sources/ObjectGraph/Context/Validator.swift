import Foundation

/// Checks a context's pending changes before they may be saved: required properties, attribute
/// rules, relationship counts, and deny rules of deleted objects. Every violation is collected.
struct Validator {
    let context: ManagedObjectContext
    var violations: [ValidationError.Violation] = []
    /// Uniqueness conflicts the merge policy may resolve (see ``UniquenessConflict``); empty
    /// under ``MergePolicy/error``, where each is a violation instead.
    var uniquenessConflicts: [UniquenessConflict] = []

    init(context: ManagedObjectContext) { self.context = context }

    mutating func validate(changed objects: [ManagedObject], deleted: [ManagedObject]) throws {
        try objects.forEachUnretained { try validate($0) }
        // (Skipped in a model without deny rules: looking at every deleted object's entity
        // for its empty list retained and released the entity per object of a cascade.)
        if context.model.hasDenyRules { try deleted.forEachUnretained { try validateDeny($0) } }
        // (Skipped when no entity has a class of its own: only such a class can override the
        // checks, and asking every object of a bulk insert would cost a call each.)
        if context.model.hasBoundClasses { validateWholeObjects(objects, deleted: deleted) }
        // (Skipped without constraints: walking every saved object's entity for its empty
        // constraint list retained both, a tenth of validating a bulk insert, perf.)
        // A child's save into its parent checks no constraint, as in Core Data, where the
        // coordinator enforces them when the root context saves to the store: the root's
        // merge policy then resolves what the child inserted. Checked here, under the child's
        // own policy (the error policy by default), an upsert made in a child failed at the
        // child's save, and two siblings inserting one value failed at the second's save,
        // before the root's policy could merge them.
        if context.model.hasUniquenessConstraints && context.parentStorage == nil { try validateUniqueness(objects) }
    }

    /// Uniqueness constraints (code 1551): no two live objects — unsaved ones in this context,
    /// or stored ones not deleted or changed here — may share the constrained values. Run by
    /// a root context's save only (see `validate(changed:deleted:)`).
    private mutating func validateUniqueness(_ objects: [ManagedObject]) throws {
        var seen: [UniquenessKey: ManagedObject] = [:]
        for object in objects where !object.isFaultStorage {
            for constraint in object.entity.uniquenessConstraints {
                guard let probe = UniquenessProbe(constraint, of: object.entity, values: { object.attributeValues[$0] }, in: context.model) else { continue }
                // The values themselves, compared as the stores compare them (`==`: 0.0 and
                // -0.0 collide, NaN never does), not their descriptions: those round a date to
                // the second and show data as its length, so two new objects with dates a
                // fraction of a second apart, or different data of one length, were refused,
                // and 0.0 and -0.0 passed together though the store refuses the second (an audit).
                let key = UniquenessKey(root: object.entity.rootName, constraint: constraint, values: probe.values)
                if let other = seen[key] {
                    conflict(object, other, probe.key, "\(object.objectID) and \(other.objectID) share \(probe.valuesDescription)")
                    continue
                }
                seen[key] = object
                context.statisticsStorage.storeRoundTrips += 1
                let stored = try context.coordinator.fetch(probe.request).ids
                for id in stored where id != object.objectID {
                    // Stored rows deleted or changed in this context are judged by their new state.
                    if context.isDeletedHere(id) || context.updatedStorage[id] != nil { continue }
                    let context = context
                    conflict(object, context.registeredOrFault(id), probe.key, "\(object.objectID) has \(probe.valuesDescription), already used by \(id)")
                    break
                }
            }
        }
    }

    /// A collision of `object` with `other` (a stored row, or an object before it in the save):
    /// a conflict for the merge policy when `object` is inserted and the policy resolves
    /// conflicts, else a violation (a changed stored object is never merged away: that would
    /// delete a stored row).
    /// (`other` is made only for a conflict: a violation registers no object for the row.)
    private mutating func conflict(_ object: ManagedObject, _ other: @autoclosure () -> ManagedObject, _ key: String, _ message: String) {
        let violation = ValidationError.Violation(code: .uniquenessConstraint, objectID: object.objectID, key: key, message: message)
        if context.mergePolicyStorage != .error && object.isInsertedStorage {
            uniquenessConflicts.append(UniquenessConflict(object: object, survivor: other(), violation: violation))
        } else {
            violations.append(violation)
        }
    }

    /// Two unsaved objects collide when their keys are equal.
    private struct UniquenessKey: Hashable {
        var root: String
        var constraint: [String]
        var values: [AttributeValue]
    }

    private mutating func add(_ code: ValidationError.Code, _ object: ManagedObject, _ key: String, _ message: String) {
        violations.append(.init(code: code, objectID: object.objectID, key: key, message: message))
    }

    private mutating func validate(_ object: ManagedObject) throws {
        let entity = object.entity
        let start = violations.count
        // The plan's parts are read where used: a copy of the plan retained its three arrays
        // per object (uprobe count).
        if !object.isFaultStorage {
            for check in entity.validationPlan.attributes {
                if check.presenceOnly && !object.attributeValues[check.slot].isNull { continue }
                validate(entity.attributes[check.slot], object.attributeValues[check.slot], of: object)
            }
            for slot in entity.validationPlan.requiredToOneSlots where object.toOneValues[slot] == nil {
                let relationship = entity.toOneRelationships[slot]
                add(.missingMandatoryProperty, object, relationship.name, "\(entity.name).\(relationship.name) is required but empty")
            }
        }
        validateReferences(of: object)
        for relationship in entity.validationPlan.countedToManys {
            // A fault with no recorded change still holds what the store validated before.
            if object.toManyStates[relationship.slot].isFault && !object.toManyStates[relationship.slot].hasChanges && !object.isInsertedStorage { continue }
            try context.loadToManyIfNeeded(object, relationship)
            validateCount(storedCount(of: object.toManyStates[relationship.slot].members ?? []), of: relationship, in: object)
        }
        if !entity.customValidatedKeys.isEmpty {
            // A fault here has membership changes recorded through an inverse (its own values
            // are as saved): its class validates it as it would the loaded object, so its
            // values are loaded. Skipping it passed an update its hook refuses once loaded.
            // A row gone from the store is left to the save, which reports it as a conflict.
            do {
                try context.fulfillFaultIfNeeded(object)
            } catch let error as ObjectGraphError where error.code == .objectNotFound {
                return
            }
            for key in entity.customValidatedKeys {
                // After the model's rules, and only if they passed: one broken key, one report.
                if violations[start...].contains(where: { $0.key == key && $0.objectID == object.objectID }) { continue }
                validateCustom(object, key, try object.value(forKey: key))
            }
        }
    }

    /// Asks `object`'s own validation (``ManagedObject/validate(_:forKey:)``) about `value`,
    /// collecting what it throws.
    mutating func validateCustom(_ object: ManagedObject, _ key: String, _ value: Any?) {
        do {
            try object.validate(value, forKey: key)
        } catch let error as ValidationError where !error.violations.isEmpty {
            violations.append(contentsOf: error.violations)
        } catch {
            // Any other error, a ValidationError without violations included: the hook refused
            // the value, and a refusal with nothing to report must not pass as no refusal.
            violations.append(.init(code: .managedObjectValidation, objectID: object.objectID, key: key,
                                    message: "\(object.entity.name).\(key) was refused by \(type(of: object)).validate(_:forKey:): \(error)",
                                    underlying: error))
        }
    }

    /// A to-many's member count against its minimum (required counts as one) and maximum.
    /// "1 member", "3 members": a count as a violation's message says it.
    static func members(_ count: Int) -> String { count == 1 ? "1 member" : "\(count) members" }

    mutating func validateCount(_ count: Int, of relationship: RelationshipDescription, in object: ManagedObject) {
        let entity = object.entity
        let minimum = max(relationship.minCount, relationship.isOptional ? 0 : 1)
        // As in Core Data, an optional relationship may be empty whatever its minimum.
        if count < minimum && !(relationship.isOptional && count == 0) {
            if relationship.minCount == 0 {
                add(.missingMandatoryProperty, object, relationship.name, "\(entity.name).\(relationship.name) is required but empty")
            } else {
                add(.relationshipLacksMinimumCount, object, relationship.name, "\(entity.name).\(relationship.name) has \(Self.members(count)); at least \(minimum) required")
            }
        }
        if let maximum = relationship.maxCount, count > maximum {
            add(.relationshipExceedsMaximumCount, object, relationship.name, "\(entity.name).\(relationship.name) has \(Self.members(count)); at most \(maximum) allowed")
        }
    }

    // MARK: One object on demand (ManagedObject+Validation)

    /// `object`'s own checks as a save makes them, its fault fired first. Uniqueness is left
    /// to the save: it compares the save's objects with each other and the store.
    mutating func validateOne(_ object: ManagedObject) throws {
        try context.fulfillFaultIfNeeded(object)
        try validate(object)
    }

    /// Whether `object` may be deleted now: its deny relationships hold no live object.
    mutating func validateDeletion(_ object: ManagedObject) throws {
        try validateDeny(object)
    }

    /// `value` against `attribute`'s requiredness, integer width and rules, for `object`.
    mutating func validateValue(_ value: AttributeValue, of attribute: AttributeDescription, in object: ManagedObject) {
        validate(attribute, value, of: object)
    }

    /// A to-one's requiredness, for a prospective destination.
    mutating func validateToOne(isEmpty: Bool, of relationship: RelationshipDescription, in object: ManagedObject) {
        guard isEmpty, !relationship.isOptional else { return }
        add(.missingMandatoryProperty, object, relationship.name, "\(object.entity.name).\(relationship.name) is required but empty")
    }

    private mutating func validate(_ attribute: AttributeDescription, _ value: AttributeValue, of object: ManagedObject) {
        // Built only for a message: eagerly, naming every attribute of every saved object was
        // two fifths of validating a bulk insert (perf).
        var name: String { "\(object.entity.name).\(attribute.name)" }
        if value.isNull {
            if !attribute.isOptional {
                add(.missingMandatoryProperty, object, attribute.name, "\(name) is required but nil")
            }
            return
        }
        if case .integer(let v) = value, let range = attribute.type.integerRange, !range.contains(v) {
            add(v > range.upperBound ? .numberTooLarge : .numberTooSmall, object, attribute.name,
                "\(name) is \(v), which does not fit a \(attribute.type.rawValue) attribute")
        }
        var patternIndex = 0
        for rule in attribute.rules {
            switch (rule, value) {
            // A NaN is at or above no minimum and at or below no maximum: tested as `< bound`
            // and `> bound` it passed every range rule and was saved.
            case (.minimum(let bound), _):
                if Self.isBelow(value, bound) == true, let number = Self.number(value) {
                    add(.numberTooSmall, object, attribute.name, "\(name) is \(value), \(number.isNaN ? "not a number, so not at or above" : "below") the minimum \(bound)")
                }
            case (.maximum(let bound), _):
                if Self.isAbove(value, bound) == true, let number = Self.number(value) {
                    add(.numberTooLarge, object, attribute.name, "\(name) is \(value), \(number.isNaN ? "not a number, so not at or below" : "above") the maximum \(bound)")
                }
            case (.minLength(let bound), .string(let s)):
                if s.count < bound { add(.stringTooShort, object, attribute.name, "\(name) has \(s.count) characters; at least \(bound) required") }
            case (.maxLength(let bound), .string(let s)):
                if s.count > bound { add(.stringTooLong, object, attribute.name, "\(name) has \(s.count) characters; at most \(bound) allowed") }
            case (.pattern(let pattern), .string(let s)):
                if !attribute.patterns[patternIndex].matchesWhole(s) {
                    add(.stringPatternMatching, object, attribute.name, "\(name) value \"\(s)\" does not match \(pattern)")
                }
                patternIndex += 1
            case (.earliest(let bound), .date(let d)):
                if Self.isBefore(d, bound) { add(.dateTooSoon, object, attribute.name, "\(name) is \(Self.shown(d)), before \(bound.formatted(.iso8601))") }
            case (.latest(let bound), .date(let d)):
                if Self.isAfter(d, bound) { add(.dateTooLate, object, attribute.name, "\(name) is \(Self.shown(d)), after \(bound.formatted(.iso8601))") }
            default:
                if case .pattern = rule { patternIndex += 1 }
            }
        }
    }

    /// `date` for a message; one whose interval is NaN (before and after no bound) would show
    /// as a date of 4713 BC.
    static func shown(_ date: Date) -> String {
        date.timeIntervalSinceReferenceDate.isNaN ? "not a date (its interval is NaN)" : date.formatted(.iso8601)
    }

    /// Whether `value` is below a minimum of `bound` (a NaN is at or above nothing); `nil` for
    /// a value that is not a number. An integer is compared exactly: as a `Double`, 2^53 + 1
    /// rounds to 2^53 and passed a maximum of 2^53 (an Int64 beyond 2^53 loses its last bits).
    static func isBelow(_ value: AttributeValue, _ bound: Double) -> Bool? {
        // For an integer v, v < bound exactly when v < bound rounded up.
        if case .integer(let v) = value, let exact = exactInteger(bound, .up) { return v < exact }
        if case .decimal(let v) = value, !v.isNaN, let exact = exactDecimal(bound) { return v < exact }
        return number(value).map { !($0 >= bound) }
    }

    /// Whether `value` is above a maximum of `bound` (see ``isBelow(_:_:)``).
    static func isAbove(_ value: AttributeValue, _ bound: Double) -> Bool? {
        if case .integer(let v) = value, let exact = exactInteger(bound, .down) { return v > exact }
        if case .decimal(let v) = value, !v.isNaN, let exact = exactDecimal(bound) { return v > exact }
        return number(value).map { !($0 <= bound) }
    }

    /// Whether `date` is before an earliest of `bound`, a NaN date being at or after nothing.
    /// Compared by interval: Date's `>=` is `!(<)`, which holds for a NaN. The model's check
    /// of a default reads this too, so a default it admits is one every save admits.
    static func isBefore(_ date: Date, _ bound: Date) -> Bool {
        !(date.timeIntervalSinceReferenceDate >= bound.timeIntervalSinceReferenceDate)
    }

    /// Whether `date` is after a latest of `bound` (see ``isBefore(_:_:)``).
    static func isAfter(_ date: Date, _ bound: Date) -> Bool {
        !(date.timeIntervalSinceReferenceDate <= bound.timeIntervalSinceReferenceDate)
    }

    /// `bound` as the decimal number its shortest description writes (`0.3`, not the binary
    /// 0.2999…): a decimal attribute's value is compared with that, exactly, where converted
    /// to a `Double` 0.30000000000000000001 passed a maximum of 0.3. `nil` for a NaN or
    /// infinite bound. (A decimal NaN is judged as a Double NaN is: outside every range.)
    private static func exactDecimal(_ bound: Double) -> Decimal? {
        guard bound.isFinite else { return nil }
        return Decimal(string: "\(bound)", locale: posix)
    }

    /// Descriptions of numbers always use "." (made once: making a locale is not cheap, and
    /// this one is read for every decimal a range rule checks).
    private static let posix = Locale(identifier: "en_US_POSIX")

    /// `bound` rounded to an integer, when that fits an Int64; beyond, every Int64 is on one
    /// side of it, which the `Double` comparison gets right.
    private static func exactInteger(_ bound: Double, _ rule: FloatingPointRoundingRule) -> Int64? {
        bound.isFinite ? Int64(exactly: bound.rounded(rule)) : nil
    }

    static func number(_ value: AttributeValue) -> Double? {
        switch value {
        case .integer(let v): return Double(v)
        case .double(let v): return v
        case .decimal(let v): return NSDecimalNumber(decimal: v).doubleValue
        default: return nil
        }
    }

    private mutating func validateDeny(_ object: ManagedObject) throws {
        // An inaccessible fault the context deleted is exempt: it has no record to keep.
        guard !object.isVanishedStorage else { return }
        for relationship in object.entity.deletePlan.denying {
            let blocking = try context.destinations(of: object, relationship).filter { !$0.isDeletedStorage }
            if !blocking.isEmpty {
                let names = blocking.prefix(3).map { $0.objectID.description }.joined(separator: ", ")
                add(.relationshipDeniedDelete, object, relationship.name,
                    "cannot delete \(object.objectID): \(object.entity.name).\(relationship.name) has a deny rule and still holds \(blocking.count) object\(blocking.count == 1 ? "" : "s") (\(names))")
            }
        }
    }
}
