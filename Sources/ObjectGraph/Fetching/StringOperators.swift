import Foundation
import Synchronization

/// The string operators of predicates, defined once: the shared evaluator uses them, and a
/// store that evaluates predicates natively (SQLite registers them as SQL functions) must call
/// these same functions so that every store answers alike.
public enum StringOperators {
    /// Whether `text op operand` holds with `options`, for `BEGINSWITH`, `ENDSWITH`,
    /// `CONTAINS` (substring), `LIKE`, `MATCHES`, and `==`, `!=`, `<`, `<=`, `>`, `>=` with
    /// `[c]`/`[d]` folding. Other operators return false.
    ///
    /// BEGINSWITH, ENDSWITH, CONTAINS and LIKE work on whole characters (extended grapheme
    /// clusters) of the folded strings; MATCHES is an ICU regular expression over scalars.
    public static func evaluate(_ op: ComparisonOperator, _ options: StringComparisonOptions, _ text: String, _ operand: String) -> Bool {
        switch op {
        case .beginsWith, .endsWith, .contains:
            let a = TextFolding.fold(text, options), b = TextFolding.fold(operand, options)
            switch op {
            case .beginsWith: return a.hasPrefix(b)
            case .endsWith: return a.hasSuffix(b)
            default: return containsCharacters(a, b)
            }
        case .like:
            return likePattern(operand, options).matches(text)
        case .matches:
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

    /// Whether `part` occurs in `text` as a run of whole characters (extended grapheme
    /// clusters, compared by canonical equivalence) — the unit `hasPrefix` and `hasSuffix` work
    /// on, so a skin-tone modifier is not found inside "👍🏽", nor a flag across two flags.
    static func containsCharacters(_ text: String, _ part: String) -> Bool {
        if part.isEmpty { return true }
        let t = Array(text), p = Array(part)
        guard p.count <= t.count else { return false }
        for start in 0...(t.count - p.count) where t[start] == p[0] {
            if t[start..<(start + p.count)].elementsEqual(p) { return true }
        }
        return false
    }

    private static let likePatterns = Guarded<[String: LikePattern]>([:])

    /// The folded LIKE pattern for `source` (cached).
    static func likePattern(_ source: String, _ options: StringComparisonOptions) -> LikePattern {
        let key = "\(options.rawValue)|\(source)"
        if let cached = likePatterns.withLock({ $0[key] }) { return cached }
        let compiled = LikePattern(source, options: options)
        likePatterns.withLock { cache in
            if cache.count > 1_000 { cache.removeAll() }
            cache[key] = compiled
        }
        return compiled
    }

    private static let patterns = Guarded<[String: CompiledPattern]>([:])

    /// The compiled regular expression for a `MATCHES` operand (cached): `[d]` folds the pattern
    /// like the text; `[c]` uses the regex engine's case folding, since folding a regex's source
    /// would change escapes such as `\D` into `\d`. (LIKE needs no regex: it matches whole
    /// characters of the folded text, see `LikePattern`.)
    public static func pattern(_ op: ComparisonOperator, _ source: String, _ options: StringComparisonOptions) throws -> CompiledPattern {
        let key = "\(op.rawValue)|\(options.rawValue)|\(source)"
        if let cached = patterns.withLock({ $0[key] }) { return cached }
        let unfolded = options.contains(.diacriticInsensitive) ? TextFolding.fold(source, .diacriticInsensitive) : source
        let compiled = try CompiledPattern(unfolded, caseInsensitive: options.contains(.caseInsensitive))
        patterns.withLock { cache in
            if cache.count > 1_000 { cache.removeAll() }
            cache[key] = compiled
        }
        return compiled
    }
}
