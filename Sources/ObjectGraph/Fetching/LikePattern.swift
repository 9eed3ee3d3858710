/// A LIKE pattern: `*` matches any run of characters (also none), `?` exactly one, and every
/// other character itself. A backslash makes the character after it literal (`\*` is a
/// star, `\\` one backslash), so text holding wildcards can be matched exactly, as with
/// Foundation's LIKE; a backslash that ends the pattern is itself.
///
/// Matching works on whole characters (extended grapheme clusters) compared by canonical
/// equivalence, after both the text and the pattern are folded with ``TextFolding`` for the
/// comparison's options. So `x LIKE[opts] p` without wildcards is exactly `x ==[opts] p`, and
/// `?` matches one character of the folded text ("é", "👍🏽" or a ZWJ family are one each).
struct LikePattern: Sendable {
    enum Token: Sendable, Equatable {
        case literal(Character)
        case one
        case anyRun
    }

    let tokens: [Token]
    let options: StringComparisonOptions

    /// Compiles `pattern` for `options`.
    init(_ pattern: String, options: StringComparisonOptions) {
        self.options = options
        var tokens: [Token] = []
        var escaped = false
        for character in TextFolding.fold(pattern, options) {
            if escaped {
                tokens.append(.literal(character))
                escaped = false
                continue
            }
            switch character {
            case "\\": escaped = true
            case "*": tokens.append(.anyRun)
            case "?": tokens.append(.one)
            default: tokens.append(.literal(character))
            }
        }
        if escaped { tokens.append(.literal("\\")) }
        self.tokens = tokens
    }

    /// Whether the whole of `text` matches.
    func matches(_ text: String) -> Bool {
        let characters = Array(TextFolding.fold(text, options))
        // Greedy matching with one backtrack point (the last `*`): linear in practice,
        // O(text × pattern) at worst, never exponential.
        var t = 0, p = 0
        var star: Int? = nil, resume = 0
        while t < characters.count {
            if p < tokens.count {
                switch tokens[p] {
                case .anyRun:
                    star = p; resume = t; p += 1
                    continue
                case .one:
                    t += 1; p += 1
                    continue
                case .literal(let c) where c == characters[t]:
                    t += 1; p += 1
                    continue
                default:
                    break
                }
            }
            guard let s = star else { return false }
            p = s + 1
            resume += 1
            t = resume
        }
        while p < tokens.count, tokens[p] == .anyRun { p += 1 }
        return p == tokens.count
    }
}
