/// A filter for fetches: Core Data's NSPredicate, under a name Foundation does not use.
///
/// A predicate is a `Sendable` value tree. Build one with the operators on
/// ``PredicateOperand`` (`.key("age") > 30 && .key("name").beginsWith("A", options: .caseInsensitive)`);
/// the format-string parser and `#Predicate` translation produce the same tree. One evaluator
/// (``PredicateEvaluator``) gives the reference semantics every store must match.
public indirect enum FetchPredicate: Sendable, Hashable {
    /// Always true (`TRUEPREDICATE`) or always false (`FALSEPREDICATE`).
    case constant(Bool)
    /// All must hold.
    case and([FetchPredicate])
    /// At least one must hold.
    case or([FetchPredicate])
    /// The negation.
    case not(FetchPredicate)
    /// A comparison of two expressions.
    case comparison(PredicateComparison)

    /// A predicate that always holds.
    public static var truePredicate: FetchPredicate { .constant(true) }
    /// A predicate that never holds.
    public static var falsePredicate: FetchPredicate { .constant(false) }
}

/// One comparison: `left op right`, with string options and a to-many modifier.
public struct PredicateComparison: Sendable, Hashable {
    /// The left operand, usually a key path.
    public var left: PredicateOperand
    /// The operator.
    public var op: ComparisonOperator
    /// The right operand, usually a constant.
    public var right: PredicateOperand
    /// `[c]`, `[d]`, `[cd]` for string operators.
    public var options: StringComparisonOptions
    /// `ANY`, `ALL` or `NONE` for a left key path that passes through a to-many relationship.
    public var modifier: ComparisonModifier

    /// Creates a comparison.
    public init(
        _ left: PredicateOperand, _ op: ComparisonOperator, _ right: PredicateOperand,
        options: StringComparisonOptions = [], modifier: ComparisonModifier = .direct
    ) {
        self.left = left
        self.op = op
        self.right = right
        self.options = options
        self.modifier = modifier
    }
}

/// An operand of a comparison.
///
/// Only the subquery case is boxed: a whole `indirect` enum allocated every key path and
/// constant of every predicate built, and freed them again (with the comparison's box, a sixth
/// of counting one chat's messages on LMDB, perf).
public enum PredicateOperand: Sendable, Hashable {
    /// A key path from the evaluated object: `"name"`, `"chat.title"`.
    case keyPath(String)
    /// A constant value.
    case constant(AttributeValue)
    /// An object, by ID (compare a relationship with it).
    case object(ObjectID)
    /// A list of expressions (for `IN` and `BETWEEN`).
    case list([PredicateOperand])
    /// A `$VARIABLE`, substituted at evaluation.
    case variable(String)
    /// The evaluated object itself (`SELF`).
    case evaluatedObject
    /// `SUBQUERY(collection, $variable, predicate).@count`: how many members of the to-many
    /// key path `collection` satisfy `predicate` (whose key paths start at the member).
    indirect case subqueryCount(collection: String, variable: String, predicate: FetchPredicate)

    /// A key path expression.
    public static func key(_ path: String) -> PredicateOperand { .keyPath(path) }
}

/// The comparison operators of Core Data's predicate language.
public enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
    /// `==`
    case equal = "=="
    /// `!=`
    case notEqual = "!="
    /// `<`
    case lessThan = "<"
    /// `<=`
    case lessThanOrEqual = "<="
    /// `>`
    case greaterThan = ">"
    /// `>=`
    case greaterThanOrEqual = ">="
    /// `IN`: the left value is one of the right collection's values (a list, a dictionary's
    /// values, a to-many key path); with one string on the right, the left string is a
    /// substring of it (`'ab' IN name`), as NSComparisonPredicate has it for strings.
    case `in` = "IN"
    /// `BETWEEN {low, high}`, inclusive.
    case between = "BETWEEN"
    /// `BEGINSWITH`
    case beginsWith = "BEGINSWITH"
    /// `ENDSWITH`
    case endsWith = "ENDSWITH"
    /// `CONTAINS` (substring, or membership when the left side is a collection).
    case contains = "CONTAINS"
    /// `LIKE` with `*` and `?` wildcards.
    case like = "LIKE"
    /// `MATCHES`: the whole string matches an ICU regular expression.
    case matches = "MATCHES"
}

/// String comparison options: `[c]` case-insensitive, `[d]` diacritic-insensitive.
public struct StringComparisonOptions: OptionSet, Sendable, Hashable {
    /// The raw bits.
    public let rawValue: Int
    /// Creates options from raw bits.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// `[c]`
    public static let caseInsensitive = StringComparisonOptions(rawValue: 1)
    /// `[d]`
    public static let diacriticInsensitive = StringComparisonOptions(rawValue: 2)
}

/// How a comparison treats a left key path that yields many values.
public enum ComparisonModifier: String, Sendable, Hashable {
    /// A single value: key paths through to-many relationships are an error.
    case direct
    /// True if any value satisfies the comparison (`ANY`, `SOME`).
    case any = "ANY"
    /// True if every value does (`ALL`; vacuously true for none).
    case all = "ALL"
    /// True if no value does (`NONE`).
    case none = "NONE"
}
