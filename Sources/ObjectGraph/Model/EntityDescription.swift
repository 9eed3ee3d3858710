/// An entity of the model: its attributes and relationships (inherited ones first), its place
/// in an inheritance hierarchy, and the class its objects are instances of.
///
/// Property names are resolved to slots once, here; everything at run time works by slot.
public final class EntityDescription: Sendable, CustomStringConvertible {
    /// A property found by name: an attribute or a relationship.
    public enum Property: Sendable {
        /// An attribute.
        case attribute(AttributeDescription)
        /// A relationship.
        case relationship(RelationshipDescription)

        /// Whether the property is transient (kept in memory, never stored).
        public var isTransient: Bool {
            switch self {
            case .attribute(let attribute): return attribute.isTransient
            case .relationship(let relationship): return relationship.isTransient
            }
        }
    }

    /// The entity's name, unique in its model.
    public let name: String
    /// Position in ``ManagedObjectModel/entities``.
    public let index: Int
    /// The parent entity's name, for sub-entities.
    public let parentName: String?
    /// The root of the entity's hierarchy (itself when it has no parent). Primary keys are
    /// unique per root, so objects of sibling sub-entities never share a key.
    public let rootName: String
    /// Abstract entities have no instances of their own, only of their sub-entities.
    public let isAbstract: Bool
    /// All attributes, inherited first; `attributes[a.slot] === a`.
    public let attributes: [AttributeDescription]
    /// All relationships, inherited first.
    public let relationships: [RelationshipDescription]
    /// To-one relationships by slot.
    public let toOneRelationships: [RelationshipDescription]
    /// To-many relationships by slot.
    public let toManyRelationships: [RelationshipDescription]
    /// The names of direct sub-entities.
    public let subentityNames: [String]
    /// This entity and every entity below it.
    public let hierarchyNames: Set<String>
    /// The configurations (stores) the entity belongs to, besides the default one.
    public let configurations: Set<String>
    /// Property-name sets that must be unique across the entity's objects: its own and its
    /// parent entity's (a sub-entity's objects are its parent's objects too).
    public let uniquenessConstraints: [[String]]
    /// A stable hash of the entity's stored shape; two models with equal hashes can share a store.
    /// As Core Data's, it covers the name, the hierarchy, the abstract flag and each stored
    /// property (an attribute's type and optionality; a relationship's destination, cardinality,
    /// order and inverse); transient properties, indexes, rules and delete rules are left out.
    public let versionHash: String
    /// The properties by name, for an entity of more than ``linearSearchLimit`` of them.
    private let propertiesByName: [String: Property]
    /// The properties in slot order, attributes first, for ``property(named:)``'s linear
    /// search of a small entity (see there).
    private let propertyList: [(name: String, property: Property)]
    /// Each attribute's default value, by slot: a new object's values start as this array,
    /// shared until its first change.
    let defaultValues: [AttributeValue]
    /// The interned name carried by this entity's ``ObjectID``s.
    let nameToken: UInt32
    /// The interned names of ``hierarchyNames``.
    let hierarchyTokens: Set<UInt32>
    private let classBox: ClassBox
    /// What deleting one of the entity's objects involves (see ``DeletePlan``).
    let deletePlan: DeletePlan
    /// What validating one of the entity's objects checks (see ``ValidationPlan``).
    let validationPlan: ValidationPlan
    /// The names of the properties the bound class validates itself
    /// (``ManagedObject/validatedKeys``), in slot order, attributes first: read from the class
    /// once, here, so a save of objects whose class validates nothing asks nothing of it.
    let customValidatedKeys: [String]
    /// Whether the entity's objects are of a class of their own, which may override
    /// ``ManagedObject/validateForInsert()`` and its companions: a save asks only those.
    let hasBoundClass: Bool
    /// Slots of the transient attributes and to-ones, which a saved row leaves empty: found
    /// once, where a save walked (and retained) every property of each saved object to find
    /// them (almost always none).
    let transientAttributeSlots: [Int]
    let transientToOneSlots: [Int]
    /// The stored to-ones without an inverse, which a save checks name a stored row (see
    /// `checkOneWayToOnes`): found once, where that check filtered each saved object's to-ones.
    let oneWayToOnes: [RelationshipDescription]
    /// One fault state per to-many relationship: the list every new object and fault starts
    /// with, shared until its first change copies it (see `ManagedObject.init`).
    let faultToManyStates: [ToManyState]
    /// What `@Attribute` / `@Relationship` wrappers resolve to, per declaration.
    let attributeWrappers = WrapperResolutionCache<AttributeDescription>()
    let relationshipWrappers = WrapperResolutionCache<RelationshipDescription>()

