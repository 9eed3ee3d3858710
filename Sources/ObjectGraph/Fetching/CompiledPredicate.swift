import Foundation

/// A predicate checked and resolved against one entity: key paths resolved to slots,
/// variables substituted, regular expressions compiled, operand types checked.
///
/// Compiling is where malformed fetches fail, with errors naming the entity and key; a
/// compiled predicate holds for the entity and all of its sub-entities, is `Sendable`, and can
/// be evaluated any number of times by ``PredicateEvaluator``.
public indirect enum CompiledPredicate: Sendable {
    /// Always true or false.
    case constant(Bool)
    /// All must hold.
    case and([CompiledPredicate])
    /// One must hold.
    case or([CompiledPredicate])
    /// Negation.
    case not(CompiledPredicate)
    /// A comparison.
    case comparison(CompiledComparison)

    /// Compiles `predicate` for objects of `entity`; one nested deeper than
    /// ``FetchPredicate/maximumNesting`` is refused first (see there).
    public static func compile(
        _ predicate: FetchPredicate, for entity: EntityDescription, in model: ManagedObjectModel,
        variables: [String: AttributeValue] = [:]
    ) throws -> CompiledPredicate {
        try predicate.checkNesting()
        return try compileNested(predicate, for: entity, in: model, variables: variables)
    }

    /// ``compile(_:for:in:variables:)`` of a predicate whose nesting was checked (each part
    /// checked again would make compiling quadratic in the depth).
    static func compileNested(
        _ predicate: FetchPredicate, for entity: EntityDescription, in model: ManagedObjectModel,
        variables: [String: AttributeValue]
    ) throws -> CompiledPredicate {
        switch predicate {
        case .constant(let value): return .constant(value)
        case .and(let parts): return .and(try parts.map { try compileNested($0, for: entity, in: model, variables: variables) })
        case .or(let parts): return .or(try parts.map { try compileNested($0, for: entity, in: model, variables: variables) })
        case .not(let inner): return .not(try compileNested(inner, for: entity, in: model, variables: variables))
        case .comparison(let comparison):
            return .comparison(try CompiledComparison(comparison, entity: entity, model: model, variables: variables))
        }
    }
}

/// An operand after compilation.
public indirect enum CompiledOperand: Sendable {
    /// A resolved key path.
    case keyPath(ResolvedKeyPath)
    /// A constant.
    case constant(AttributeValue)
    /// An object by ID.
    case object(ObjectID)
    /// A list of operands.
    case list([CompiledOperand])
    /// The evaluated object.
    case evaluatedObject
    /// How many members of a to-many key path satisfy a predicate compiled for their entity.
    case subqueryCount(ResolvedKeyPath, CompiledPredicate)
}

/// A comparison after compilation; see ``CompiledPredicate``.
public struct CompiledComparison: Sendable {
    /// The left operand.
    public let left: CompiledOperand
    /// The operator.
    public let op: ComparisonOperator
    /// The right operand.
    public let right: CompiledOperand
    /// String folding options.
    public let options: StringComparisonOptions
    /// ANY / ALL / NONE / direct.
    public let modifier: ComparisonModifier
    /// For MATCHES: the compiled regular expression.
    let pattern: CompiledPattern?
    /// For IN with one string on the right (a constant or a to-one key path) instead of a
    /// collection: whether the left string is a substring of it, as NSComparisonPredicate's
    /// `in` is for strings (`'ab' IN name` is `name CONTAINS 'ab'`).
    let isSubstringTest: Bool

