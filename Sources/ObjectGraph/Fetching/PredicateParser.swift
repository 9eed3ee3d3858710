import Foundation
import OrderedCollections

extension FetchPredicate {
    /// Parses the NSPredicate format syntax Core Data users already write:
    ///
    /// ```swift
    /// try FetchPredicate(format: "age > %d AND name BEGINSWITH[cd] %@", 30, "é")
    /// try FetchPredicate(format: "ANY subjects.name == 'Math' OR members.@count > 2")
    /// try FetchPredicate(format: "SUBQUERY(messages, $m, $m.text CONTAINS[c] $q).@count > 0")
    /// ```
    ///
    /// Supported: `==` `=` `!=` `<>` `<` `<=` `>` `>=` `IN` `BETWEEN` `BEGINSWITH` `ENDSWITH`
    /// `CONTAINS` `LIKE` `MATCHES` with `[c]` `[d]` `[cd]`; `AND`/`&&`, `OR`/`||`, `NOT`/`!`;
    /// `ANY`/`SOME`/`ALL`/`NONE`; `TRUEPREDICATE`/`FALSEPREDICATE`; `nil`/`NULL`, `TRUE`/`YES`,
    /// `FALSE`/`NO`, `SELF`; numbers, quoted strings, `{…}` lists; `%K` key substitution and
    /// `%@ %d %i %ld %lld %f %lf` value substitution; `$VARIABLE`s (given in the fetch
    /// request's `substitutionVariables`); key-path aggregates `@count @sum @avg @min @max`;
    /// `SUBQUERY(collection, $x, predicate).@count`.
    ///
    /// A malformed format throws ``PredicateParseError`` with the position and what was
    /// expected; nesting deeper than 200 levels or a format longer than 100 000 characters is
    /// refused the same way, so hostile input fails cleanly. `#` before a word makes it a key
    /// (`#yes == 1`, `#in`), reserved words and literals included, as in NSPredicate.
    ///
    /// A managed object given for `%@` is taken as its ``ObjectID`` when the predicate is made
    /// (a predicate is a `Sendable` value; an object is not). Unlike Core Data's, which holds
    /// the object, a predicate made with a new object keeps its temporary ID, which names
    /// nothing once the object is saved: give it a permanent ID first
    /// (``ManagedObjectContext/obtainPermanentIDs(for:)``) to keep such a predicate.
    public init(format: String, _ arguments: Any?...) throws {
        try self.init(format: format, argumentArray: arguments)
    }

    /// Parses `format` with the substitution arguments given as an array.
    public init(format: String, argumentArray: [Any?]) throws {
        var parser = try PredicateParser(format: format, arguments: argumentArray)
        self = try parser.parse()
    }
}

/// A recursive-descent parser for the predicate format syntax.
struct PredicateParser {
    static let maximumDepth = 200

    let format: String
    let tokens: [PredicateLexer.Token]
    var arguments: [Any?]
    var index = 0
    var argumentIndex = 0
    var depth = 0
    /// Subquery variables in scope: `$m.text` inside a subquery is the key path `text`.
    var subqueryVariables: [String] = []

    init(format: String, arguments: [Any?]) throws {
        self.format = format
        self.tokens = try PredicateLexer(format: format).tokens()
        self.arguments = arguments
    }

    mutating func parse() throws -> FetchPredicate {
        let predicate = try parseOr()
        guard case .end = current.kind else { throw error(expected: "AND, OR or the end of the predicate") }
        guard argumentIndex == arguments.count else {
            throw PredicateParseError(format: format, position: current.position, expected: "\(argumentIndex) argument\(argumentIndex == 1 ? "" : "s") for the format's specifiers", found: "\(arguments.count)")
        }
        return predicate
    }

    // MARK: Tokens

    var current: PredicateLexer.Token { tokens[index] }

    func error(expected: String) -> PredicateParseError {
        let token = current
        let found: String
        if case .end = token.kind { found = "the end of the predicate" } else { found = "'\(token.text)'" }
        return PredicateParseError(format: format, position: token.position, expected: expected, found: found)
    }

    func isKeyword(_ word: String) -> Bool {
        if case .identifier(let text) = current.kind, tokens[index].text.first != "#" { return text.uppercased() == word }
        return false
    }

    func isSymbol(_ symbol: String) -> Bool {
        if case .symbol(let text) = current.kind { return text == symbol }
        return false
    }

