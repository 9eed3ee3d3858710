/// A predicate format string that could not be parsed: where, what was expected, what was found.
public struct PredicateParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The format string.
    public let format: String
    /// The offset (in Unicode scalars) where parsing failed.
    public let position: Int
    /// What the parser expected there.
    public let expected: String
    /// What it found instead.
    public let found: String

    /// Creates a parse error.
    public init(format: String, position: Int, expected: String, found: String) {
        self.format = format
        self.position = position
        self.expected = expected
        self.found = found
    }

    /// "at 12: expected an operator, found 'foo'" followed by the format and a caret.
    public var description: String {
        let shown = format.count > 200 ? String(format.prefix(200)) + "…" : format
        let caret = position <= 200 ? "\n  " + shown + "\n  " + String(repeating: " ", count: position) + "^" : ""
        return "predicate parse error at \(position): expected \(expected), found \(found)" + caret
    }
}
