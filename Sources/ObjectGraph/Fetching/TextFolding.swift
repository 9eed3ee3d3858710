import Foundation

/// The one definition of `[c]`, `[d]` and `[cd]` string folding, shared by the evaluator,
/// sorting, and any store that evaluates predicates natively (which must call this, not its
/// own folding, so that every store answers alike).
///
/// Case folding is Unicode full case folding (so "ß" matches "SS"), diacritic folding removes
/// combining marks after canonical decomposition (so "é" matches "e"); both are
/// locale-independent, so Turkish dotless ı folds only to itself.
public enum TextFolding {
    /// Folds `text` as `options` say; with no options, returns it unchanged.
    public static func fold(_ text: String, _ options: StringComparisonOptions) -> String {
        if options.isEmpty { return text }
        var folding: String.CompareOptions = []
        if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
        return text.folding(options: folding, locale: nil)
    }
}