    init(
        name: String, index: Int, parentName: String?, rootName: String, isAbstract: Bool,
        attributes: [AttributeDescription], relationships: [RelationshipDescription],
        subentityNames: [String], hierarchyNames: Set<String>, hierarchyTokens: Set<UInt32>, configurations: Set<String>,
        uniquenessConstraints: [[String]], versionHash: String, managedClass: ManagedObject.Type
    ) {
        self.name = name
        self.nameToken = InternedNames.shared.token(for: name)
        self.index = index
        self.parentName = parentName
        self.rootName = rootName
        self.isAbstract = isAbstract
        self.attributes = attributes
        self.defaultValues = attributes.map { $0.defaultValue }
        self.relationships = relationships
        self.toOneRelationships = relationships.filter { !$0.isToMany }
        self.toManyRelationships = relationships.filter { $0.isToMany }
        self.faultToManyStates = Array(repeating: .fault, count: toManyRelationships.count)
        self.deletePlan = DeletePlan(relationships)
        self.validationPlan = ValidationPlan(attributes: attributes, relationships: relationships)
        self.transientAttributeSlots = attributes.filter(\.isTransient).map(\.slot)
        self.transientToOneSlots = relationships.filter { !$0.isToMany && $0.isTransient }.map(\.slot)
        self.oneWayToOnes = relationships.filter { !$0.isToMany && !$0.hasInverse && !$0.isTransient }
        self.subentityNames = subentityNames
        self.hierarchyNames = hierarchyNames
        self.hierarchyTokens = hierarchyTokens
        self.configurations = configurations
        self.uniquenessConstraints = uniquenessConstraints
        self.versionHash = versionHash
        let list: [(name: String, property: Property)] = attributes.map { ($0.name, .attribute($0)) } + relationships.map { ($0.name, .relationship($0)) }
        self.propertyList = list
        // (Only an entity too large for the linear search needs the table.)
        self.propertiesByName = list.count <= Self.linearSearchLimit ? [:] : Dictionary(list, uniquingKeysWith: { _, last in last })
        self.classBox = ClassBox(managedClass)
        self.hasBoundClass = managedClass != ManagedObject.self
        let validated = managedClass.validatedKeys
        // (Names the entity lacks are refused by the model: see ManagedObjectModel.init.)
        self.customValidatedKeys = validated.isEmpty ? [] : list.map(\.name).filter(validated.contains)
    }

    /// The class instantiated for this entity's objects (``ManagedObject`` unless bound).
    public var managedClass: ManagedObject.Type { classBox.type }

    /// The attribute or relationship named `name`, inherited ones included.
    public func property(named name: String) -> Property? {
        // Most entities have a handful of properties with short names, which Swift keeps
        // inline: comparing such a name with each is cheaper than hashing it once.
        if propertyList.count <= Self.linearSearchLimit {
            for entry in propertyList where entry.name == name { return entry.property }
            return nil
        }
        return propertiesByName[name]
    }

    private static let linearSearchLimit = 12

    /// The attribute named `name`.
    public func attribute(named name: String) -> AttributeDescription? {
        if case .attribute(let a)? = property(named: name) { return a }
        return nil
    }

