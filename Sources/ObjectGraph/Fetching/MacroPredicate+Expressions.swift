import Foundation

// One conformance per supported `PredicateExpressions` node. Conformances are unconditional:
// operands are translated through `MacroPredicateTranslator.term`, which folds operands that
// read no object and names any node that has no conformance here, so an unsupported operand
// deep inside a supported node still fails with a message saying what it is.

extension PredicateExpressions.Variable: MacroTranslatable {
    func translate(_ t: inout MacroPredicateTranslator) throws -> MacroTerm { try t.binding(of: key) }
}

extension PredicateExpressions.KeyPath: MacroTranslatable {
    func translate(_ t: inout MacroPredicateTranslator) throws -> MacroTerm {
        let base = try t.term(root)
        return try t.keyPath(from: base, keyPath as KeyPath<Root.Output, Output>)
    }
}

// MARK: Logic

extension PredicateExpressions.Conjunction: MacroTranslatable {
    func translate(_ t: inout MacroPredicateTranslator) throws -> MacroTerm {
        .predicate(MacroPredicateTranslator.and(try t.predicate(lhs), try t.predicate(rhs)))
    }
}

extension PredicateExpressions.Disjunction: MacroTranslatable {
    func translate(_ t: inout MacroPredicateTranslator) throws -> MacroTerm {
        .predicate(MacroPredicateTranslator.or(try t.predicate(lhs), try t.predicate(rhs)))
    }
}

extension PredicateExpressions.Negation: MacroTranslatable {
    func translate(_ t: inout MacroPredicateTranslator) throws -> MacroTerm { .predicate(.not(try t.predicate(wrapped))) }
}

extension PredicateExpressions.Conditional: MacroTranslatable {
    /// `test ? a : b` on conditions: `(test AND a) OR (NOT test AND b)`, simplified when a
    /// branch is a constant.
    func translate(_ t: inout MacroPredicateTranslator) throws -> MacroTerm {
        let condition = try t.predicate(test)
        let yes = try t.term(trueBranch), no = try t.term(falseBranch)
        let a = try t.condition(yes, what: "a non-condition branch of '? :'"), b = try t.condition(no, what: "a non-condition branch of '? :'")
        typealias T = MacroPredicateTranslator
        switch (a, b) {
        case (.constant(true), .constant(false)): return .predicate(condition)
        case (.constant(false), .constant(true)): return .predicate(.not(condition))
        case (.constant(true), _): return .predicate(T.or(condition, b))
        case (.constant(false), _): return .predicate(T.and(.not(condition), b))
        case (_, .constant(true)): return .predicate(T.or(.not(condition), a))
        case (_, .constant(false)): return .predicate(T.and(condition, a))
        default: return .predicate(T.or(T.and(condition, a), T.and(.not(condition), b)))
        }
    }
}

// MARK: Comparisons

extension PredicateExpressions.Equal: MacroTranslatable {
    func translate(_ t: inout MacroPredicateTranslator) throws -> MacroTerm {
        .predicate(try t.compare(try t.term(lhs), .equal, try t.term(rhs), what: "=="))
    }
}

extension PredicateExpressions.NotEqual: MacroTranslatable {
    func translate(_ t: inout MacroPredicateTranslator) throws -> MacroTerm {
        .predicate(try t.compare(try t.term(lhs), .notEqual, try t.term(rhs), what: "!="))
    }
}

extension PredicateExpressions.Comparison: MacroTranslatable {
    func translate(_ t: inout MacroPredicateTranslator) throws -> MacroTerm {
        let operation: ComparisonOperator
        switch op {
        case .lessThan: operation = .lessThan
        case .lessThanOrEqual: operation = .lessThanOrEqual
        case .greaterThan: operation = .greaterThan
        case .greaterThanOrEqual: operation = .greaterThanOrEqual
        }
        return .predicate(try t.compare(try t.term(lhs), operation, try t.term(rhs), what: operation.rawValue))
    }
}

// MARK: Strings and collections

extension PredicateExpressions.SequenceStartsWith: MacroTranslatable {
    /// `$0.name.starts(with: "A")`: BEGINSWITH.
    func translate(_ t: inout MacroPredicateTranslator) throws -> MacroTerm {
        let text = try t.term(base), prefix = try t.term(prefix)
        guard case .constant(.string) = prefix else { throw MacroPredicateTranslator.error("starts(with:) with a prefix that is not a captured string") }
        return .predicate(try t.compare(text, .beginsWith, prefix, what: "starts(with:)"))
    }
}

extension PredicateExpressions.CollectionContainsCollection: MacroTranslatable {
    /// `$0.name.contains("x")`: CONTAINS (substring).
    func translate(_ t: inout MacroPredicateTranslator) throws -> MacroTerm {
        let text = try t.term(base), part = try t.term(other)
        guard case .constant(.string) = part else { throw MacroPredicateTranslator.error("contains(_:) on a string with an argument that is not a captured string") }
        return .predicate(try t.compare(text, .contains, part, what: "contains(_:)"))
    }
}

extension PredicateExpressions.SequenceContains: MacroTranslatable {
    /// `["a", "b"].contains($0.name)`: IN.
    func translate(_ t: inout MacroPredicateTranslator) throws -> MacroTerm {
        let values = try t.term(sequence), value = try t.term(element)
        guard case .list = values else {
            throw MacroPredicateTranslator.error("contains(_:) on something other than a captured array or set (for relationships use contains(where:) with objectID)")
        }
        return .predicate(try t.compare(value, .in, values, what: "contains(_:)"))
    }
}

