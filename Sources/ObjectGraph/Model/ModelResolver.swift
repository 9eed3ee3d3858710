/// Turns builder specs into checked, slot-resolved entity descriptions.
///
/// Two passes: the first lays out every entity's slots (inherited properties first), the
/// second creates descriptions, resolving each relationship's destination and inverse slot.
struct ModelResolver {
    let specs: [EntitySpec]
    let configurations: [String: [String]]

    private struct Layout {
        var spec: EntitySpec
        var root: String
        var attributes: [(spec: AttributeSpec, owner: String)] = []
        var relationships: [(spec: RelationshipSpec, owner: String)] = []
        var toOneSlots: [String: Int] = [:]
        var toManySlots: [String: Int] = [:]
    }

    func resolve() throws -> [EntityDescription] {
        var specsByName: [String: EntitySpec] = [:]
        for spec in specs {
            guard isValidName(spec.name) else {
                throw ModelError(.invalidName, entity: spec.name, "'\(spec.name)' is not a usable entity name")
            }
            guard specsByName[spec.name] == nil else {
                throw ModelError(.duplicateName, entity: spec.name, "two entities are named \(spec.name)")
            }
            specsByName[spec.name] = spec
        }
        for (configuration, members) in configurations {
            // Refused as an empty entity or property name is: it is most likely a name that
            // went missing, and no message could point at it.
            guard !configuration.isEmpty else {
                throw ModelError(.invalidName, "a configuration (holding \(members.joined(separator: ", "))) has an empty name")
            }
            for member in members where specsByName[member] == nil {
                throw ModelError(.unknownEntity, entity: member, "configuration '\(configuration)' names an entity the model does not have")
            }
        }
        let ordered = try topologicalOrder(specsByName)
        var layouts: [String: Layout] = [:]
        for spec in ordered {
            var layout: Layout
            if let parent = spec.parent, let parentLayout = layouts[parent] {
                layout = Layout(spec: spec, root: parentLayout.root)
                layout.attributes = parentLayout.attributes
                layout.relationships = parentLayout.relationships
            } else {
                layout = Layout(spec: spec, root: spec.name)
            }
            var seen = Set(layout.attributes.map(\.spec.name) + layout.relationships.map(\.spec.name))
            for attribute in spec.attributes {
                try checkNew(attribute.name, in: spec.name, seen: &seen)
                layout.attributes.append((attribute, spec.name))
            }
            for relationship in spec.relationships {
                try checkNew(relationship.name, in: spec.name, seen: &seen)
                guard specsByName[relationship.destination] != nil else {
                    throw ModelError(
                        .unknownDestination, entity: spec.name, property: relationship.name,
                        "destination entity '\(relationship.destination)' does not exist")
                }
                if !relationship.isToMany && (relationship.minCount != 0 || relationship.maxCount != nil) {
                    throw ModelError(.invalidCount, entity: spec.name, property: relationship.name, "a to-one relationship has no counts")
                }
                if relationship.minCount < 0 || (relationship.maxCount.map { $0 < max(relationship.minCount, 1) } ?? false) {
                    throw ModelError(
                        .invalidCount, entity: spec.name, property: relationship.name,
                        "count bounds \(relationship.minCount)...\(relationship.maxCount.map(String.init) ?? "∞") are impossible")
                }
                layout.relationships.append((relationship, spec.name))
            }
            var toOne = 0, toMany = 0
            for (r, _) in layout.relationships {
                if r.isToMany { layout.toManySlots[r.name] = toMany; toMany += 1 } else { layout.toOneSlots[r.name] = toOne; toOne += 1 }
            }
            layouts[spec.name] = layout
        }
        let inverses = try resolveInverses(layouts)

        var children: [String: [String]] = [:]
        for spec in ordered { if let parent = spec.parent { children[parent, default: []].append(spec.name) } }
        for spec in ordered where spec.isAbstract && children[spec.name] == nil {
            throw ModelError(
                .abstractWithoutSubentities, entity: spec.name,
                "\(spec.name) is abstract and has no sub-entities, so it can never have an object")
        }
        // Each entity's names and their tokens are built once, from its sub-entities' (which
        // come later in `ordered`). Recomputed for every entity and configuration member, a
        // chain of n entities took n³ steps: 500 took seconds, 3,000 did not finish. Extending
        // the first sub-entity's sets copies them where a union would hash every name again.
        var hierarchies: [String: (names: Set<String>, tokens: Set<UInt32>)] = [:]
        for spec in ordered.reversed() {
            let subentities = (children[spec.name] ?? []).compactMap { hierarchies[$0] }
            var names = subentities.first?.names ?? []
            var tokens = subentities.first?.tokens ?? []
            for subentity in subentities.dropFirst() {
                names.formUnion(subentity.names)
                tokens.formUnion(subentity.tokens)
            }
            names.insert(spec.name)
            tokens.insert(InternedNames.shared.token(for: spec.name))
            hierarchies[spec.name] = (names, tokens)
        }
        var memberOf: [String: Set<String>] = [:]
        for (configuration, members) in configurations {
            for member in members { for name in hierarchies[member]?.names ?? [] { memberOf[name, default: []].insert(configuration) } }
        }

        var sharedRelationships: [String: RelationshipDescription] = [:]  // "Owner.name"
        var sharedAttributes: [String: AttributeDescription] = [:]
        // A sub-entity's objects are its parent's objects too, so they hold to the parent's
        // constraints, which they may extend with their own (as in Core Data). Not inheriting
        // them let a sub-entity's object repeat a value its parent entity declares unique.
        var constraints: [String: [[String]]] = [:]
        var result: [EntityDescription] = []
        for (index, spec) in ordered.enumerated() {
            let layout = layouts[spec.name]!
            var entityConstraints = spec.parent.flatMap { constraints[$0] } ?? []
            for constraint in spec.uniquenessConstraints where !entityConstraints.contains(constraint) {
                entityConstraints.append(constraint)
            }
            constraints[spec.name] = entityConstraints
            var attributes: [AttributeDescription] = []
            for (slot, (attribute, owner)) in layout.attributes.enumerated() {
                let key = "\(owner).\(attribute.name)"
                if let existing = sharedAttributes[key] {
                    attributes.append(existing)
                } else {
                    let description = try AttributeDescription(spec: attribute, slot: slot, entityName: owner)
                    sharedAttributes[key] = description
                    attributes.append(description)
                }
            }
            var relationships: [RelationshipDescription] = []
            for (relationship, owner) in layout.relationships {
                let key = "\(owner).\(relationship.name)"
                if let existing = sharedRelationships[key] {
                    relationships.append(existing)
                    continue
                }
                let slot = relationship.isToMany ? layout.toManySlots[relationship.name]! : layout.toOneSlots[relationship.name]!
                let inverse = inverses[key]
                let description = RelationshipDescription(
                    spec: relationship, entityName: owner, slot: slot, inverseName: inverse?.name,
                    inverseSlot: inverse?.slot, inverseIsToMany: inverse?.isToMany ?? false)
                sharedRelationships[key] = description
                relationships.append(description)
            }
            var hash = StableHash()
            hash.combine(spec.name)
            hash.combine(layout.root)
            // As Core Data's entity hash, the abstract flag and each attribute's optionality
            // count: a store holding nil in an attribute now required would read as damaged, and
            // rows of an entity now abstract would be objects no model allows; either way the
            // store is refused at open with the model mismatch named, not failed row by row.
            if spec.isAbstract { hash.combine("abstract") }
            for a in attributes where !a.isTransient {
                hash.combine("a:\(a.name):\(a.type.rawValue)\(a.isOptional ? "" : ":required")")
            }
            for r in relationships where !r.isTransient {
                hash.combine("r:\(r.name):\(r.destinationName):\(r.isToMany):\(r.isOrdered):\(r.inverseName ?? "")")
            }
            result.append(
                EntityDescription(
                    name: spec.name, index: index, parentName: spec.parent, rootName: layout.root,
                    isAbstract: spec.isAbstract, attributes: attributes, relationships: relationships,
                    subentityNames: children[spec.name] ?? [], hierarchyNames: hierarchies[spec.name]?.names ?? [spec.name],
                    hierarchyTokens: hierarchies[spec.name]?.tokens ?? [InternedNames.shared.token(for: spec.name)],
                    configurations: memberOf[spec.name] ?? [], uniquenessConstraints: entityConstraints,
                    versionHash: hash.hex, managedClass: spec.managedClass))
        }
        for entity in result { try checkUniquenessConstraints(of: entity) }
        return result
    }

