import Foundation

/// A key path from the evaluated object (or from a SUBQUERY member), with what it ends in.
struct MacroPath {
    enum Kind {
        /// An object itself: the evaluated object or a SUBQUERY member.
        case object(EntityDescription)
        /// An attribute's value.
        case attribute(AttributeDescription)
        /// A to-one relationship, and its destination.
        case toOne(RelationshipDescription, EntityDescription)
        /// A to-many relationship, and its destination.
        case toMany(RelationshipDescription, EntityDescription)
        /// `@count` of a to-many relationship.
        case count
        /// The identity (`objectID`) of the object the components lead to.
        case objectID
    }

    var components: [String]
    var kind: Kind
    /// The SUBQUERY nesting the path starts in (0: the fetched object).
    var scope: Int

    var text: String { components.joined(separator: ".") }
    /// The path as an operand: `SELF` for no components.
    var operand: PredicateOperand { components.isEmpty ? .evaluatedObject : .keyPath(text) }

    /// The entity whose properties the next key-path step reads.
    var objectEntity: EntityDescription? {
        switch kind {
        case .object(let entity), .toOne(_, let entity): return entity
        default: return nil
        }
    }
}

/// A translated `#Predicate` sub-expression.
enum MacroTerm {
    /// A key path.
    case path(MacroPath)
    /// `path ?? value`.
    case coalesced(MacroPath, AttributeValue)
    /// A captured value (or a sub-expression that reads no object), in stored form.
    case constant(AttributeValue)
    /// A captured ``ObjectID``.
    case object(ObjectID)
    /// A captured array or set.
    case list([PredicateOperand])
    /// A captured range.
    case range(lower: AttributeValue, upper: AttributeValue, closed: Bool)
    /// A condition.
    case predicate(FetchPredicate)
    /// An optional condition (`$0.chat?.title.contains("x")`): `nil` unless `presence` holds.
    case optionalPredicate(FetchPredicate, presence: FetchPredicate)
    /// `collection.filter { predicate }`, the members that pass (the predicate is the member's).
    case filtered(MacroPath, FetchPredicate)
    /// A computed operand (`SUBQUERY(…).@count`) valid in `scope`.
    case operand(PredicateOperand, scope: Int)
    /// A computed operand reached through optional chaining (`$0.imprint?.writers.filter {…}
    /// .count`): `nil` in Swift when the chain is absent, where the operand counts 0. Only
    /// `?? 0` makes it an operand again; anything else is refused, not answered as if it were 0.
    case optionalOperand(PredicateOperand, scope: Int)
    /// A captured value with no stored form; only its type name is kept, for messages.
    case opaque(String)
}

/// Translates one `#Predicate` expression tree; each supported `PredicateExpressions` node
/// conforms to ``MacroTranslatable`` and calls back into the translator for its operands.
protocol MacroTranslatable {
    func translate(_ translator: inout MacroPredicateTranslator) throws -> MacroTerm
}

struct MacroPredicateTranslator {
    let model: ManagedObjectModel
    let probe: KeyPathProbe
    private var bindings: [PredicateExpressions.VariableID: MacroTerm] = [:]
    /// The SUBQUERY nesting being translated.
    private(set) var scope = 0

    init(model: ManagedObjectModel, probe: KeyPathProbe) {
        self.model = model
        self.probe = probe
    }

    mutating func bind(_ variable: PredicateExpressions.VariableID, to term: MacroTerm) { bindings[variable] = term }

    func binding(of variable: PredicateExpressions.VariableID) throws -> MacroTerm {
        guard let term = bindings[variable] else { throw Self.error("a variable that is not bound in the predicate") }
        return term
    }

    // MARK: Walking

    /// The term for any node: a constant when the node reads no object, else the node's own
    /// translation.
    mutating func term(_ expression: any PredicateExpression) throws -> MacroTerm {
        if let folded = Self.fold(expression) { return folded }
        guard let node = expression as? any MacroTranslatable else { throw Self.unsupported(expression) }
        return try node.translate(&self)
    }

    /// The node as a condition.
    mutating func predicate(_ expression: any PredicateExpression) throws -> FetchPredicate {
        try condition(term(expression), what: Self.name(of: expression))
    }

