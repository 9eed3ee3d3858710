import Foundation

/// The schema: a checked, immutable set of entities shared by every context and store.
///
/// Built with a ``ModelBuilder``; the initializer checks the model and throws ``ModelError``
/// naming the entity and property at fault. A model is `Sendable` and can be used from any
/// thread.
public final class ManagedObjectModel: Sendable, CustomStringConvertible {
    /// All entities, parents before their sub-entities.
    public let entities: [EntityDescription]
    /// The named configurations and the entities each holds.
    public let configurations: [String: Set<String>]
    /// A stable hash over every entity's stored shape; stores record it and refuse a
    /// different model.
    public let versionHash: String
    private let entitiesByName: [String: EntityDescription]
    private let entitiesByClass: [IdentityKey: EntityDescription]
    /// Entities by ``EntityDescription/nameToken``: an ID's entity without hashing its name.
    private let entitiesByToken: [EntityDescription?]
    /// Whether some entity has a uniqueness constraint (a save checks none otherwise).
    let hasUniquenessConstraints: Bool
    /// Whether some entity has a relationship with the deny rule (a save checks deleted
    /// objects for none otherwise).
    let hasDenyRules: Bool
    /// Whether some entity has a one-to-one relationship (read by the save's pairing pass,
    /// which a model without one skips).
    let hasOneToOnes: Bool
    /// Whether some entity is bound to a class of its own (a save asks no object to check
    /// itself as a whole otherwise; see ``ManagedObject/validateForInsert()``).
    let hasBoundClasses: Bool
    /// The entities whose objects a stored to-many without an inverse (many-to-nil) can hold
    /// (each destination and its sub-entities): a save that deletes objects of one of them
    /// drops them from such relationships loaded in the saving context; other saves skip it.
    let manyToNilDestinations: Set<String>

    /// Builds and checks a model.
    public convenience init(_ build: (ModelBuilder) throws -> Void) throws {
        let builder = ModelBuilder()
        try build(builder)
        try self.init(specs: builder.entities, configurations: builder.configurations)
    }

    init(specs: [EntitySpec], configurations rawConfigurations: [String: [String]]) throws {
        let resolved = try ModelResolver(specs: specs, configurations: rawConfigurations).resolve()
        self.entities = resolved
        var byName: [String: EntityDescription] = [:]
        var byClass: [IdentityKey: EntityDescription] = [:]
        for entity in resolved {
            byName[entity.name] = entity
            if let unknown = entity.managedClass.validatedKeys.sorted().first(where: { entity.property(named: $0) == nil }) {
                throw ModelError(.unknownProperty, entity: entity.name, property: unknown,
                                 "\(entity.managedClass).validatedKeys names '\(unknown)', which \(entity.name) does not have (it has \(entity.propertyNames.joined(separator: ", ")))")
            }
            if entity.managedClass != ManagedObject.self {
                // One class, one entity: bound twice, the last binding won, and `Class(context:)`
                // and `FetchRequest<Class>` silently meant only that entity.
                if let first = byClass.updateValue(entity, forKey: IdentityKey(entity.managedClass)) {
                    throw ModelError(.duplicateName, entity: entity.name,
                                     "\(entity.managedClass) is bound to both \(first.name) and \(entity.name); a class names one entity")
                }
            }
        }
        self.entitiesByName = byName
        self.entitiesByClass = byClass
        var byToken = [EntityDescription?](repeating: nil, count: Int(resolved.map(\.nameToken).max() ?? 0) + 1)
        for entity in resolved { byToken[Int(entity.nameToken)] = entity }
        self.entitiesByToken = byToken
        self.hasUniquenessConstraints = resolved.contains { !$0.uniquenessConstraints.isEmpty }
        self.hasDenyRules = resolved.contains { !$0.deletePlan.denying.isEmpty }
        self.hasBoundClasses = resolved.contains(where: \.hasBoundClass)
        self.hasOneToOnes = resolved.contains { $0.toOneRelationships.contains { $0.hasInverse && !$0.inverseIsToMany && !$0.isTransient } }
        var manyToNilDestinations: Set<String> = []
        for entity in resolved {
            for relationship in entity.toManyRelationships where !relationship.hasInverse && !relationship.isTransient {
                manyToNilDestinations.formUnion(byName[relationship.destinationName]?.hierarchyNames ?? [])
            }
        }
        self.manyToNilDestinations = manyToNilDestinations
        var configurations: [String: Set<String>] = [:]
        for (name, members) in rawConfigurations {
            var set = Set<String>()
            for member in members { set.formUnion(byName[member]?.hierarchyNames ?? []) }
            configurations[name] = set
        }
        self.configurations = configurations
        var hash = StableHash()
        for entity in resolved.sorted(by: { $0.name < $1.name }) { hash.combine(entity.versionHash) }
        self.versionHash = hash.hex
        try checkConfigurations()
    }