    init(_ comparison: PredicateComparison, entity: EntityDescription, model: ManagedObjectModel, variables: [String: AttributeValue]) throws {
        func operand(_ expression: PredicateOperand) throws -> CompiledOperand {
            switch expression {
            case .keyPath(let path): return .keyPath(try ResolvedKeyPath.resolve(path, from: entity, in: model))
            case .constant(let value): return .constant(value)
            case .object(let id): return .object(id)
            case .list(let items): return .list(try items.map(operand))
            case .evaluatedObject: return .evaluatedObject
            case .subqueryCount(let collection, _, let inner):
                let path = try ResolvedKeyPath.resolve(collection, from: entity, in: model)
                guard case .relationship(let relationship) = path.terminal, relationship.isToMany,
                      !path.steps.contains(where: \.isToMany) else {
                    throw ObjectGraphError(.invalidFetch, key: collection, "SUBQUERY needs a to-many relationship reached through to-one steps; '\(collection)' is not one")
                }
                let destination = try ResolvedKeyPath.destination(of: relationship, in: model, path: collection)
                return .subqueryCount(path, try CompiledPredicate.compileNested(inner, for: destination, in: model, variables: variables))
            case .variable(let name):
                guard let value = variables[name] else {
                    throw ObjectGraphError(.invalidFetch, key: "$" + name, "no value was given for variable $\(name)")
                }
                return .constant(value)
            }
        }
        var left = try operand(comparison.left)
        var right = try operand(comparison.right)
        // `flag == 1`: a Boolean attribute compared with 0 or 1 means NO or YES (as NSNumber
        // has it), so the constant becomes a Boolean here, where the attribute's type is known.
        if case .keyPath(let path) = left, path.attributeType == .boolean { right = Self.booleanConstants(right) }
        if case .keyPath(let path) = right, path.attributeType == .boolean { left = Self.booleanConstants(left) }
        var pattern: CompiledPattern? = nil
        if comparison.op == .matches || comparison.op == .like {
            guard case .constant(.string(let source)) = right else {
                throw ObjectGraphError(.invalidFetch, "\(comparison.op.rawValue) needs a constant string pattern")
            }
            // Every LIKE pattern is valid; a MATCHES expression is compiled here, so a malformed
            // one fails the fetch instead of matching nothing.
            if comparison.op == .matches {
                do {
                    pattern = try StringOperators.pattern(comparison.op, source, comparison.options)
                } catch {
                    throw ObjectGraphError(.invalidFetch, "'\(source)' is not a valid \(comparison.op.rawValue) pattern")
                }
            }
        }
        // The operands moved in last, after their final reads: stored earlier, each was copied
        // (its key path's relationship or attribute retained) and the local released.
        self.op = comparison.op
        self.options = comparison.options
        self.modifier = comparison.modifier
        self.pattern = pattern
        self.isSubstringTest = try comparison.op == .in && Self.isSubstringTest(left, right)
        self.left = consume left
        self.right = consume right
        try check(entity: entity)
    }

    /// Rejects comparisons whose operand types cannot meet (a string key against a number), and
    /// to-many key paths used without ANY/ALL/NONE, instead of silently answering false.
    private func check(entity: EntityDescription) throws {
        if case .keyPath(let path) = left {
            let manyAllowed = modifier != .direct
                || (op == .contains && { if case .relationship(let r) = path.terminal { return r.isToMany && path.steps.allSatisfy { !$0.isToMany } } ; return false }())
            if path.yieldsMany && !manyAllowed {
                throw ObjectGraphError(
                    .invalidFetch, key: path.path,
                    "'\(path.path)' on \(entity.name) passes through a to-many relationship; use ANY, ALL, NONE or an aggregate such as @count")
            }
            if !path.yieldsMany && modifier != .direct {
                throw ObjectGraphError(.invalidFetch, key: path.path, "\(modifier.rawValue) needs a to-many key path; '\(path.path)' is to-one")
            }
            try checkOperand(path, against: right, entity: entity)
        }
        if case .subqueryCount(let collection, _) = left { try checkCount(collection, against: right) }
        if case .subqueryCount(let collection, _) = right { try checkCount(collection, against: left) }
        if case .keyPath(let path) = right, path.yieldsMany, op != .in {
            throw ObjectGraphError(.invalidFetch, key: path.path, "a to-many key path on the right needs IN")
        }
        // A list is a set of candidates (IN) or a range (BETWEEN); any other operator compares
        // with one value, and `age == {}` has none to compare with.
        if case .list(let items) = right {
            switch op {
            case .in: break
            case .between:
                if items.count != 2 { throw ObjectGraphError(.invalidFetch, "BETWEEN needs exactly two bounds, got \(items.count)") }
            default:
                throw ObjectGraphError(.invalidFetch, "\(op.rawValue) compares with one value, not a list of \(items.count); use IN to test membership")
            }
        }
        switch op {
        case .beginsWith, .endsWith, .like, .matches, .contains:
            // CONTAINS is a substring test on a string attribute (membership when the key path
            // ends in a to-many relationship, which has no attribute type).
            if case .keyPath(let p) = left, let t = p.attributeType, t != .string {
                throw ObjectGraphError(.invalidFetch, key: p.path, "\(op.rawValue) needs a string, but \(p.path) is \(t.rawValue)")
            }
        default: break
        }
        try Self.checkObjects(left, op, right)
        try Self.checkKeyPaths(left, op, right)
    }

    private func checkOperand(_ path: ResolvedKeyPath, against right: CompiledOperand, entity: EntityDescription) throws {
        let constants: [AttributeValue]
        switch right {
        case .constant(let value): constants = [value]
        case .list(let items): constants = items.compactMap { if case .constant(let v) = $0 { return v } else { return nil } }
        case .object:
            if case .attribute(let a) = path.terminal {
                throw ObjectGraphError(.invalidFetch, key: path.path, "\(entity.name).\(path.path) is a \(a.type.rawValue) attribute and cannot equal an object")
            }
            return
        default: return
        }
        for constant in constants where !constant.isNull {
            switch path.terminal {
            case .relationship:
                if op == .contains || op == .in { continue }
                throw ObjectGraphError(
                    .invalidFetch, key: path.path,
                    "\(path.path) is a relationship; compare it with an object or nil, not a \(constant.kindName) value")
            case .attribute(let attribute):
                if op == .contains && attribute.type != .string { continue }
                guard Self.compatible(attribute.type, constant) else {
                    throw ObjectGraphError(
                        .invalidFetch, key: path.path,
                        "type mismatch: \(path.path) is \(attribute.type.rawValue) but is compared with a \(constant.kindName) value \(constant)")
                }
            case .aggregate:
                guard let type = path.attributeType, Self.compatible(type, constant) else {
                    throw ObjectGraphError(.invalidFetch, key: path.path, "type mismatch: \(path.path) is \(path.attributeType?.rawValue ?? "?"), compared with \(constant.kindName)")
                }
            case .count:
                guard Self.compatible(.integer64, constant) else {
                    throw ObjectGraphError(.invalidFetch, key: path.path, "type mismatch: @count is a number, compared with \(constant.kindName)")
                }
            }
        }
    }

