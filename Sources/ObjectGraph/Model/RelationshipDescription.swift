/// One relationship of an entity: destination, cardinality, order, inverse and delete rule.
///
/// `slot` is the relationship's position among its entity's to-one relationships (in row
/// snapshots) or to-many relationships; sub-entities keep inherited ones at the same slot, so a
/// slot is valid for the declaring entity and all of its descendants. The inverse's slot is
/// resolved when the model is built, so inverse maintenance never looks names up.
public final class RelationshipDescription: Sendable, CustomStringConvertible {
    /// The relationship's name.
    public let name: String
    /// The entity that declares it (a super-entity for inherited ones).
    public let entityName: String
    /// The destination entity (objects of its sub-entities are allowed too).
    public let destinationName: String
    /// The inverse relationship on the destination, if there is one. Without one, this is a
    /// one-to-nil or many-to-nil relationship.
    public let inverseName: String?
    /// Whether the relationship holds many objects.
    public let isToMany: Bool
    /// Whether a to-many relationship keeps its members in order.
    public let isOrdered: Bool
    /// What deleting the source does to the destination.
    public let deleteRule: DeleteRule
    /// Whether an empty relationship passes validation (code 1570 when it does not).
    public let isOptional: Bool
    /// The fewest members a to-many relationship may have at save (code 1580); 0 for none.
    public let minCount: Int
    /// The most members a to-many relationship may have at save (code 1590); `nil` for no limit.
    public let maxCount: Int?
    /// Transient relationships live in objects only and are never stored.
    public let isTransient: Bool
    /// Position among the entity's to-one or to-many relationships.
    public let slot: Int
    /// The inverse's position among the destination's to-one or to-many relationships.
    public let inverseSlot: Int?
    /// Whether the inverse is to-many (meaningless without an inverse).
    public let inverseIsToMany: Bool

    init(
        spec: RelationshipSpec, entityName: String, slot: Int, inverseName: String?,
        inverseSlot: Int?, inverseIsToMany: Bool
    ) {
        self.name = spec.name
        self.entityName = entityName
        self.destinationName = spec.destination
        self.inverseName = inverseName
        self.isToMany = spec.isToMany
        self.isOrdered = spec.isOrdered
        self.deleteRule = spec.deleteRule
        self.isOptional = spec.isOptional
        self.minCount = spec.minCount
        self.maxCount = spec.maxCount
        self.isTransient = spec.isTransient
        self.slot = slot
        self.inverseSlot = inverseSlot
        self.inverseIsToMany = inverseIsToMany
    }

    /// Whether there is an inverse relationship.
    public var hasInverse: Bool { inverseSlot != nil }

    /// "Entity.name → Destination (to-many, ordered, cascade)".
    public var description: String {
        var flags: [String] = [isToMany ? (isOrdered ? "ordered to-many" : "to-many") : "to-one"]
        flags.append(deleteRule.rawValue)
        if let inverseName { flags.append("inverse \(inverseName)") } else { flags.append("no inverse") }
        return "\(entityName).\(name) → \(destinationName) (\(flags.joined(separator: ", ")))"
    }
}
