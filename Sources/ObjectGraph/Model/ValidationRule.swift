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
    /// The string must have at least this many characters (code 1670). Characters are
    /// Swift's (extended grapheme clusters: "👍🏽" and "é" decomposed are one each), where
    /// Core Data counts UTF-16 units (four and two for those): the count a person sees.
    case minLength(Int)
    /// The string must have at most this many characters (code 1660), counted as for
    /// ``minLength(_:)``.
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
        case .earliest(let d): return "earliest \(Validator.shown(d))"
        case .latest(let d): return "latest \(Validator.shown(d))"
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

extension ValidationRule {
    /// Why `rules` together admit no value, or check nothing, or `nil` when they are usable.
    ///
    /// A minimum above the maximum (or an earliest date after the latest) fails every value
    /// but nil, as a maximum count below the minimum would; a negative length is no length; a
    /// NaN bound compares with no number, so its rule never fails (and a NaN date bound with
    /// no date, so its rule fails every date).
    static func contradiction(in rules: [ValidationRule]) -> String? {
        var minimum: Double?, maximum: Double?, minLength: Int?, maxLength: Int?, earliest: Date?, latest: Date?
        for rule in rules {
            switch rule {
            case .minimum(let v), .maximum(let v):
                if v.isNaN { return "rule '\(rule)' compares with no number, so it never fails" }
                if case .minimum = rule { minimum = Swift.max(minimum ?? v, v) } else { maximum = Swift.min(maximum ?? v, v) }
            case .minLength(let v), .maxLength(let v):
                if v < 0 { return "rule '\(rule)' is negative" }
                if case .minLength = rule { minLength = Swift.max(minLength ?? v, v) } else { maxLength = Swift.min(maxLength ?? v, v) }
            case .earliest(let d), .latest(let d):
                if d.timeIntervalSinceReferenceDate.isNaN { return "rule '\(rule)' compares with no date, so every date fails it" }
                if case .earliest = rule { earliest = Swift.max(earliest ?? d, d) } else { latest = Swift.min(latest ?? d, d) }
            case .pattern: break
            }
        }
        if let minimum, let maximum, minimum > maximum {
            return "minimum \(minimum) is above maximum \(maximum): no value can pass"
        }
        if let minLength, let maxLength, minLength > maxLength {
            return "minimum length \(minLength) is above maximum length \(maxLength): no string can pass"
        }
        if let earliest, let latest, earliest > latest {
            return "earliest \(earliest.formatted(.iso8601)) is after latest \(latest.formatted(.iso8601)): no date can pass"
        }
        return nil
    }

    /// Whether `value` meets the rule, judged as the validator does at save (nil and values of
    /// another kind are not the rule's to judge); `pattern` is a `.pattern` rule's compiled form.
    func admits(_ value: AttributeValue, pattern: CompiledPattern?) -> Bool {
        switch (self, value) {
        case (.minimum(let bound), _): return Validator.isBelow(value, bound) != true
        case (.maximum(let bound), _): return Validator.isAbove(value, bound) != true
        case (.minLength(let bound), .string(let s)): return s.count >= bound
        case (.maxLength(let bound), .string(let s)): return s.count <= bound
        case (.pattern, .string(let s)): return pattern?.matchesWhole(s) ?? true
        case (.earliest(let bound), .date(let d)): return !Validator.isBefore(d, bound)
        case (.latest(let bound), .date(let d)): return !Validator.isAfter(d, bound)
        default: return true
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
        let options: NSRegularExpression.Options = caseInsensitive ? [.caseInsensitive] : []
        // The pattern must be a regular expression by itself: wrapped below, an unbalanced
        // `)` closes the wrapper's group instead, so `a)|(.*` compiled and matched every
        // string (anything beginning with "a", or anything at all) instead of being refused.
        // (Foundation refuses an empty pattern, which wrapped matches the empty string.)
        if !pattern.isEmpty { _ = try NSRegularExpression(pattern: pattern, options: options) }
        // Anchoring inside the pattern (not with `.anchored`) makes alternations such as
        // `a|ab` match "ab" whole, as MATCHES requires. A valid pattern the wrapper cannot
        // close (an unterminated `\Q` quote, a `(?x)` comment running to its end) is refused
        // here rather than matched as something else.
        self.regex = try NSRegularExpression(pattern: "\\A(?:" + pattern + ")\\z", options: options)
    }

    /// Whether the whole of `string` matches (MATCHES semantics, not a substring search).
    public func matchesWhole(_ string: String) -> Bool {
        let range = NSRange(string.startIndex..<string.endIndex, in: string)
        return regex.firstMatch(in: string, options: [], range: range) != nil
    }
}
