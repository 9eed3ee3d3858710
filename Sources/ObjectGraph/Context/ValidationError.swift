/// Every validation failure of one save, collected into one error.
///
/// Codes follow Core Data's (`NSValidation…Error`) so they can be looked up in its
/// documentation; each violation names the object, the key and the rule.
public struct ValidationError: Error, Sendable, CustomStringConvertible {
    /// A validation code (Core Data's numbering).
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The numeric code.
        public let rawValue: Int
        /// Creates a code from its numeric value.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// An object's own validation refused a value (1550, Core Data's
        /// `NSManagedObjectValidationError`): the error ``ManagedObject/validate(_:forKey:)``
        /// threw, when it was not a ``ValidationError``, is the violation's
        /// ``Violation/underlying`` error.
        public static let managedObjectValidation = Code(rawValue: 1550)
        /// A uniqueness constraint is violated (1551).
        public static let uniquenessConstraint = Code(rawValue: 1551)
        /// A required property is `nil` (1570).
        public static let missingMandatoryProperty = Code(rawValue: 1570)
        /// A to-many relationship has fewer members than its minimum (1580).
        public static let relationshipLacksMinimumCount = Code(rawValue: 1580)
        /// A to-many relationship has more members than its maximum (1590).
        public static let relationshipExceedsMaximumCount = Code(rawValue: 1590)
        /// A deny rule refused a delete (1600).
        public static let relationshipDeniedDelete = Code(rawValue: 1600)
        /// A number is above its maximum (1610).
        public static let numberTooLarge = Code(rawValue: 1610)
        /// A number is below its minimum (1620).
        public static let numberTooSmall = Code(rawValue: 1620)
        /// A date is after its latest allowed (1630).
        public static let dateTooLate = Code(rawValue: 1630)
        /// A date is before its earliest allowed (1640).
        public static let dateTooSoon = Code(rawValue: 1640)
        /// A date is invalid (1650).
        public static let invalidDate = Code(rawValue: 1650)
        /// A string is longer than its maximum (1660).
        public static let stringTooLong = Code(rawValue: 1660)
        /// A string is shorter than its minimum (1670).
        public static let stringTooShort = Code(rawValue: 1670)
        /// A string does not match its pattern (1680).
        public static let stringPatternMatching = Code(rawValue: 1680)

        /// The code's name and number.
        public var description: String {
            let name: String
            switch self {
            case .managedObjectValidation: name = "managedObjectValidation"
            case .uniquenessConstraint: name = "uniquenessConstraint"
            case .missingMandatoryProperty: name = "missingMandatoryProperty"
            case .relationshipLacksMinimumCount: name = "relationshipLacksMinimumCount"
            case .relationshipExceedsMaximumCount: name = "relationshipExceedsMaximumCount"
            case .relationshipDeniedDelete: name = "relationshipDeniedDelete"
            case .numberTooLarge: name = "numberTooLarge"
            case .numberTooSmall: name = "numberTooSmall"
            case .dateTooLate: name = "dateTooLate"
            case .dateTooSoon: name = "dateTooSoon"
            case .invalidDate: name = "invalidDate"
            case .stringTooLong: name = "stringTooLong"
            case .stringTooShort: name = "stringTooShort"
            case .stringPatternMatching: name = "stringPatternMatching"
            default: name = "validation"
            }
            return "\(name) \(rawValue)"
        }
    }

    /// One broken rule.
    public struct Violation: Sendable, CustomStringConvertible {
        /// The rule's code.
        public var code: Code
        /// The object that breaks it.
        public var objectID: ObjectID
        /// The property concerned; empty for a check of the whole object (an override of
        /// ``ManagedObject/validateForInsert()`` or its companions that threw another error).
        public var key: String
        /// What is wrong, in a sentence.
        public var message: String
        /// The error an object's own validation threw, for ``Code/managedObjectValidation``.
        public var underlying: (any Error & Sendable)?

        /// Creates a violation: for an object's own validation
        /// (``ManagedObject/validate(_:forKey:)``) to throw in a ``ValidationError``, with a
        /// code of its choice.
        public init(code: Code, objectID: ObjectID, key: String, message: String, underlying: (any Error & Sendable)? = nil) {
            self.code = code
            self.objectID = objectID
            self.key = key
            self.message = message
            self.underlying = underlying
        }

        /// "Entity/p1.key: message (code)", or "Entity/p1: message (code)" without a key.
        public var description: String { "\(objectID)\(key.isEmpty ? "" : ".\(key)"): \(message) (\(code))" }
    }

    /// Every violation found, in a stable order.
    public let violations: [Violation]

    /// Creates an error from violations.
    public init(violations: [Violation]) { self.violations = violations }

    /// The distinct codes present.
    public var codes: Set<Code> { Set(violations.map(\.code)) }

    /// Whether some violation has `code` on `key`.
    public func contains(_ code: Code, key: String? = nil) -> Bool {
        violations.contains { $0.code == code && (key == nil || $0.key == key) }
    }

    /// "validation failed (N problems): …".
    public var description: String {
        "validation failed (\(violations.count) problem\(violations.count == 1 ? "" : "s")): "
            + violations.map(\.description).joined(separator: "; ")
    }
}
