import Foundation

/// Collects entity definitions for ``ManagedObjectModel/init(_:)``.
///
/// ```swift
/// let model = try ManagedObjectModel { m in
///     m.entity("Chat", as: Chat.self) { e in
///         e.attribute("title", .string, rules: [.maxLength(200)])
///         e.toMany("messages", "Message", inverse: "chat", deleteRule: .cascade)
///     }
///     m.entity("Message", as: Message.self) { e in
///         e.attribute("text", .string, default: "")
///         e.toOne("chat", "Chat", inverse: "messages", optional: false)
///     }
/// }
/// ```
/// A builder is used on one thread while the model is being built and then discarded.
public final class ModelBuilder {
    var entities: [EntitySpec] = []
    var configurations: [String: [String]] = [:]

    init() {}

    /// Defines an entity. `parent` makes it a sub-entity that inherits the parent's properties;
    /// `abstract` entities have no objects of their own, only of their sub-entities (so one
    /// without sub-entities is refused); `as` binds a ``ManagedObject`` subclass whose
    /// instances represent the entity's objects.
    public func entity(
        _ name: String, parent: String? = nil, abstract: Bool = false,
        as managedClass: ManagedObject.Type = ManagedObject.self,
        _ body: (EntityBuilder) -> Void = { _ in }
    ) {
        let builder = EntityBuilder()
        body(builder)
        entities.append(
            EntitySpec(
                name: name, parent: parent, isAbstract: abstract, managedClass: managedClass,
                attributes: builder.attributes, relationships: builder.relationships,
                uniquenessConstraints: builder.uniquenessConstraints))
    }

    /// Names a configuration (a non-empty name): the set of entities one store holds when
    /// several stores share a coordinator. Entities outside every configuration live in the
    /// default one only.
    public func configuration(_ name: String, entities: [String]) {
        configurations[name, default: []].append(contentsOf: entities)
    }
}

/// Collects one entity's properties; see ``ModelBuilder``.
public final class EntityBuilder {
    var attributes: [AttributeSpec] = []
    var relationships: [RelationshipSpec] = []
    var uniquenessConstraints: [[String]] = []

    init() {}

    /// Adds an attribute. Attributes are required unless `optional` (as in SwiftData, where a
    /// property is optional only when its Swift type is); `default` is converted as any value
    /// would be, so a default of the wrong type, or one its own `rules` refuse, is a model
    /// error. Rules that no value can pass (a minimum above the maximum) are refused, and so
    /// is `indexed` with `transient`: stores index only what they hold.
    public func attribute(
        _ name: String, _ type: AttributeType, optional: Bool = false, default defaultValue: Any? = nil,
        rules: [ValidationRule] = [], indexed: Bool = false, transient: Bool = false
    ) {
        attributes.append(
            AttributeSpec(
                name: name, type: type, isOptional: optional, defaultValue: defaultValue, rules: rules,
                isTransient: transient, isIndexed: indexed, transformer: nil))
    }

    /// Adds a transformable attribute holding any `Codable` value, stored as JSON.
    public func transformable<T: Codable & Sendable>(
        _ name: String, _ type: T.Type, optional: Bool = true, default defaultValue: T? = nil,
        transient: Bool = false
    ) {
        attributes.append(
            AttributeSpec(
                name: name, type: .transformable, isOptional: optional, defaultValue: defaultValue,
                rules: [], isTransient: transient, isIndexed: false, transformer: .codable(T.self)))
    }

    /// Adds a to-one relationship. Without `inverse`, it is one-to-nil (unless the destination
    /// names this relationship as its inverse, in which case the inverse is inferred).
    public func toOne(
        _ name: String, _ destination: String, inverse: String? = nil,
        deleteRule: DeleteRule = .nullify, optional: Bool = true, transient: Bool = false
    ) {
        relationships.append(
            RelationshipSpec(
                name: name, destination: destination, inverse: inverse, isToMany: false,
                isOrdered: false, deleteRule: deleteRule, isOptional: optional, minCount: 0,
                maxCount: nil, isTransient: transient))
    }

    /// Adds a to-many relationship, ordered if `ordered`. `min`/`max` bound its size at save.
    /// Without an inverse it is many-to-nil, which ObjectGraph stores as a join so that one
    /// destination can belong to several sources (Core Data loses data here).
    public func toMany(
        _ name: String, _ destination: String, inverse: String? = nil,
        deleteRule: DeleteRule = .nullify, ordered: Bool = false, optional: Bool = true,
        min: Int = 0, max: Int? = nil, transient: Bool = false
    ) {
        relationships.append(
            RelationshipSpec(
                name: name, destination: destination, inverse: inverse, isToMany: true,
                isOrdered: ordered, deleteRule: deleteRule, isOptional: optional, minCount: min,
                maxCount: max, isTransient: transient))
    }

    /// Declares that the combination of these attributes must be unique across the entity.
    /// It names at least one attribute, each once, none transient (the store enforces it).
    public func unique(_ attributeNames: String...) {
        uniquenessConstraints.append(attributeNames)
    }
}

struct AttributeSpec {
    var name: String
    var type: AttributeType
    var isOptional: Bool
    var defaultValue: Any?
    var rules: [ValidationRule]
    var isTransient: Bool
    var isIndexed: Bool
    var transformer: AttributeTransformer?
}

struct RelationshipSpec {
    var name: String
    var destination: String
    var inverse: String?
    var isToMany: Bool
    var isOrdered: Bool
    var deleteRule: DeleteRule
    var isOptional: Bool
    var minCount: Int
    var maxCount: Int?
    var isTransient: Bool
}

struct EntitySpec {
    var name: String
    var parent: String?
    var isAbstract: Bool
    var managedClass: ManagedObject.Type
    var attributes: [AttributeSpec]
    var relationships: [RelationshipSpec]
    var uniquenessConstraints: [[String]]
}