extension PredicateExpressions.RangeExpressionContains: MacroTranslatable {
    /// `(18...30).contains($0.age)`: BETWEEN; `18..<30`: `>= AND <`.
    func translate(_ t: inout MacroPredicateTranslator) throws -> MacroTerm {
        let bounds = try t.term(range), value = try t.term(element)
        guard case .range(let lower, let upper, let closed) = bounds else {
            throw MacroPredicateTranslator.error("contains(_:) on a range that is not made of captured values")
        }
        if closed { return .predicate(try t.compare(value, .between, bounds, what: "contains(_:)")) }
        return .predicate(MacroPredicateTranslator.and(
            try t.compare(value, .greaterThanOrEqual, .constant(lower), what: "contains(_:)"),
            try t.compare(value, .lessThan, .constant(upper), what: "contains(_:)")))
    }
}

extension PredicateExpressions.SequenceContainsWhere: MacroTranslatable {
    /// `$0.subjects.contains { $0.name == "Math" }`: `ANY subjects.name == "Math"`, or a
    /// SUBQUERY when the test is more than one comparison of the member's own property.
    func translate(_ t: inout MacroPredicateTranslator) throws -> MacroTerm {
        guard case .path(let collection) = try t.term(sequence) else {
            throw MacroPredicateTranslator.error("contains(where:) on something other than a to-many relationship")
        }
        let inner = try t.member(variable.key, of: collection) { try $0.predicate(test) }
        return .predicate(try t.anyMember(of: collection, inner))
    }
}

extension PredicateExpressions.SequenceAllSatisfy: MacroTranslatable {
    /// `$0.subjects.allSatisfy { … }`: `ALL …`, or `SUBQUERY(…, NOT test).@count == 0`.
    func translate(_ t: inout MacroPredicateTranslator) throws -> MacroTerm {
        guard case .path(let collection) = try t.term(sequence) else {
            throw MacroPredicateTranslator.error("allSatisfy on something other than a to-many relationship")
        }
        let inner = try t.member(variable.key, of: collection) { try $0.predicate(test) }
        return .predicate(try t.allMembers(of: collection, inner))
    }
}

extension PredicateExpressions.Filter: MacroTranslatable {
    /// `$0.subjects.filter { … }`: usable through `.count` and `.isEmpty` (SUBQUERY).
    func translate(_ t: inout MacroPredicateTranslator) throws -> MacroTerm {
        guard case .path(let collection) = try t.term(sequence) else {
            throw MacroPredicateTranslator.error("filter on something other than a to-many relationship")
        }
        let inner = try t.member(variable.key, of: collection) { try $0.predicate(filter) }
        return .filtered(collection, inner)
    }
}

// MARK: Optionals

extension PredicateExpressions.OptionalFlatMap: MacroTranslatable {
    /// `$0.chat?.title`: the variable stands for the unwrapped key path, so the transform's key
    /// paths continue it (`chat.title`); a condition becomes optional, `nil` when absent.
    func translate(_ t: inout MacroPredicateTranslator) throws -> MacroTerm {
        guard case .path(let base) = try t.term(wrapped) else {
            throw MacroPredicateTranslator.error("optional chaining on something other than a key path of the object")
        }
        t.bind(variable.key, to: .path(base))
        let result = try t.term(transform)
        let presence = MacroPredicateTranslator.isNil(try t.operand(base), false)
        switch result {
        case .path: return result
        case .operand(let operand, let scope): return .optionalOperand(operand, scope: scope)
        case .predicate(let p): return .optionalPredicate(p, presence: presence)
        case .optionalPredicate(let p, let inner): return .optionalPredicate(p, presence: MacroPredicateTranslator.and(presence, inner))
        default: throw MacroPredicateTranslator.error("optional chaining that does not end in a key path or a condition")
        }
    }
}

extension PredicateExpressions.NilCoalesce: MacroTranslatable {
    /// `$0.age ?? 0` (compared later), `$0.chat?.title.contains("x") ?? false` (a condition).
    func translate(_ t: inout MacroPredicateTranslator) throws -> MacroTerm {
        let value = try t.term(lhs), fallback = try t.term(rhs)
        switch (value, fallback) {
        case (.path(let path), .constant(let constant)):
            return constant.isNull ? .path(path) : .coalesced(path, constant)
        case (.optionalPredicate(let p, let presence), .constant(.bool(let otherwise))):
            return .predicate(otherwise ? MacroPredicateTranslator.or(.not(presence), p) : MacroPredicateTranslator.and(presence, p))
        case (.operand, .constant(.integer(0))):
            return value  // a SUBQUERY count through an absent to-one is already 0
        case (.optionalOperand(let operand, let scope), .constant(.integer(0))):
            return .operand(operand, scope: scope)
        default:
            throw MacroPredicateTranslator.error("'??' other than a key path or an optional condition with a captured fallback")
        }
    }
}

extension PredicateExpressions.ForcedUnwrap: MacroTranslatable {
    /// `$0.age!`: the key path itself (comparisons with an absent value are false).
    func translate(_ t: inout MacroPredicateTranslator) throws -> MacroTerm {
        let value = try t.term(inner)
        switch value {
        case .path, .operand: return value
        case .optionalPredicate(let p, let presence): return .predicate(MacroPredicateTranslator.and(presence, p))
        default: throw MacroPredicateTranslator.error("'!' on something other than a key path or an optional condition")
        }
    }
}