    /// Refuses a constraint no store can enforce. An empty one would make every two objects
    /// collide; a transient attribute is in no store, so the check at save would fetch a
    /// column that does not exist (SQLite failed the save) or compare unsaved objects only
    /// (the atomic stores let a later save repeat a value).
    private func checkUniquenessConstraints(of entity: EntityDescription) throws {
        for constraint in entity.uniquenessConstraints {
            guard !constraint.isEmpty else {
                throw ModelError(.invalidConstraint, entity: entity.name, "a uniqueness constraint names no attribute")
            }
            var seen: Set<String> = []
            for name in constraint {
                guard let attribute = entity.attribute(named: name) else {
                    // (Reported as an unknown entity before, though the entity is right there.)
                    let what = entity.relationship(named: name) != nil ? "a relationship; a constraint holds attributes" : "which the entity does not have"
                    throw ModelError(.unknownProperty, entity: entity.name, property: name, "a uniqueness constraint names \(name), \(what) (it has \(entity.attributes.map(\.name).joined(separator: ", ")))")
                }
                guard seen.insert(name).inserted else {
                    throw ModelError(.invalidConstraint, entity: entity.name, property: name, "a uniqueness constraint names \(name) twice")
                }
                guard !attribute.isTransient else {
                    throw ModelError(
                        .invalidConstraint, entity: entity.name, property: name,
                        "a uniqueness constraint names \(name), a transient attribute, which no store holds")
                }
            }
        }
    }