    /// A SUBQUERY count is a number, on either side: a string operator, or a value or key path
    /// of another kind on the other side, is refused. (A store that compiled
    /// `SUBQUERY(…).@count <= 'text'` compared the count with text by its own rules, where the
    /// evaluator answered false: the predicate soup scenario.)
    private func checkCount(_ collection: ResolvedKeyPath, against other: CompiledOperand) throws {
        let what = "SUBQUERY(\(collection.path), …).@count"
        switch op {
        case .beginsWith, .endsWith, .like, .matches, .contains:
            throw ObjectGraphError(.invalidFetch, key: collection.path, "\(op.rawValue) needs a string, but \(what) is a number")
        default: break
        }
        let constants: [AttributeValue]
        switch other {
        case .constant(let value): constants = [value]
        case .list(let items): constants = items.compactMap { if case .constant(let v) = $0 { return v } else { return nil } }
        case .keyPath(let path):
            // A key path of another type (a string attribute) is refused as a constant of it is.
            // (Booleans count as numbers, as in comparisons of key paths with each other.)
            if let type = path.attributeType, !type.isNumeric && type != .boolean {
                throw ObjectGraphError(.invalidFetch, key: collection.path, "type mismatch: \(what) is a number, compared with \(path.path), which is \(type.rawValue)")
            }
            return
        default: return
        }
        for constant in constants where !Self.compatible(.integer64, constant) {
            throw ObjectGraphError(.invalidFetch, key: collection.path, "type mismatch: \(what) is a number, compared with a \(constant.kindName) value \(constant)")
        }
    }

    /// Whether `left IN right` tests for a substring: `right` is one string, not a collection.
    /// IN needs a collection (a list, a to-many key path) or a string: anything else on the
    /// right is refused, as NSPredicate refuses it ("not a collection"), instead of being read
    /// as `==`; a nil on the right holds nothing.
    private static func isSubstringTest(_ left: CompiledOperand, _ right: CompiledOperand) throws -> Bool {
        func refuse(_ what: String) -> ObjectGraphError {
            ObjectGraphError(.invalidFetch, "IN needs a collection (a list, a to-many key path) or a string on its right, not \(what)")
        }
        switch right {
        case .list: return false
        case .constant(.null), .constant(.string): break
        case .constant(let value): throw refuse("a \(value.kindName) value")
        case .keyPath(let path):
            if path.yieldsMany { return false }
            guard path.attributeType == .string else { throw refuse("'\(path.path)', which is not a string") }
        case .object, .evaluatedObject: throw refuse("an object")
        case .subqueryCount: throw refuse("a SUBQUERY count")
        }
        // The left side is then a string too: a key path's type is checked with the operands,
        // a constant's here.
        if case .constant(let value) = left {
            switch value {
            case .null, .string: break
            default: throw ObjectGraphError(.invalidFetch, "IN with a string on its right looks for a substring; a \(value.kindName) value on its left is not one")
            }
        }
        return true
    }

    /// `operand` with integer constants 0 and 1 (also inside a list) as `false` and `true`.
    static func booleanConstants(_ operand: CompiledOperand) -> CompiledOperand {
        switch operand {
        case .constant(.integer(let v)) where v == 0 || v == 1: return .constant(.bool(v == 1))
        case .list(let items): return .list(items.map(booleanConstants))
        default: return operand
        }
    }

    static func compatible(_ type: AttributeType, _ value: AttributeValue) -> Bool {
        switch (type, value) {
        case (_, .null): return true
        case (.integer16, .integer), (.integer32, .integer), (.integer64, .integer),
            (.double, .integer), (.float, .integer), (.decimal, .integer):
            return true
        case (.integer16, .double), (.integer32, .double), (.integer64, .double), (.double, .double),
            (.float, .double), (.decimal, .double), (.decimal, .decimal), (.integer16, .decimal),
            (.integer32, .decimal), (.integer64, .decimal), (.double, .decimal), (.float, .decimal):
            return true
        case (.string, .string), (.boolean, .bool), (.date, .date), (.binaryData, .data), (.uuid, .uuid),
            (.uri, .uri), (.transformable, .data):
            return true
        case (.boolean, .integer(let v)): return v == 0 || v == 1
        default: return false
        }
    }
}
