/// Splits a predicate format string into tokens, each with its offset in Unicode scalars.
struct PredicateLexer {
    enum Kind: Equatable {
        case identifier(String)      // also keywords; compared case-insensitively by the parser
        case string(String)
        case integer(Int64)
        case double(Double)
        case symbol(String)          // == != < <= > >= && || ! ( ) { } , . [ ] =
        case format(String)          // %@ %K %d …
        case variable(String)        // $name
        case end
    }

    struct Token {
        let kind: Kind
        let position: Int
        let text: String
    }

    static let maximumLength = 100_000

    let format: String

    func tokens() throws -> [Token] {
        // Scalar by scalar, as NSPredicate reads its format (by code unit), not by grapheme
        // cluster: a quote followed by a combining mark, a variation selector or a skin-tone
        // modifier (`name ENDSWITH '\u{301}'`) was one Character, so no quote was seen and
        // the format failed to parse (an audit). Marks continue an identifier instead.
        let characters = format.unicodeScalars.map(Character.init)
        guard characters.count <= Self.maximumLength else {
            throw PredicateParseError(format: String(format.prefix(200)), position: 0, expected: "a format of at most \(Self.maximumLength) characters", found: "\(characters.count) characters")
        }
        var tokens: [Token] = []
        var index = 0
        func error(_ expected: String, _ found: String) -> PredicateParseError {
            PredicateParseError(format: format, position: index, expected: expected, found: found)
        }
        while index < characters.count {
            let c = characters[index]
            let start = index
            if c.isWhitespace { index += 1; continue }
            if c.isLetter || c == "_" || c == "@" || c == "#" {
                index += 1
                while index < characters.count, characters[index].isLetter || characters[index].isNumber || characters[index] == "_" || Self.isMark(characters[index]) {
                    index += 1
                }
                var text = String(characters[start..<index])
                if text.hasPrefix("#") { text.removeFirst() }  // #keyword escapes a reserved word
                guard !text.isEmpty, text != "@" else { throw error("a name", "'\(c)'") }
                tokens.append(Token(kind: .identifier(text), position: start, text: String(characters[start..<index])))
                continue
            }
            if c.isNumber || (c == "-" && index + 1 < characters.count && characters[index + 1].isNumber && !(tokens.last.map(Self.endsOperand) ?? false)) {
                index += 1
                var isDouble = false
                while index < characters.count {
                    let d = characters[index]
                    if d.isNumber { index += 1 }
                    else if d == "." && !isDouble && index + 1 < characters.count && characters[index + 1].isNumber { isDouble = true; index += 1 }
                    else if (d == "e" || d == "E") && index + 1 < characters.count && (characters[index + 1].isNumber || characters[index + 1] == "-" || characters[index + 1] == "+") {
                        isDouble = true; index += 2
                    } else { break }
                }
                let text = String(characters[start..<index])
                if !isDouble, let value = Int64(text) {
                    tokens.append(Token(kind: .integer(value), position: start, text: text))
                } else if let value = Double(text) {
                    tokens.append(Token(kind: .double(value), position: start, text: text))
                } else {
                    index = start
                    throw error("a number", "'\(text)'")
                }
                continue
            }
            if c == "\"" || c == "'" {
                index += 1
                var value = ""
                var closed = false
                while index < characters.count {
                    let d = characters[index]
                    if d == c { closed = true; index += 1; break }
                    if d == "\\" {
                        guard index + 1 < characters.count else { break }
                        let e = characters[index + 1]
                        switch e {
                        case "n": value.append("\n")
                        case "t": value.append("\t")
                        case "r": value.append("\r")
                        case "0": value.append("\0")
                        case "\\", "\"", "'": value.append(e)
                        default: value.append(e)
                        }
                        index += 2
                        continue
                    }
                    value.append(d)
                    index += 1
                }
                guard closed else {
                    index = start
                    throw error("a closing \(c) for the string starting here", "the end of the format")
                }
                tokens.append(Token(kind: .string(value), position: start, text: String(characters[start..<index])))
                continue
            }
            if c == "%" {
                index += 1
                var spec = ""
                while index < characters.count, characters[index].isLetter || characters[index] == "@" {
                    spec.append(characters[index]); index += 1
                    if spec == "@" || spec == "K" || spec == "d" || spec == "i" || spec == "f" || spec == "u" || spec == "s" { break }
                    if spec == "ld" || spec == "lf" || spec == "lu" || spec == "lld" || spec == "llu" { break }
                }
                guard ["@", "K", "d", "i", "ld", "lld", "f", "lf", "u", "lu", "llu", "s"].contains(spec) else {
                    index = start
                    throw error("a format specifier (%@, %K, %d, %i, %ld, %lld, %f, %lf)", "'%\(spec)'")
                }
                tokens.append(Token(kind: .format(spec), position: start, text: "%" + spec))
                continue
            }
            if c == "$" {
                index += 1
                while index < characters.count, characters[index].isLetter || characters[index].isNumber || characters[index] == "_" { index += 1 }
                let name = String(characters[(start + 1)..<index])
                guard !name.isEmpty else { index = start; throw error("a variable name after $", "'$'") }
                tokens.append(Token(kind: .variable(name), position: start, text: "$" + name))
                continue
            }
            let two = index + 1 < characters.count ? String(characters[index...(index + 1)]) : ""
            if ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||"].contains(two) {
                tokens.append(Token(kind: .symbol(two), position: start, text: two))
                index += 2
                continue
            }
            if "=<>!(){},.[]".contains(c) {
                tokens.append(Token(kind: .symbol(String(c)), position: start, text: String(c)))
                index += 1
                continue
            }
            throw error("a predicate", "'\(c)'")
        }
        tokens.append(Token(kind: .end, position: characters.count, text: ""))
        return tokens
    }

    /// Whether `character` (one scalar) is a combining mark, which continues the letters of
    /// a name before it (`é` decomposed, Devanagari vowel signs).
    private static func isMark(_ character: Character) -> Bool {
        switch character.unicodeScalars.first?.properties.generalCategory {
        case .nonspacingMark?, .spacingMark?, .enclosingMark?: return true
        default: return false
        }
    }

    private static func endsOperand(_ token: Token) -> Bool {
        switch token.kind {
        case .identifier, .string, .integer, .double, .format, .variable: return true
        case .symbol(let s): return s == ")" || s == "}"
        case .end: return false
        }
    }
}
