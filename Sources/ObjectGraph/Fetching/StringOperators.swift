import Foundation
import Synchronization

/// The string operators of predicates, defined once: the shared evaluator uses them, and a
/// store that evaluates predicates natively (SQLite registers them as SQL functions) must call
/// these same functions so that every store answers alike.
public enum StringOperators {
    /// Whether `text op operand` holds with `options`, for `BEGINSWITH`, `ENDSWITH`,
    /// `CONTAINS` (substring), `LIKE`, `MATCHES`, and `==`, `!=`, `<`, `<=`, `>`, `>=` with
    /// `[c]`/`[d]` folding. Other operators return false.
    public static func evaluate(_ op: ComparisonOperator, _ options: StringComparisonOptions, _ text: String, _ operand: String) -> Bool {
        switch op {
        case .beginsWith, .endsWith, .contains:
            let a = TextFolding.fold(text, options), b = TextFolding.fold(operand, options)
            switch op {
            case .beginsWith: return a.hasPrefix(b)
            case .endsWith: return a.hasSuffix(b)
            default: return b.isEmpty || a.contains(b)
            }
        case .like, .matches:
            guard let pattern = try? pattern(op, operand, options) else { return false }
            let folded = options.contains(.diacriticInsensitive) ? TextFolding.fold(text, .diacriticInsensitive) : text
            return pattern.matchesWhole(folded)
        case .equal, .notEqual, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            let order = AttributeValue.compare(.string(TextFolding.fold(text, options)), .string(TextFolding.fold(operand, options)))
            switch op {
            case .equal: return order == .orderedSame
            case .notEqual: return order != .orderedSame
            case .lessThan: return order == .orderedAscending
            case .lessThanOrEqual: return order != .orderedDescending
            case .greaterThan: return order == .orderedDescending
            default: return order != .orderedAscending
            }
        case .in, .between:
            return false
        }
    }

    private static let patterns = Mutex<[String: CompiledPattern]>([:])

    /// The compiled regular expression for a `LIKE` or `MATCHES` operand (cached): `[d]` folds
    /// the pattern like the text; `[c]` uses the regex engine's case folding, since folding a
    /// regex's source would change escapes such as `\D` into `\d`.
    public static func pattern(_ op: ComparisonOperator, _ source: String, _ options: StringComparisonOptions) throws -> CompiledPattern {
        let key = "\(op.rawValue)|\(options.rawValue)|\(source)"
        if let cached = patterns.withLock({ $0[key] }) { return cached }
        let unfolded = options.contains(.diacriticInsensitive) ? TextFolding.fold(source, .diacriticInsensitive) : source
        let regex = op == .like ? likeToRegex(unfolded) : unfolded
        let compiled = try CompiledPattern(regex, caseInsensitive: options.contains(.caseInsensitive))
        patterns.withLock { cache in
            if cache.count > 1_000 { cache.removeAll() }
            cache[key] = compiled
        }
        return compiled
    }

    /// LIKE's wildcards as an ICU regex: `*` any run, `?` one character, everything else literal.
    static func likeToRegex(_ pattern: String) -> String {
        var regex = "(?s)"
        for character in pattern {
            switch character {
            case "*": regex += ".*"
            case "?": regex += "."
            default: regex += NSRegularExpression.escapedPattern(for: String(character))
            }
        }
        return regex
    }
}
