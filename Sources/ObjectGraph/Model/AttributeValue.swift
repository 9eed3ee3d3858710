import Foundation

/// A single attribute value as it travels between contexts, the coordinator and stores.
///
/// Values are `Sendable` and compact; `.null` is the absence of a value (Core Data's `nil`).
/// All integer widths travel as `.integer`, `Float` travels as `.double`, and transformable
/// values travel as their encoded `.data`.
public enum AttributeValue: Sendable, Hashable {
    /// No value.
    case null
    /// Any integer attribute.
    case integer(Int64)
    /// A `Double` or `Float` attribute.
    case double(Double)
    /// A `Decimal` attribute.
    case decimal(Decimal)
    /// A string attribute.
    case string(String)
    /// A Boolean attribute.
    case bool(Bool)
    /// A date attribute.
    case date(Date)
    /// A binary-data attribute, or the encoded form of a transformable one.
    case data(Data)
    /// A UUID attribute.
    case uuid(UUID)
    /// A URI attribute.
    case uri(URL)

    /// Whether this is `.null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Whether this is a number or a date that is not a number (NaN). As in IEEE 754, such a
    /// value compares with nothing (every predicate comparison with it is false, `!=` true);
    /// a sort puts it after every number (+∞ included), and `@min`/`@max` follow that order.
    public var isNaN: Bool {
        switch self {
        case .double(let v): return v.isNaN
        case .decimal(let v): return v.isNaN
        case .date(let d): return d.timeIntervalSinceReferenceDate.isNaN
        default: return false
        }
    }

    /// Whether the two values would be stored identically: same kind, and the same bytes.
    /// Stricter than `==`, which calls canonically equivalent strings, `0.0` and `-0.0`, or
    /// `1.0` and `1.00` as decimals equal: a save that skipped such a change would lose it.
    public func isIdentical(to other: AttributeValue) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case (.integer(let a), .integer(let b)): return a == b
        case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern
        case (.decimal(let a), .decimal(let b)): return a == b && a.description == b.description
        case (.string(let a), .string(let b)): return Self.sameBytes(a, b)
        case (.bool(let a), .bool(let b)): return a == b
        case (.date(let a), .date(let b)): return a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
        case (.data(let a), .data(let b)): return a == b
        case (.uuid(let a), .uuid(let b)): return a == b
        case (.uri(let a), .uri(let b)): return Self.sameBytes(a.absoluteString, b.absoluteString)
        default: return false
        }
    }

    /// Whether two strings hold the same UTF-8 bytes: lengths first, then one `memcmp`
    /// (iterating the two views compared byte by byte, a twentieth of an update, measured).
    private static func sameBytes(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        var a = a, b = b
        return a.withUTF8 { x in b.withUTF8 { y in x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 } }
    }

    /// A short name of the value's kind, used in error messages.
    public var kindName: String {
        switch self {
        case .null: return "nil"
        case .integer: return "integer"
        case .double: return "double"
        case .decimal: return "decimal"
        case .string: return "string"
        case .bool: return "boolean"
        case .date: return "date"
        case .data: return "data"
        case .uuid: return "UUID"
        case .uri: return "URI"
        }
    }

    /// The value as a plain Swift value (`Int64`, `Double`, `String`, …), or `nil` for `.null`.
    public var anyValue: Any? {
        switch self {
        case .null: return nil
        case .integer(let v): return v
        case .double(let v): return v
        case .decimal(let v): return v
        case .string(let v): return v
        case .bool(let v): return v
        case .date(let v): return v
        case .data(let v): return v
        case .uuid(let v): return v
        case .uri(let v): return v
        }
    }
}

extension AttributeValue: CustomStringConvertible {
    /// A readable rendering used in error messages and the command-line tool.
    public var description: String {
        switch self {
        case .null: return "nil"
        case .integer(let v): return String(v)
        case .double(let v): return String(v)
        case .decimal(let v): return "\(v)"
        case .string(let v): return "\"\(v)\""
        case .bool(let v): return v ? "true" : "false"
        case .date(let v): return v.formatted(.iso8601)
        case .data(let v): return "<\(v.count) bytes>"
        case .uuid(let v): return v.uuidString
        case .uri(let v): return v.absoluteString
        }
    }
}

extension AttributeValue: ExpressibleByNilLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByBooleanLiteral
{
    /// Creates `.null`.
    public init(nilLiteral: ()) { self = .null }
    /// Creates `.integer`.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// Creates `.double`.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// Creates `.string`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// Creates `.bool`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}
