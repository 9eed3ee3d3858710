/// A key path resolved against an entity once, so evaluation never looks names up.
public struct ResolvedKeyPath: Sendable {
    /// What the key path ends in.
    public enum Terminal: Sendable {
        /// An attribute's value.
        case attribute(AttributeDescription)
        /// A relationship's destination(s).
        case relationship(RelationshipDescription)
        /// The number of members of the last (to-many) step: `members.@count`.
        case count
    }

    /// The key path as written.
    public let path: String
    /// The relationships walked before the terminal.
    public let steps: [RelationshipDescription]
    /// What the key path ends in.
    public let terminal: Terminal

    /// Whether evaluating the key path may yield many values (it walks a to-many, or ends in one).
    public var yieldsMany: Bool {
        if case .count = terminal { return steps.dropLast().contains(where: \.isToMany) }
        if case .relationship(let r) = terminal, r.isToMany { return true }
        return steps.contains(where: \.isToMany)
    }

    /// The terminal attribute's type, if the key path ends in an attribute.
    public var attributeType: AttributeType? {
        if case .attribute(let a) = terminal { return a.type }
        if case .count = terminal { return .integer64 }
        return nil
    }

    /// Resolves `path` from `entity`; throws ``ObjectGraphError/Code/invalidFetch`` naming the
    /// entity and the component that does not exist.
    public static func resolve(_ path: String, from entity: EntityDescription, in model: ManagedObjectModel) throws -> ResolvedKeyPath {
        let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !components.isEmpty, !components.contains(where: \.isEmpty) else {
            throw ObjectGraphError(.invalidFetch, key: path, "'\(path)' is not a key path")
        }
        var current = entity
        var steps: [RelationshipDescription] = []
        for (index, component) in components.enumerated() {
            let isLast = index == components.count - 1
            if component == "@count" {
                guard isLast, let last = steps.last, last.isToMany else {
                    throw ObjectGraphError(.invalidFetch, key: path, "@count must follow a to-many relationship in '\(path)'")
                }
                return ResolvedKeyPath(path: path, steps: steps, terminal: .count)
            }
            guard let property = current.property(named: component) else {
                throw ObjectGraphError(
                    .invalidFetch, key: path,
                    "entity \(current.name) has no property '\(component)' (in key path '\(path)' from \(entity.name))")
            }
            switch property {
            case .attribute(let attribute):
                guard isLast else {
                    throw ObjectGraphError(
                        .invalidFetch, key: path,
                        "\(current.name).\(component) is an attribute; key path '\(path)' cannot continue past it")
                }
                return ResolvedKeyPath(path: path, steps: steps, terminal: .attribute(attribute))
            case .relationship(let relationship):
                if isLast { return ResolvedKeyPath(path: path, steps: steps, terminal: .relationship(relationship)) }
                steps.append(relationship)
                current = model.destination(of: relationship)
            }
        }
        fatalError("unreachable: a non-empty key path ends in its last component")
    }
}
