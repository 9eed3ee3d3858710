import Foundation

extension AttributeValue {
    /// Orders two values the way every store must: numbers numerically across integer,
    /// floating and decimal kinds; strings by Unicode scalar order of their canonical form;
    /// dates by time; `false < true`; data bytewise; UUIDs and URIs by their string form.
    /// Returns `nil` for values of kinds that do not compare (or when either is `.null`), and
    /// when either is NaN (see ``AttributeValue/isNaN``): as in IEEE 754, NaN is neither
    /// less than, equal to, nor greater than anything, so every comparison with it is false.
    public static func compare(_ lhs: AttributeValue, _ rhs: AttributeValue) -> ComparisonResult? {
        // (NaN is checked in the cases of the kinds that hold one, not up front for every
        // comparison: sorting strings or integers then pays nothing for it.)
        switch (lhs, rhs) {
        case (.integer(let a), .integer(let b)): return order(a, b)
        case (.double(let a), .double(let b)): return a.isNaN || b.isNaN ? nil : order(a, b)
        case (.integer(let a), .double(let b)): return compareMixed(a, b)
        case (.double(let a), .integer(let b)): return compareMixed(b, a).map(flip)
        case (.decimal(let a), .decimal(let b)): return a.isNaN || b.isNaN ? nil : order(a, b)
        case (.decimal(let a), .integer(let b)): return a.isNaN ? nil : order(a, Decimal(b))
        case (.integer(let a), .decimal(let b)): return b.isNaN ? nil : order(Decimal(a), b)
        case (.decimal(let a), .double(let b)): return a.isNaN || b.isNaN ? nil : order(NSDecimalNumber(decimal: a).doubleValue, b)
        case (.double(let a), .decimal(let b)): return a.isNaN || b.isNaN ? nil : order(a, NSDecimalNumber(decimal: b).doubleValue)
        case (.string(let a), .string(let b)): return compareStrings(a, b)
        case (.bool(let a), .bool(let b)): return a == b ? .orderedSame : (a ? .orderedDescending : .orderedAscending)
        // Booleans compare with the integers 0 and 1, as NSPredicate's `flag == 1` does.
        case (.bool(let a), .integer(let b)): return order(Int64(a ? 1 : 0), b)
        case (.integer(let a), .bool(let b)): return order(a, Int64(b ? 1 : 0))
        case (.date(let a), .date(let b)):
            return a.timeIntervalSinceReferenceDate.isNaN || b.timeIntervalSinceReferenceDate.isNaN ? nil : order(a, b)
        case (.data(let a), .data(let b)):
            return a.lexicographicallyPrecedes(b) ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        case (.uuid(let a), .uuid(let b)): return order(a.uuidString, b.uuidString)
        case (.uri(let a), .uri(let b)): return order(a.absoluteString, b.absoluteString)
        default: return nil
        }
    }

    /// Equality as predicates see it: numeric kinds compare by value (`1 == 1.0`), strings by
    /// canonical equivalence, `.null` equals only `.null`.
    public static func predicateEqual(_ lhs: AttributeValue, _ rhs: AttributeValue) -> Bool {
        if lhs.isNull || rhs.isNull { return lhs.isNull && rhs.isNull }
        return compare(lhs, rhs) == .orderedSame
    }

    /// Whether `self` satisfies `op` against `operands` (one, the list of `IN`, the two bounds of
    /// `BETWEEN`) as the shared evaluator decides it for values other than strings, from
    /// ``predicateEqual(_:_:)`` and ``compare(_:_:)``: for a store that evaluates such a
    /// comparison inside its own engine (SQLite's `og_decimal`) with the very same rules.
    /// String operators answer false, as the evaluator answers them for non-strings.
    public func satisfies(_ op: ComparisonOperator, _ operands: [AttributeValue]) -> Bool {
        guard let first = operands.first else { return false }
        switch op {
        case .equal: return Self.predicateEqual(self, first)
        case .notEqual: return !Self.predicateEqual(self, first)
        case .lessThan: return Self.compare(self, first) == .orderedAscending
        case .lessThanOrEqual: return Self.compare(self, first).map { $0 != .orderedDescending } ?? false
        case .greaterThan: return Self.compare(self, first) == .orderedDescending
        case .greaterThanOrEqual: return Self.compare(self, first).map { $0 != .orderedAscending } ?? false
        case .in: return operands.contains { Self.predicateEqual(self, $0) }
        case .between:
            guard operands.count == 2, let low = Self.compare(self, operands[0]), let high = Self.compare(self, operands[1]) else { return false }
            return low != .orderedAscending && high != .orderedDescending
        case .beginsWith, .endsWith, .contains, .like, .matches: return false
        }
    }

    /// Unicode scalar order of the canonical compositions. Swift's `<` on strings is not a
    /// strict weak order across normalization forms ("e\u{301}" and "\u{E9}1" are each not
    /// less than the other, yet not equal), which would make sorting and `<` predicates
    /// depend on how a string happens to be stored, so only ASCII strings take it directly.
    static func compareStrings(_ a: String, _ b: String) -> ComparisonResult {
        if a == b { return .orderedSame }  // canonical equivalence
        if a.utf8.allSatisfy({ $0 < 0x80 }) && b.utf8.allSatisfy({ $0 < 0x80 }) {
            return a < b ? .orderedAscending : .orderedDescending
        }
        let x = a.precomposedStringWithCanonicalMapping.unicodeScalars
        let y = b.precomposedStringWithCanonicalMapping.unicodeScalars
        return x.lexicographicallyPrecedes(y) ? .orderedAscending : .orderedDescending
    }

    private static func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
        a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
    }

    /// `a` against `b` exactly, as SQLite compares an integer with a real: through `Double`,
    /// integers above 2^53 round (`Int64.max - 100` became 2^63 and equalled it).
    private static func compareMixed(_ a: Int64, _ b: Double) -> ComparisonResult? {
        if b.isNaN { return nil }
        // 2^63 and beyond (or below -2^63) lie past every Int64; infinities included.
        if b >= 9_223_372_036_854_775_808.0 { return .orderedAscending }
        if b < -9_223_372_036_854_775_808.0 { return .orderedDescending }
        // Now b's integral part fits: compare with it, then with the fraction left over.
        let floor = b.rounded(.down)
        let whole = Int64(floor)
        if a != whole { return order(a, whole) }
        return b > floor ? .orderedAscending : .orderedSame
    }

    private static func flip(_ r: ComparisonResult) -> ComparisonResult {
        switch r {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }
}
