/// A model that cannot be used: it names the entity and property at fault.
///
/// Thrown when a ``ManagedObjectModel`` is built and checks itself (inverses that disagree,
/// unknown destinations, duplicate names, bad defaults, rules or constraints, abstract
/// entities nothing can instantiate), and by stores that find a model that does not match
/// what they hold.
public struct ModelError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem the model has.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The numeric code.
        public let rawValue: Int
        /// Creates a code from its numeric value.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Two entities, or two properties of one entity (inherited ones included), share a name.
        public static let duplicateName = Code(rawValue: 1)
        /// A relationship names a destination entity the model does not have.
        public static let unknownDestination = Code(rawValue: 2)
        /// A relationship names an inverse the destination does not have.
        public static let unknownInverse = Code(rawValue: 3)
        /// A relationship and its inverse do not point back at each other.
        public static let inverseMismatch = Code(rawValue: 4)
        /// An entity names a parent entity the model does not have, or inheritance forms a cycle.
        public static let unknownParent = Code(rawValue: 5)
        /// A default value does not fit its attribute's type, or breaks the attribute's own rules.
        public static let invalidDefault = Code(rawValue: 6)
        /// A validation rule does not fit its attribute (a bad regex, a length rule on a number),
        /// or the rules contradict themselves (a minimum above the maximum, a negative length,
        /// a NaN bound).
        public static let invalidRule = Code(rawValue: 7)
        /// A relationship joins entities that live in different stores (configurations).
        public static let crossStoreRelationship = Code(rawValue: 8)
        /// A name is empty, reserved or otherwise unusable.
        public static let invalidName = Code(rawValue: 9)
        /// A count constraint is impossible (min greater than max, a count on a to-one).
        public static let invalidCount = Code(rawValue: 10)
        /// A configuration names an entity the model does not have.
        public static let unknownEntity = Code(rawValue: 11)
        /// A store holds data for a different model.
        public static let incompatibleModel = Code(rawValue: 12)
        /// A uniqueness constraint or an index cannot be enforced: it names no attribute, the
        /// same attribute twice, or a transient attribute (which no store holds).
        public static let invalidConstraint = Code(rawValue: 13)
        /// An abstract entity has no sub-entities, so it can never have an object.
        public static let abstractWithoutSubentities = Code(rawValue: 14)
        /// A class bound to an entity names, in ``ManagedObject/validatedKeys``, a property the
        /// entity does not have; or a uniqueness constraint names an attribute it does not have.
        public static let unknownProperty = Code(rawValue: 15)
        /// A store description names a configuration the model does not have.
        public static let unknownConfiguration = Code(rawValue: 16)

        /// The code's name, for messages.
        public var description: String {
            switch self {
            case .duplicateName: return "duplicateName"
            case .unknownDestination: return "unknownDestination"
            case .unknownInverse: return "unknownInverse"
            case .inverseMismatch: return "inverseMismatch"
            case .unknownParent: return "unknownParent"
            case .invalidDefault: return "invalidDefault"
            case .invalidRule: return "invalidRule"
            case .crossStoreRelationship: return "crossStoreRelationship"
            case .invalidName: return "invalidName"
            case .invalidCount: return "invalidCount"
            case .unknownEntity: return "unknownEntity"
            case .incompatibleModel: return "incompatibleModel"
            case .invalidConstraint: return "invalidConstraint"
            case .abstractWithoutSubentities: return "abstractWithoutSubentities"
            case .unknownProperty: return "unknownProperty"
            case .unknownConfiguration: return "unknownConfiguration"
            default: return "code \(rawValue)"
            }
        }
    }

    /// What kind of problem the model has.
    public let code: Code
    /// The entity at fault, when there is one.
    public let entity: String?
    /// The property at fault, when there is one.
    public let property: String?
    /// A sentence saying what is wrong.
    public let message: String

    /// Creates a model error.
    public init(_ code: Code, entity: String? = nil, property: String? = nil, _ message: String) {
        self.code = code
        self.entity = entity
        self.property = property
        self.message = message
    }

    /// "model error (code) at Entity.property: message".
    public var description: String {
        var place = entity ?? ""
        if let property { place += place.isEmpty ? property : ".\(property)" }
        return "model error (\(code))" + (place.isEmpty ? "" : " at \(place)") + ": \(message)"
    }
}