    /// Evaluates a node that reads no variable (Foundation throws for an unbound one).
    private static func fold<E: PredicateExpression>(_ expression: E) -> MacroTerm? {
        guard let value = try? expression.evaluate(PredicateBindings()) else { return nil }
        return constant(value)
    }

    /// Translates `body` with `variable` bound to a member of the to-many `collection`, in a
    /// SUBQUERY scope of its own.
    mutating func member<T>(
        _ variable: PredicateExpressions.VariableID, of collection: MacroPath, _ body: (inout Self) throws -> T
    ) throws -> T {
        guard case .toMany(_, let destination) = collection.kind, collection.scope == scope else {
            throw Self.error("contains(where:), allSatisfy and filter on something other than a to-many relationship of the object ('\(collection.text)')")
        }
        scope += 1
        bindings[variable] = .path(MacroPath(components: [], kind: .object(destination), scope: scope))
        defer {
            bindings[variable] = nil
            scope -= 1
        }
        return try body(&self)
    }

    // MARK: Conditions

    /// A term used as a condition.
    func condition(_ term: MacroTerm, what: String) throws -> FetchPredicate {
        switch term {
        case .predicate(let p): return p
        case .optionalPredicate(let p, let presence): return Self.and(presence, p)
        case .constant(.bool(let value)): return .constant(value)
        case .path(let path):
            if case .attribute(let attribute) = path.kind, attribute.type == .boolean {
                return .comparison(PredicateComparison(try operand(path), .equal, .constant(.bool(true))))
            }
        case .coalesced(let path, .bool):
            // `$0.flag ?? false` on an optional Boolean: `(flag ?? false) == true`.
            if case .attribute(let attribute) = path.kind, attribute.type == .boolean {
                return try compare(term, .equal, .constant(.bool(true)), what: what)
            }
        default: break
        }
        throw Self.error("\(what) used as a condition")
    }

    static func and(_ lhs: FetchPredicate, _ rhs: FetchPredicate) -> FetchPredicate {
        func parts(_ p: FetchPredicate) -> [FetchPredicate] { if case .and(let items) = p { return items } else { return [p] } }
        return .and(parts(lhs) + parts(rhs))
    }

    static func or(_ lhs: FetchPredicate, _ rhs: FetchPredicate) -> FetchPredicate {
        func parts(_ p: FetchPredicate) -> [FetchPredicate] { if case .or(let items) = p { return items } else { return [p] } }
        return .or(parts(lhs) + parts(rhs))
    }

    static func isNil(_ path: PredicateOperand, _ isNil: Bool) -> FetchPredicate {
        .comparison(PredicateComparison(path, isNil ? .equal : .notEqual, .constant(.null)))
    }

    // MARK: Comparisons

    /// A path usable in the current scope, as an operand.
    func operand(_ path: MacroPath) throws -> PredicateOperand {
        guard path.scope == scope else {
            throw Self.error("a reference to the outer object ('\(path.text.isEmpty ? "$0" : path.text)') inside contains(where:), allSatisfy or filter, whose test can read only the member")
        }
        return path.operand
    }

    private func valueOperand(_ term: MacroTerm, what: String) throws -> PredicateOperand {
        switch term {
        case .constant(let value): return .constant(value)
        case .object(let id): return .object(id)
        case .list(let items): return .list(items)
        case .range(let lower, let upper, _): return .list([.constant(lower), .constant(upper)])
        case .path(let path): return try operand(path)
        case .operand(let operand, let scope) where scope == self.scope: return operand
        case .opaque(let type): throw Self.error("a captured \(type) value (only values with a stored form can be compared: numbers, strings, dates, data, UUIDs, URLs, decimals, transformable values, ObjectIDs and arrays of them)")
        default: throw Self.error("\(what) with a condition or an unsupported operand on its right")
        }
    }

    private static func isPathLike(_ term: MacroTerm) -> Bool {
        switch term {
        case .path, .coalesced, .operand: return true
        default: return false
        }
    }