    private struct InverseInfo { var name: String; var slot: Int; var isToMany: Bool }

    /// Matches each relationship with its inverse. An inverse named on one side only is
    /// inferred for the other; two sides that name different partners are an error.
    private func resolveInverses(_ layouts: [String: Layout]) throws -> [String: InverseInfo] {
        var result: [String: InverseInfo] = [:]
        for layout in layouts.values.sorted(by: { $0.spec.name < $1.spec.name }) {
            for relationship in layout.spec.relationships {
                guard let inverseName = relationship.inverse else { continue }
                let destination = layouts[relationship.destination]!
                guard let (inverse, inverseOwner) = destination.relationships.first(where: { $0.spec.name == inverseName }) else {
                    throw ModelError(
                        .unknownInverse, entity: layout.spec.name, property: relationship.name,
                        "inverse '\(inverseName)' does not exist on \(relationship.destination)")
                }
                // Each side must point at exactly the entity that declares the other (Core Data's
                // rule). A broader destination would let the inverse hold objects that lack this
                // relationship, and maintaining it on them would index a slot they do not have.
                guard inverse.destination == layout.spec.name else {
                    throw ModelError(
                        .inverseMismatch, entity: layout.spec.name, property: relationship.name,
                        "inverse \(relationship.destination).\(inverseName) points at \(inverse.destination), not \(layout.spec.name)")
                }
                guard inverseOwner == relationship.destination else {
                    throw ModelError(
                        .inverseMismatch, entity: layout.spec.name, property: relationship.name,
                        "inverse \(relationship.destination).\(inverseName) is declared on \(inverseOwner), so it also holds \(inverseOwner) objects that are not \(relationship.destination)")
                }
                if let back = inverse.inverse, back != relationship.name {
                    throw ModelError(
                        .inverseMismatch, entity: layout.spec.name, property: relationship.name,
                        "names \(relationship.destination).\(inverseName) as inverse, but that one names '\(back)'")
                }
                let inverseSlot = inverse.isToMany ? destination.toManySlots[inverseName]! : destination.toOneSlots[inverseName]!
                result["\(layout.spec.name).\(relationship.name)"] = InverseInfo(name: inverseName, slot: inverseSlot, isToMany: inverse.isToMany)
                let ownSlot = relationship.isToMany ? layout.toManySlots[relationship.name]! : layout.toOneSlots[relationship.name]!
                let backKey = "\(inverseOwner).\(inverseName)"
                if let existing = result[backKey], existing.name != relationship.name {
                    throw ModelError(
                        .inverseMismatch, entity: inverseOwner, property: inverseName,
                        "is named as inverse by both \(existing.name) and \(relationship.name)")
                }
                result[backKey] = InverseInfo(name: relationship.name, slot: ownSlot, isToMany: relationship.isToMany)
            }
        }
        return result
    }

    private func topologicalOrder(_ specsByName: [String: EntitySpec]) throws -> [EntitySpec] {
        var ordered: [EntitySpec] = []
        var state: [String: Int] = [:]  // 1 visiting, 2 done
        func visit(_ spec: EntitySpec) throws {
            if state[spec.name] == 2 { return }
            if state[spec.name] == 1 {
                throw ModelError(.unknownParent, entity: spec.name, "inheritance forms a cycle through \(spec.name)")
            }
            state[spec.name] = 1
            if let parent = spec.parent {
                guard let parentSpec = specsByName[parent] else {
                    throw ModelError(.unknownParent, entity: spec.name, "parent entity '\(parent)' does not exist")
                }
                try visit(parentSpec)
            }
            state[spec.name] = 2
            ordered.append(spec)
        }
        for spec in specs { try visit(spec) }
        return ordered
    }

    private func checkNew(_ name: String, in entity: String, seen: inout Set<String>) throws {
        guard isValidName(name) else {
            throw ModelError(.invalidName, entity: entity, property: name, "'\(name)' is not a usable property name")
        }
        guard seen.insert(name).inserted else {
            throw ModelError(.duplicateName, entity: entity, property: name, "\(entity) has two properties named \(name) (inherited ones count)")
        }
    }

    private func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !name.hasPrefix("@") else { return false }
        return (first.properties.isAlphabetic || first == "_")
            && name.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || $0.properties.numericType != nil || $0 == "_" }
    }
}