    /// The entity named `name`.
    public func entity(named name: String) -> EntityDescription? { entitiesByName[name] }

    /// The entity of `id`'s record; `nil` when the model has no entity of that name.
    public func entity(for id: ObjectID) -> EntityDescription? {
        let token = Int(id.entityToken)
        return token < entitiesByToken.count ? entitiesByToken[token] : nil
    }

    /// The entity named `name`, or a typed error naming it.
    public func requireEntity(_ name: String) throws -> EntityDescription {
        guard let entity = entitiesByName[name] else {
            throw ObjectGraphError(
                .unknownEntity, "the model has no entity '\(name)' (it has \(entities.map(\.name).joined(separator: ", ")))")
        }
        return entity
    }

    /// The entity bound to `type` with `entity(_:as:)`.
    public func entity(for type: ManagedObject.Type) -> EntityDescription? {
        entitiesByClass[IdentityKey(type)]
    }

    /// The entities of configuration `name`, or every entity for `nil` (the default configuration).
    public func entities(inConfiguration name: String?) -> [EntityDescription] {
        guard let name else { return entities }
        let members = configurations[name] ?? []
        return entities.filter { members.contains($0.name) }
    }

    /// The destination entity of a relationship of this model; `nil` for a relationship of
    /// another model (whose destination this model may not hold, or hold under that name as
    /// another entity).
    public func destination(of relationship: RelationshipDescription) -> EntityDescription? {
        guard entitiesByName[relationship.entityName]?.relationship(named: relationship.name) === relationship else { return nil }
        return entitiesByName[relationship.destinationName]
    }

    /// The destination entity of `relationship`, which the caller took from this model (its
    /// entities, key paths resolved against it, requests validated against it): resolution
    /// checked that every relationship's destination exists, so a miss is a broken invariant,
    /// not input. Within the package, where every relationship comes from the model at hand;
    /// users call ``destination(of:)``.
    package func destinationEntity(of relationship: RelationshipDescription) -> EntityDescription {
        guard let entity = entitiesByName[relationship.destinationName] else {
            fatalError("model invariant: \(relationship) has no destination after resolution")
        }
        return entity
    }

    /// The inverse of a relationship, if it has one (`nil` as well for a relationship of
    /// another model whose destination this model does not hold).
    public func inverse(of relationship: RelationshipDescription) -> RelationshipDescription? {
        guard let inverseName = relationship.inverseName else { return nil }
        return entitiesByName[relationship.destinationName]?.relationship(named: inverseName)
    }

    /// A one-paragraph summary: entity names and property counts.
    public var description: String {
        entities.map { "\($0.name)(\($0.attributes.count) attributes, \($0.relationships.count) relationships)" }
            .joined(separator: ", ")
    }

    private func checkConfigurations() throws {
        for (name, members) in configurations.sorted(by: { $0.key < $1.key }) {
            for entityName in members.sorted() {
                guard let entity = entitiesByName[entityName] else { continue }
                for relationship in entity.relationships where !relationship.isTransient {
                    if !members.contains(relationship.destinationName) {
                        throw ModelError(
                            .crossStoreRelationship, entity: entity.name, property: relationship.name,
                            "configuration '\(name)' holds \(entity.name) but not its destination \(relationship.destinationName); a relationship cannot cross stores")
                    }
                }
            }
        }
    }
}
