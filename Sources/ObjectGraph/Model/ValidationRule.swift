import Foundation

/// A constraint an attribute's value must meet when its object is saved.
///
/// Each rule maps to the Core Data validation code it reports (see ``ValidationError/Code``).
/// Rules never apply to `nil`: whether `nil` is allowed is the attribute's `isOptional`.
public enum ValidationRule: Sendable, Hashable, CustomStringConvertible {
    /// The number must be at least this (code 1620, "number too small").
    case minimum(Double)
    /// The number must be at most this (code 1610, "number too large").
    case maximum(Double)
    /// The string must have at least this many characters (code 1670).
    case minLength(Int)
    /// The string must have at most this many characters (code 1660).
    case maxLength(Int)
    /// The whole string must match this regular expression, ICU syntax as NSPredicate's
    /// MATCHES (code 1680).
    case pattern(String)
    /// The date must not be before this one (code 1640, "date too soon").
    case earliest(Date)
    /// The date must not be after this one (code 1630, "date too late").
    case latest(Date)

    /// The rule as a short phrase, for messages.
    public var description: String {
        switch self {
        case .minimum(let v): return "minimum \(v)"
        case .maximum(let v): return "maximum \(v)"
        case .minLength(let v): return "minimum length \(v)"
        case .maxLength(let v): return "maximum length \(v)"
        case .pattern(let p): return "pattern \(p)"
        case .earliest(let d): return "earliest \(d.formatted(.iso8601))"
        case .latest(let d): return "latest \(d.formatted(.iso8601))"
        }
    }

    /// Whether the rule can apply to attributes of `type`.
    func applies(to type: AttributeType) -> Bool {
        switch self {
        case .minimum, .maximum: return type.isNumeric
        case .minLength, .maxLength, .pattern: return type == .string
        case .earliest, .latest: return type == .date
        }
    }
}

/// A compiled regular expression shared between threads.
///
/// `NSRegularExpression` is documented as safe to use from several threads at once for
/// matching; it is not marked `Sendable` on Linux, hence the unchecked conformance.
public final class CompiledPattern: @unchecked Sendable {
    /// The source pattern.
    public let pattern: String
    let regex: NSRegularExpression

    /// Compiles `pattern`; throws when it is not a valid ICU regular expression.
    public init(_ pattern: String, caseInsensitive: Bool = false) throws {
        self.pattern = pattern
        // Anchoring inside the pattern (not with `.anchored`) makes alternations such as
        // `a|ab` match "ab" whole, as MATCHES requires.
        self.regex = try NSRegularExpression(
            pattern: "\\A(?:" + pattern + ")\\z",
            options: caseInsensitive ? [.caseInsensitive] : [])
    }

    /// Whether the whole of `string` matches (MATCHES semantics, not a substring search).
    public func matchesWhole(_ string: String) -> Bool {
        let range = NSRange(string.startIndex..<string.endIndex, in: string)
        return regex.firstMatch(in: string, options: [], range: range) != nil
    }
}