    private static func mirrored(_ op: ComparisonOperator) -> ComparisonOperator? {
        switch op {
        case .equal, .notEqual: return op
        case .lessThan: return .greaterThan
        case .lessThanOrEqual: return .greaterThanOrEqual
        case .greaterThan: return .lessThan
        case .greaterThanOrEqual: return .lessThanOrEqual
        default: return nil
        }
    }

    /// `lhs op rhs`, for the node named `what`.
    func compare(_ lhs: MacroTerm, _ op: ComparisonOperator, _ rhs: MacroTerm, what: String) throws -> FetchPredicate {
        if op == .equal || op == .notEqual, let equality = try conditionEquality(lhs, rhs, negated: op == .notEqual) {
            return equality
        }
        if !Self.isPathLike(lhs), Self.isPathLike(rhs), let flipped = Self.mirrored(op) {
            return try compare(rhs, flipped, lhs, what: what)
        }
        switch lhs {
        case .path(let path):
            return .comparison(PredicateComparison(try operand(path), op, try valueOperand(rhs, what: what)))
        case .operand(let left, let scope) where scope == self.scope:
            return .comparison(PredicateComparison(left, op, try valueOperand(rhs, what: what)))
        case .coalesced(let path, let fallback):
            // (path ?? fallback) op rhs: path op rhs when the value is present, else fallback op rhs.
            let right = try valueOperand(rhs, what: what)
            let left = try operand(path)
            let present = PredicateComparison(left, op, right)
            guard let fallbackHolds = Self.holds(fallback, op, right) else {
                throw Self.error("\(what) on a '??' value with a right side that is not a constant")
            }
            if fallbackHolds { return Self.or(.comparison(present), Self.isNil(left, true)) }
            // Comparisons with nil are false except !=, and == / IN with a nil on the right.
            let rightHasNil: Bool
            switch right {
            case .constant(let v): rightHasNil = v.isNull
            case .list(let items): rightHasNil = items.contains(.constant(.null))
            default: rightHasNil = false
            }
            if op == .notEqual || rightHasNil { return Self.and(Self.isNil(left, false), .comparison(present)) }
            return .comparison(present)
        default:
            throw Self.error("\(what) between values that are not key paths of the object")
        }
    }

    /// `condition == true`, `optionalCondition != nil`, `condition == otherCondition`; `nil` if
    /// neither side is a condition.
    private func conditionEquality(_ lhs: MacroTerm, _ rhs: MacroTerm, negated: Bool) throws -> FetchPredicate? {
        func split(_ term: MacroTerm) -> (FetchPredicate, FetchPredicate?)? {
            switch term {
            case .predicate(let p): return (p, nil)
            case .optionalPredicate(let p, let presence): return (p, presence)
            default: return nil
            }
        }
        var (left, right) = (split(lhs), split(rhs))
        // A Boolean attribute compared with a condition (`$0.active == ($0.rating > 4)`): read
        // as the condition `active == YES`, it is Swift's == of two Booleans below. (Only a
        // non-optional Bool compiles there: #Predicate does not promote a condition to Bool?.)
        if (left == nil) != (right == nil), let value = try booleanCondition(left == nil ? lhs : rhs) {
            if left == nil { left = (value, nil) } else { right = (value, nil) }
        }
        let result: FetchPredicate
        switch (left, right) {
        case (nil, nil): return nil
        case (let condition?, nil), (nil, let condition?):
            let other = left == nil ? lhs : rhs
            let (p, presence) = condition
            switch other {
            case .constant(.bool(let value)):
                let body: FetchPredicate = value ? p : .not(p)
                result = presence.map { Self.and($0, body) } ?? body
            case .constant(.null):
                result = presence.map { .not($0) } ?? .constant(false)
            default:
                throw Self.error("a condition compared with something other than true, false, nil or another condition")
            }
        case (let a?, let b?):
            // Swift's == on two optional Booleans: both nil, or both present and equal. (Folding
            // each side into "present and true" made nil equal false, so `x?.c == y?.d` held
            // when one side was nil and the other false.)
            let same = Self.or(Self.and(a.0, b.0), Self.and(.not(a.0), .not(b.0)))
            switch (a.1, b.1) {
            case (nil, nil): result = same
            case (let present?, nil), (nil, let present?): result = Self.and(present, same)
            case (let first?, let second?):
                result = Self.or(Self.and(.not(first), .not(second)), Self.and(Self.and(first, second), same))
            }
        }
        return negated ? .not(result) : result
    }