    mutating func expectSymbol(_ symbol: String, _ what: String) throws {
        guard isSymbol(symbol) else { throw error(expected: what) }
        index += 1
    }

    mutating func enter() throws {
        depth += 1
        if depth > Self.maximumDepth { throw error(expected: "at most \(Self.maximumDepth) levels of nesting") }
    }

    // MARK: Predicates

    mutating func parseOr() throws -> FetchPredicate {
        try enter(); defer { depth -= 1 }
        var parts = [try parseAnd()]
        while isKeyword("OR") || isSymbol("||") {
            index += 1
            parts.append(try parseAnd())
        }
        return parts.count == 1 ? parts[0] : .or(parts)
    }

    mutating func parseAnd() throws -> FetchPredicate {
        var parts = [try parseNot()]
        while isKeyword("AND") || isSymbol("&&") {
            index += 1
            parts.append(try parseNot())
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    mutating func parseNot() throws -> FetchPredicate {
        if isKeyword("NOT") || isSymbol("!") {
            try enter(); defer { depth -= 1 }
            index += 1
            return .not(try parseNot())
        }
        return try parsePrimary()
    }

    mutating func parsePrimary() throws -> FetchPredicate {
        if isKeyword("TRUEPREDICATE") { index += 1; return .constant(true) }
        if isKeyword("FALSEPREDICATE") { index += 1; return .constant(false) }
        if isSymbol("(") {
            // A parenthesis opens either a nested predicate or, rarely, an expression; nested
            // predicates are what people write, so try that.
            index += 1
            let inner = try parseOr()
            try expectSymbol(")", "')' to close the '(' opened earlier")
            return inner
        }
        return try parseComparison()
    }

    mutating func parseComparison() throws -> FetchPredicate {
        var modifier = ComparisonModifier.direct
        if isKeyword("ANY") || isKeyword("SOME") { modifier = .any; index += 1 }
        else if isKeyword("ALL") { modifier = .all; index += 1 }
        else if isKeyword("NONE") { modifier = .none; index += 1 }
        let left = try parseExpression()
        let (op, negate) = try parseOperator()
        let options = try parseOptions()
        let right = try parseExpression()
        var comparison = PredicateComparison(left, op, right, options: options, modifier: modifier)
        if op == .between, case .list(let items) = right, items.count != 2 {
            throw PredicateParseError(format: format, position: tokens[index - 1].position, expected: "BETWEEN with exactly two bounds {low, high}", found: "\(items.count) values")
        }
        if case .list = left, op == .contains {
            // `{1, 2} CONTAINS x` means `x IN {1, 2}`.
            comparison = PredicateComparison(right, .in, left, options: options, modifier: modifier)
        }
        let predicate = FetchPredicate.comparison(comparison)
        return negate ? .not(predicate) : predicate
    }

    /// The operator; `negate` is set for `!=`-like spellings that map onto a positive operator.
    mutating func parseOperator() throws -> (ComparisonOperator, Bool) {
        let token = current
        switch token.kind {
        case .symbol(let s):
            let op: ComparisonOperator?
            switch s {
            case "==", "=": op = .equal
            case "!=", "<>": op = .notEqual
            case "<": op = .lessThan
            case "<=", "=<": op = .lessThanOrEqual
            case ">": op = .greaterThan
            case ">=", "=>": op = .greaterThanOrEqual
            default: op = nil
            }
            if let op { index += 1; return (op, false) }
        case .identifier(let word) where token.text.first != "#":
            let op: ComparisonOperator?
            switch word.uppercased() {
            case "IN": op = .in
            case "BETWEEN": op = .between
            case "BEGINSWITH": op = .beginsWith
            case "ENDSWITH": op = .endsWith
            case "CONTAINS": op = .contains
            case "LIKE": op = .like
            case "MATCHES": op = .matches
            default: op = nil
            }
            if let op { index += 1; return (op, false) }
        default: break
        }
        throw error(expected: "a comparison operator (==, !=, <, <=, >, >=, IN, BETWEEN, BEGINSWITH, ENDSWITH, CONTAINS, LIKE, MATCHES)")
    }

    mutating func parseOptions() throws -> StringComparisonOptions {
        guard isSymbol("[") else { return [] }
        index += 1
        guard case .identifier(let flags) = current.kind else { throw error(expected: "comparison options such as c, d or cd") }
        var options: StringComparisonOptions = []
        for flag in flags.lowercased() {
            switch flag {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            case "n", "l": break  // normalized / locale-sensitive: our folding is already both
            default: throw error(expected: "comparison options c, d, n or l")
            }
        }
        index += 1
        try expectSymbol("]", "']' to close the comparison options")
        return options
    }

    // MARK: Expressions

    mutating func parseExpression() throws -> PredicateOperand {
        try enter(); defer { depth -= 1 }
        let token = current
        switch token.kind {
        case .string(let value):
            index += 1
            return .constant(.string(value))
        case .integer(let value):
            index += 1
            return .constant(.integer(value))
        case .double(let value):
            index += 1
            return .constant(.double(value))
        case .format(let spec):
            index += 1
            return try substitute(spec, at: token)
        case .variable(let name):
            index += 1
            if subqueryVariables.contains(name) {
                guard isSymbol(".") else { return .evaluatedObject }
                index += 1
                return .keyPath(try parseKeyPathRest(first: try parseKeyComponent()))
            }
            return .variable(name)
        case .symbol("{"):
            index += 1
            var items: [PredicateOperand] = []
            if !isSymbol("}") {
                items.append(try parseExpression())
                while isSymbol(",") { index += 1; items.append(try parseExpression()) }
            }
            try expectSymbol("}", "',' or '}' in the list")
            return .list(items)
        case .identifier(let word):
            // As in NSPredicate, `#` makes any word a key, literals' names included: `#yes` is
            // the attribute yes, not true.
            if token.text.first == "#" { return .keyPath(try parseKeyPathRest(first: try parseKeyComponent())) }
            switch word.uppercased() {
            case "NIL", "NULL": index += 1; return .constant(.null)
            case "TRUE", "YES": index += 1; return .constant(.bool(true))
            case "FALSE", "NO": index += 1; return .constant(.bool(false))
            case "SELF": index += 1; return .evaluatedObject
            case "SUBQUERY": return try parseSubquery()
            default:
                if ["AND", "OR", "NOT", "IN", "BETWEEN", "CONTAINS", "BEGINSWITH", "ENDSWITH", "LIKE", "MATCHES", "ANY", "ALL", "NONE", "SOME"].contains(word.uppercased()) {
                    throw error(expected: "a value or key path (escape a reserved word as #\(word))")
                }
                return .keyPath(try parseKeyPathRest(first: try parseKeyComponent()))
            }
        default:
            throw error(expected: "a value, a key path, %@, %K or $VARIABLE")
        }
    }

    mutating func parseKeyComponent() throws -> String {
        if case .identifier(let name) = current.kind { index += 1; return name }
        if case .format("K") = current.kind { index += 1; return try keyArgument() }
        throw error(expected: "a key name")
    }

    mutating func parseKeyPathRest(first: String) throws -> String {
        var path = first
        while isSymbol(".") {
            index += 1
            path += "." + (try parseKeyComponent())
        }
        return path
    }

    mutating func parseSubquery() throws -> PredicateOperand {
        index += 1
        try expectSymbol("(", "'(' after SUBQUERY")
        guard case .identifier(let first) = current.kind else { throw error(expected: "the collection key path of the SUBQUERY") }
        index += 1
        let collection = try parseKeyPathRest(first: first)
        try expectSymbol(",", "',' after the SUBQUERY collection")
        guard case .variable(let variable) = current.kind else { throw error(expected: "the SUBQUERY variable, such as $x") }
        index += 1
        try expectSymbol(",", "',' after the SUBQUERY variable")
        subqueryVariables.append(variable)
        let inner = try parseOr()
        subqueryVariables.removeLast()
        try expectSymbol(")", "')' to close the SUBQUERY")
        guard isSymbol(".") else { throw error(expected: ".@count after SUBQUERY(…) (only the count of a subquery can be compared)") }
        index += 1
        guard case .identifier(let aggregate) = current.kind, aggregate == "@count" else {
            throw error(expected: "@count after SUBQUERY(…).")
        }
        index += 1
        return .subqueryCount(collection: collection, variable: variable, predicate: inner)
    }

    // MARK: Arguments

    mutating func nextArgument(at token: PredicateLexer.Token) throws -> Any? {
        guard argumentIndex < arguments.count else {
            throw PredicateParseError(format: format, position: token.position, expected: "an argument for \(token.text)", found: "only \(arguments.count) argument\(arguments.count == 1 ? "" : "s")")
        }
        defer { argumentIndex += 1 }
        return arguments[argumentIndex]
    }

    mutating func keyArgument() throws -> String {
        let token = tokens[index - 1]
        guard let key = try nextArgument(at: token) as? String, !key.isEmpty else {
            throw PredicateParseError(format: format, position: token.position, expected: "a key name (String) for %K", found: "another kind of argument")
        }
        return key
    }

    mutating func substitute(_ spec: String, at token: PredicateLexer.Token) throws -> PredicateOperand {
        if spec == "K" {
            return .keyPath(try parseKeyPathRest(first: try keyArgument()))
        }
        let argument = try nextArgument(at: token)
        switch spec {
        case "d", "i", "ld", "lld", "u", "lu", "llu":
            guard let expression = Self.expression(for: argument), case .constant(.integer) = expression else {
                throw PredicateParseError(format: format, position: token.position, expected: "an integer argument for %\(spec)", found: "\(argument.map { "\(type(of: $0))" } ?? "nil")")
            }
            return expression
        case "f", "lf":
            guard let expression = Self.expression(for: argument) else {
                throw PredicateParseError(format: format, position: token.position, expected: "a number for %\(spec)", found: "\(argument.map { "\(type(of: $0))" } ?? "nil")")
            }
            switch expression {
            case .constant(.double): return expression
            case .constant(.integer(let v)): return .constant(.double(Double(v)))
            default: throw PredicateParseError(format: format, position: token.position, expected: "a number for %\(spec)", found: "\(argument.map { "\(type(of: $0))" } ?? "nil")")
            }
        default:
            guard let expression = Self.expression(for: argument) else {
                throw PredicateParseError(format: format, position: token.position, expected: "a value, object, object ID or collection for %@", found: "\(argument.map { "\(type(of: $0))" } ?? "nil")")
            }
            return expression
        }
    }

    /// Converts a substitution argument into an expression; `nil` for unsupported kinds.
    static func expression(for argument: Any?) -> PredicateOperand? {
        guard let argument else { return .constant(.null) }
        if case Optional<Any>.none = argument as Any? { return .constant(.null) }
        switch argument {
        case let v as AttributeValue: return .constant(v)
        // NSPredicate's nil inside collections (`x IN %@` with `[1, NSNull()]`).
        case is NSNull: return .constant(.null)
        case let v as ObjectID: return .object(v)
        case let v as ManagedObject: return .object(v.objectID)
        case let v as Bool: return .constant(.bool(v))
        case let v as Int: return .constant(.integer(Int64(v)))
        case let v as Int64: return .constant(.integer(v))
        case let v as Int32: return .constant(.integer(Int64(v)))
        case let v as Int16: return .constant(.integer(Int64(v)))
        case let v as Int8: return .constant(.integer(Int64(v)))
        case let v as UInt8: return .constant(.integer(Int64(v)))
        case let v as UInt16: return .constant(.integer(Int64(v)))
        case let v as UInt32: return .constant(.integer(Int64(v)))
        case let v as UInt: return Int64(exactly: v).map { .constant(.integer($0)) }
        case let v as UInt64: return Int64(exactly: v).map { .constant(.integer($0)) }
        case let v as Double: return .constant(.double(v))
        case let v as Float: return .constant(.double(Double(v)))
        case let v as Decimal: return .constant(.decimal(v))
        case let v as String: return .constant(.string(v))
        case let v as Substring: return .constant(.string(String(v)))
        case let v as Date: return .constant(.date(v))
        case let v as Data: return .constant(.data(v))
        case let v as UUID: return .constant(.uuid(v))
        case let v as URL: return .constant(.uri(v))
        case let v as any AttributeValueConvertible: return .constant(v.attributeValue)
        // NSPredicate's IN takes a dictionary's values (its elements are key-value pairs).
        case let v as [AnyHashable: Any]:
            var items: [PredicateOperand] = []
            for element in v.values {
                guard let item = expression(for: element) else { return nil }
                items.append(item)
            }
            return .list(items)
        case let v as any Sequence:
            var items: [PredicateOperand] = []
            for element in v {
                guard let item = expression(for: element) else { return nil }
                items.append(item)
            }
            return .list(items)
        default: return nil
        }
    }
}
