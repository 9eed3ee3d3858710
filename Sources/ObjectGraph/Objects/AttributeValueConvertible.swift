import Foundation

/// A Swift type that can be an attribute's value: the standard scalars, `String`, `Date`,
/// `Data`, `UUID`, `URL`, `Decimal`, their optionals, and ``TransformableValue`` types.
///
/// Used by the typed ``Attribute`` property wrapper and by the predicate builder.
public protocol AttributeValueConvertible {
    /// The value in stored form.
    var attributeValue: AttributeValue { get }
    /// The Swift value for a stored one, or `nil` when the stored kind does not fit.
    static func fromAttributeValue(_ value: AttributeValue) -> Self?
}

extension AttributeValue: AttributeValueConvertible {
    /// Itself.
    public var attributeValue: AttributeValue { self }
    /// Itself.
    public static func fromAttributeValue(_ value: AttributeValue) -> AttributeValue? { value }
}

extension Optional: AttributeValueConvertible where Wrapped: AttributeValueConvertible {
    /// `.null` for `nil`.
    public var attributeValue: AttributeValue { self?.attributeValue ?? .null }
    /// `nil` for `.null`.
    public static func fromAttributeValue(_ value: AttributeValue) -> Wrapped?? {
        if value.isNull { return .some(nil) }
        return Wrapped.fromAttributeValue(value).map { .some($0) }
    }
}

extension Int: AttributeValueConvertible {
    /// `.integer`.
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
    /// From `.integer`.
    public static func fromAttributeValue(_ value: AttributeValue) -> Int? {
        if case .integer(let v) = value { return Int(exactly: v) }
        return nil
    }
}

extension Int64: AttributeValueConvertible {
    /// `.integer`.
    public var attributeValue: AttributeValue { .integer(self) }
    /// From `.integer`.
    public static func fromAttributeValue(_ value: AttributeValue) -> Int64? {
        if case .integer(let v) = value { return v }
        return nil
    }
}

extension Int32: AttributeValueConvertible {
    /// `.integer`.
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
    /// From `.integer`, when it fits.
    public static func fromAttributeValue(_ value: AttributeValue) -> Int32? {
        if case .integer(let v) = value { return Int32(exactly: v) }
        return nil
    }
}

extension Int16: AttributeValueConvertible {
    /// `.integer`.
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
    /// From `.integer`, when it fits.
    public static func fromAttributeValue(_ value: AttributeValue) -> Int16? {
        if case .integer(let v) = value { return Int16(exactly: v) }
        return nil
    }
}

extension Double: AttributeValueConvertible {
    /// `.double`.
    public var attributeValue: AttributeValue { .double(self) }
    /// From `.double` or `.integer`.
    public static func fromAttributeValue(_ value: AttributeValue) -> Double? {
        switch value {
        case .double(let v): return v
        case .integer(let v): return Double(v)
        default: return nil
        }
    }
}

extension Float: AttributeValueConvertible {
    /// `.double`.
    public var attributeValue: AttributeValue { .double(Double(self)) }
    /// From `.double` or `.integer`.
    public static func fromAttributeValue(_ value: AttributeValue) -> Float? {
        Double.fromAttributeValue(value).map(Float.init)
    }
}

extension Decimal: AttributeValueConvertible {
    /// `.decimal`.
    public var attributeValue: AttributeValue { .decimal(self) }
    /// From `.decimal` or `.integer`.
    public static func fromAttributeValue(_ value: AttributeValue) -> Decimal? {
        switch value {
        case .decimal(let v): return v
        case .integer(let v): return Decimal(v)
        default: return nil
        }
    }
}

extension String: AttributeValueConvertible {
    /// `.string`.
    public var attributeValue: AttributeValue { .string(self) }
    /// From `.string`.
    public static func fromAttributeValue(_ value: AttributeValue) -> String? {
        if case .string(let v) = value { return v }
        return nil
    }
}

extension Bool: AttributeValueConvertible {
    /// `.bool`.
    public var attributeValue: AttributeValue { .bool(self) }
    /// From `.bool`.
    public static func fromAttributeValue(_ value: AttributeValue) -> Bool? {
        if case .bool(let v) = value { return v }
        return nil
    }
}

extension Date: AttributeValueConvertible {
    /// `.date`.
    public var attributeValue: AttributeValue { .date(self) }
    /// From `.date`.
    public static func fromAttributeValue(_ value: AttributeValue) -> Date? {
        if case .date(let v) = value { return v }
        return nil
    }
}

extension Data: AttributeValueConvertible {
    /// `.data`.
    public var attributeValue: AttributeValue { .data(self) }
    /// From `.data`.
    public static func fromAttributeValue(_ value: AttributeValue) -> Data? {
        if case .data(let v) = value { return v }
        return nil
    }
}

extension UUID: AttributeValueConvertible {
    /// `.uuid`.
    public var attributeValue: AttributeValue { .uuid(self) }
    /// From `.uuid`.
    public static func fromAttributeValue(_ value: AttributeValue) -> UUID? {
        if case .uuid(let v) = value { return v }
        return nil
    }
}

extension URL: AttributeValueConvertible {
    /// `.uri`.
    public var attributeValue: AttributeValue { .uri(self) }
    /// From `.uri`.
    public static func fromAttributeValue(_ value: AttributeValue) -> URL? {
        if case .uri(let v) = value { return v }
        return nil
    }
}

/// A `Codable` value stored in a transformable attribute as JSON (sorted keys, so equal values
/// give equal bytes). Conform a type to use it with `@Attribute` and declare the attribute
/// with ``EntityBuilder/transformable(_:_:optional:default:transient:)``.
public protocol TransformableValue: Codable, Sendable, AttributeValueConvertible {}

extension TransformableValue {
    /// The JSON encoding, as `.data`. A value whose own `encode(to:)` throws is a programming
    /// error, reported with the type and the error: it was stored as nil, silently losing the
    /// value the object held before.
    public var attributeValue: AttributeValue {
        do {
            return .data(try transformableEncoder().encode(self))
        } catch {
            ManagedObject.trap("a \(Self.self) value failed to encode for a transformable attribute: \(error)")
        }
    }
    /// Decodes `.data`; `nil` when the bytes are not this type's JSON.
    public static func fromAttributeValue(_ value: AttributeValue) -> Self? {
        guard case .data(let data) = value else { return nil }
        return try? transformableDecoder().decode(Self.self, from: data)
    }
}
