import Foundation

// Operators that assemble predicates in code: `.key("age") >= 18 && .key("name") == "Ada"`.
// Values are anything `AttributeValueConvertible` (Swift scalars, strings, dates, …).

extension PredicateOperand {
    /// `self == value`
    public static func == (lhs: PredicateOperand, rhs: some AttributeValueConvertible) -> FetchPredicate {
        .comparison(PredicateComparison(lhs, .equal, .constant(rhs.attributeValue)))
    }
    /// `self != value`
    public static func != (lhs: PredicateOperand, rhs: some AttributeValueConvertible) -> FetchPredicate {
        .comparison(PredicateComparison(lhs, .notEqual, .constant(rhs.attributeValue)))
    }
    /// `self < value`
    public static func < (lhs: PredicateOperand, rhs: some AttributeValueConvertible) -> FetchPredicate {
        .comparison(PredicateComparison(lhs, .lessThan, .constant(rhs.attributeValue)))
    }
    /// `self <= value`
    public static func <= (lhs: PredicateOperand, rhs: some AttributeValueConvertible) -> FetchPredicate {
        .comparison(PredicateComparison(lhs, .lessThanOrEqual, .constant(rhs.attributeValue)))
    }
    /// `self > value`
    public static func > (lhs: PredicateOperand, rhs: some AttributeValueConvertible) -> FetchPredicate {
        .comparison(PredicateComparison(lhs, .greaterThan, .constant(rhs.attributeValue)))
    }
    /// `self >= value`
    public static func >= (lhs: PredicateOperand, rhs: some AttributeValueConvertible) -> FetchPredicate {
        .comparison(PredicateComparison(lhs, .greaterThanOrEqual, .constant(rhs.attributeValue)))
    }
    /// `self == object` for a to-one key path (`nil` matches an empty relationship).
    public static func == (lhs: PredicateOperand, rhs: ObjectID?) -> FetchPredicate {
        .comparison(PredicateComparison(lhs, .equal, rhs.map { .object($0) } ?? .constant(.null)))
    }
    /// `self != object` for a to-one key path; `!= nil` matches a set relationship, and
    /// `.key("age") != nil` a present attribute value.
    public static func != (lhs: PredicateOperand, rhs: ObjectID?) -> FetchPredicate {
        .comparison(PredicateComparison(lhs, .notEqual, rhs.map { .object($0) } ?? .constant(.null)))
    }
    /// `self IN values`
    public func isIn(_ values: [some AttributeValueConvertible]) -> FetchPredicate {
        .comparison(PredicateComparison(self, .in, .list(values.map { .constant($0.attributeValue) })))
    }
    /// `self BETWEEN {low, high}`
    public func between(_ low: some AttributeValueConvertible, _ high: some AttributeValueConvertible) -> FetchPredicate {
        .comparison(PredicateComparison(self, .between, .list([.constant(low.attributeValue), .constant(high.attributeValue)])))
    }
    /// `self BEGINSWITH[options] prefix`
    public func beginsWith(_ prefix: String, options: StringComparisonOptions = []) -> FetchPredicate {
        .comparison(PredicateComparison(self, .beginsWith, .constant(.string(prefix)), options: options))
    }
    /// `self ENDSWITH[options] suffix`
    public func endsWith(_ suffix: String, options: StringComparisonOptions = []) -> FetchPredicate {
        .comparison(PredicateComparison(self, .endsWith, .constant(.string(suffix)), options: options))
    }
    /// `self CONTAINS[options] text`
    public func contains(_ text: String, options: StringComparisonOptions = []) -> FetchPredicate {
        .comparison(PredicateComparison(self, .contains, .constant(.string(text)), options: options))
    }
    /// `self LIKE[options] pattern` (`*` any run, `?` one character, `\` before either for itself).
    public func like(_ pattern: String, options: StringComparisonOptions = []) -> FetchPredicate {
        .comparison(PredicateComparison(self, .like, .constant(.string(pattern)), options: options))
    }
    /// `self MATCHES[options] regex`
    public func matches(_ regex: String, options: StringComparisonOptions = []) -> FetchPredicate {
        .comparison(PredicateComparison(self, .matches, .constant(.string(regex)), options: options))
    }
}

extension FetchPredicate {
    /// Both must hold.
    public static func && (lhs: FetchPredicate, rhs: FetchPredicate) -> FetchPredicate {
        switch (lhs, rhs) {
        case (.and(let a), .and(let b)): return .and(a + b)
        case (.and(let a), _): return .and(a + [rhs])
        default: return .and([lhs, rhs])
        }
    }
    /// Either must hold.
    public static func || (lhs: FetchPredicate, rhs: FetchPredicate) -> FetchPredicate {
        switch (lhs, rhs) {
        case (.or(let a), .or(let b)): return .or(a + b)
        case (.or(let a), _): return .or(a + [rhs])
        default: return .or([lhs, rhs])
        }
    }
    /// The negation.
    public static prefix func ! (operand: FetchPredicate) -> FetchPredicate { .not(operand) }

    /// `ANY keyPath op value` for key paths through to-many relationships.
    public static func any(_ keyPath: String, _ op: ComparisonOperator, _ value: some AttributeValueConvertible, options: StringComparisonOptions = []) -> FetchPredicate {
        .comparison(PredicateComparison(.keyPath(keyPath), op, .constant(value.attributeValue), options: options, modifier: .any))
    }
    /// `ALL keyPath op value`.
    public static func all(_ keyPath: String, _ op: ComparisonOperator, _ value: some AttributeValueConvertible, options: StringComparisonOptions = []) -> FetchPredicate {
        .comparison(PredicateComparison(.keyPath(keyPath), op, .constant(value.attributeValue), options: options, modifier: .all))
    }
    /// `NONE keyPath op value`.
    public static func none(_ keyPath: String, _ op: ComparisonOperator, _ value: some AttributeValueConvertible, options: StringComparisonOptions = []) -> FetchPredicate {
        .comparison(PredicateComparison(.keyPath(keyPath), op, .constant(value.attributeValue), options: options, modifier: .none))
    }
}

extension FetchPredicate {
    /// A key path expression, so a chain such as `.key("name").beginsWith("A")` can start where
    /// a `FetchPredicate` is expected.
    public static func key(_ path: String) -> PredicateOperand { .keyPath(path) }
}