    /// A Boolean attribute, or one with a `??` fallback, as a condition; `nil` for anything else.
    private func booleanCondition(_ term: MacroTerm) throws -> FetchPredicate? {
        switch term {
        case .path(let path), .coalesced(let path, .bool):
            guard case .attribute(let attribute) = path.kind, attribute.type == .boolean else { return nil }
            return try condition(term, what: "a Boolean attribute")
        default: return nil
        }
    }

    /// Whether the constant `value op right` holds, for folding `??` fallbacks.
    private static func holds(_ value: AttributeValue, _ op: ComparisonOperator, _ right: PredicateOperand) -> Bool? {
        func ordered(_ r: AttributeValue) -> ComparisonResult? { AttributeValue.compare(value, r) }
        switch (op, right) {
        case (.equal, .constant(let r)): return AttributeValue.predicateEqual(value, r)
        case (.notEqual, .constant(let r)): return !AttributeValue.predicateEqual(value, r)
        case (.lessThan, .constant(let r)): return ordered(r) == .orderedAscending
        case (.lessThanOrEqual, .constant(let r)): return ordered(r).map { $0 != .orderedDescending } ?? false
        case (.greaterThan, .constant(let r)): return ordered(r) == .orderedDescending
        case (.greaterThanOrEqual, .constant(let r)): return ordered(r).map { $0 != .orderedAscending } ?? false
        case (.in, .list(let items)):
            return items.contains { if case .constant(let r) = $0 { return AttributeValue.predicateEqual(value, r) } else { return false } }
        case (.between, .list(let items)):
            guard items.count == 2, case .constant(let low) = items[0], case .constant(let high) = items[1],
                  let a = ordered(low), let b = ordered(high) else { return false }
            return a != .orderedAscending && b != .orderedDescending
        case (.beginsWith, .constant(.string(let r))), (.endsWith, .constant(.string(let r))), (.contains, .constant(.string(let r))):
            guard case .string(let s) = value else { return false }
            return op == .beginsWith ? s.hasPrefix(r) : op == .endsWith ? s.hasSuffix(r) : (r.isEmpty || s.contains(r))
        default: return nil
        }
    }

    // MARK: Errors and names

    static func error(_ what: String) -> ObjectGraphError {
        ObjectGraphError(.invalidFetch, "#Predicate: \(what) cannot be translated to a fetch predicate")
    }

    private static let friendlyNames: [String: String] = [
        "Arithmetic": "arithmetic (+, -, *) on stored values",
        "UnaryMinus": "negation (-) of a stored value",
        "IntDivision": "division of stored values", "IntRemainder": "remainder (%) of stored values",
        "FloatDivision": "division of stored values",
        "StringContainsRegex": "a regular expression",
        "DictionaryKeySubscript": "a dictionary subscript", "DictionaryKeyDefaultValueSubscript": "a dictionary subscript",
        "CollectionIndexSubscript": "a collection subscript", "CollectionRangeSubscript": "a collection subscript",
        "ConditionalCast": "a cast (as?)", "ForceCast": "a cast (as!)", "TypeCheck": "a type check (is)",
        "SequenceMaximum": "max() of stored values", "SequenceMinimum": "min() of stored values",
        "ExpressionEvaluate": "an #Expression evaluation",
        "ClosedRange": "a range whose bounds read the object", "Range": "a range whose bounds read the object",
    ]

    /// The node's type without generic arguments: "Arithmetic".
    static func name(of expression: any PredicateExpression) -> String {
        String(String(describing: type(of: expression)).prefix { $0 != "<" })
    }

    static func unsupported(_ expression: any PredicateExpression) -> ObjectGraphError {
        let name = name(of: expression)
        return error(friendlyNames[name] ?? "\(name) (\(String(describing: type(of: expression))))")
    }
}
