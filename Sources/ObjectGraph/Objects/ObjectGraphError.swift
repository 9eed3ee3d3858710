/// An error in using objects, contexts or fetches: an unknown key, a wrong value type, an
/// object that no longer exists, a context used from the wrong thread.
///
/// The `code` is extensible; `objectID`, `key` and `underlying` say where and why.
public struct ObjectGraphError: Error, Sendable, CustomStringConvertible {
    /// The kind of error.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The numeric code.
        public let rawValue: Int
        /// Creates a code from its numeric value.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// The entity has no property with that name.
        public static let unknownKey = Code(rawValue: 100)
        /// A value does not fit the property's type.
        public static let wrongValueType = Code(rawValue: 101)
        /// The model has no entity with that name, or a class is bound to none.
        public static let unknownEntity = Code(rawValue: 102)
        /// The record behind an object ID does not exist (deleted, or never saved).
        public static let objectNotFound = Code(rawValue: 103)
        /// An object deleted and saved, or whose context is gone, was used.
        public static let objectInaccessible = Code(rawValue: 104)
        /// Objects from two different contexts were related, or an object was used with a
        /// context it does not belong to.
        public static let wrongContext = Code(rawValue: 105)
        /// A context or its objects were used off the context's queue.
        public static let concurrencyViolation = Code(rawValue: 106)
        /// An abstract entity cannot have objects of its own.
        public static let abstractEntity = Code(rawValue: 107)
        /// A fetch request is malformed (unknown key path, wrong operand types, …).
        public static let invalidFetch = Code(rawValue: 108)
        /// No store holds the entity, or the ID's store is not attached.
        public static let noStore = Code(rawValue: 109)
        /// A relationship was given an object of the wrong entity.
        public static let wrongDestination = Code(rawValue: 110)
        /// An object deleted in its context (the deletion not saved yet) was inserted again:
        /// undo or roll back the deletion to keep it, or insert a new object.
        public static let objectDeleted = Code(rawValue: 111)
        /// A save would store a relationship between objects of different stores.
        public static let crossStoreRelationship = Code(rawValue: 112)
        /// A validation hook inserted, deleted or changed an object the save had not listed,
        /// which the save would have lost: make such changes in `willSave()`.
        public static let changedDuringValidation = Code(rawValue: 113)
        /// An object was assigned to a store (``ManagedObjectContext/assign(_:to:)``) that is
        /// not newly inserted, or already has a permanent ID of another store.
        public static let notAssignable = Code(rawValue: 114)

        /// The code's name, for messages.
        public var description: String {
            switch self {
            case .unknownKey: return "unknownKey"
            case .wrongValueType: return "wrongValueType"
            case .unknownEntity: return "unknownEntity"
            case .objectNotFound: return "objectNotFound"
            case .objectInaccessible: return "objectInaccessible"
            case .wrongContext: return "wrongContext"
            case .concurrencyViolation: return "concurrencyViolation"
            case .abstractEntity: return "abstractEntity"
            case .invalidFetch: return "invalidFetch"
            case .noStore: return "noStore"
            case .wrongDestination: return "wrongDestination"
            case .objectDeleted: return "objectDeleted"
            case .crossStoreRelationship: return "crossStoreRelationship"
            case .changedDuringValidation: return "changedDuringValidation"
            case .notAssignable: return "notAssignable"
            default: return "code \(rawValue)"
            }
        }
    }

    /// The kind of error.
    public let code: Code
    /// The object concerned, when there is one.
    public let objectID: ObjectID?
    /// The property or key path concerned, when there is one.
    public let key: String?
    /// A sentence saying what happened and where.
    public let message: String
    /// The error that caused this one, when there is one.
    public let underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(
        _ code: Code, objectID: ObjectID? = nil, key: String? = nil, _ message: String,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.objectID = objectID
        self.key = key
        self.message = message
        self.underlying = underlying
    }

    /// "code: message".
    public var description: String { "\(code): \(message)" }
}