    /// The relationship named `name`.
    public func relationship(named name: String) -> RelationshipDescription? {
        if case .relationship(let r)? = property(named: name) { return r }
        return nil
    }

    /// Whether this entity is `other` or one of its sub-entities.
    public func isKind(of other: EntityDescription) -> Bool { other.hierarchyNames.contains(name) }

    /// All property names, attributes first, in slot order.
    public var propertyNames: [String] { attributes.map(\.name) + relationships.map(\.name) }

    /// The entity's name.
    public var description: String { name }
}

/// The relationships an entity's delete rules act through, sorted out once per entity: a
/// cascade of 10,000 objects asked each object's entity which rules apply, walking (and
/// retaining) every relationship of it, twice per object and once more at save (perf).
struct DeletePlan: Sendable {
    /// Relationships whose rule changes other objects: cascade, and nullify with an inverse,
    /// in declaration order.
    let acting: [RelationshipDescription]
    /// Deny relationships, checked at save.
    let denying: [RelationshipDescription]
    /// To-many relationships whose rule reads the members (cascade, nullify with an inverse).
    let readingMembers: [RelationshipDescription]
    /// Slots of the to-one relationships whose rule reads the destination: cascade, deny, and
    /// nullify with an inverse.
    let toOneSlotsRead: SlotSet

    init(_ relationships: [RelationshipDescription]) {
        func changesOthers(_ r: RelationshipDescription) -> Bool { r.deleteRule == .cascade || r.deleteRule == .nullify && r.hasInverse }
        acting = relationships.filter(changesOthers)
        denying = relationships.filter { $0.deleteRule == .deny }
        readingMembers = relationships.filter { $0.isToMany && changesOthers($0) }
        var slots = SlotSet()
        for r in relationships where !r.isToMany && (changesOthers(r) || r.deleteRule == .deny) { slots.insert(r.slot) }
        toOneSlotsRead = slots
    }
}

/// Holds a class metatype; metatypes of non-final classes are not `Sendable`-checked, but a
/// metatype is an immutable pointer and safe to share.
struct ClassBox: @unchecked Sendable {
    let type: ManagedObject.Type
    init(_ type: ManagedObject.Type) { self.type = type }
}

/// The properties validation has something to check on, sorted out once per entity: a save
/// of 100,000 objects walked (and retained) every attribute and relationship of each, though
/// most are optional and unconstrained (a tenth of saving 10,000 updates, perf).
struct ValidationPlan: Sendable {
    /// What to check of each attribute that is required, a range-checked integer, or carries
    /// rules, in slot order.
    let attributes: [AttributeCheck]
    /// Slots of the required to-one relationships.
    let requiredToOneSlots: [Int]
    /// To-many relationships with a minimum (required counts as one) or a maximum count.
    let countedToManys: [RelationshipDescription]

    init(attributes: [AttributeDescription], relationships: [RelationshipDescription]) {
        self.attributes = attributes.compactMap { attribute in
            let constrained = attribute.type.integerRange != nil || !attribute.rules.isEmpty
            guard constrained || !attribute.isOptional else { return nil }
            return AttributeCheck(slot: attribute.slot, presenceOnly: !constrained)
        }
        requiredToOneSlots = relationships.filter { !$0.isToMany && !$0.isOptional }.map(\.slot)
        countedToManys = relationships.filter { $0.isToMany && ($0.minCount > 0 || !$0.isOptional || $0.maxCount != nil) }
    }

    /// One attribute's check. Plain integers, so walking the checks takes no reference to
    /// the attribute descriptions, and a required attribute without rules is checked for a
    /// value in place (copying each value out to check it retained every string, uprobe count).
    struct AttributeCheck: Sendable {
        /// The attribute's slot.
        let slot: Int
        /// Only whether a value is there (the attribute is required, without rules or range).
        let presenceOnly: Bool
    }
}
