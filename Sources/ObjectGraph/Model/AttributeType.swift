import Foundation

/// The storage type of an attribute: Core Data's attribute types, one case each.
///
/// Integer widths are kept distinct so that a value is range-checked when it is set (an
/// `Int16` attribute refuses 40 000 with a typed error instead of truncating it at save).
public enum AttributeType: String, Sendable, Hashable, CaseIterable, Codable {
    /// A 16-bit signed integer (`Int16`).
    case integer16
    /// A 32-bit signed integer (`Int32`).
    case integer32
    /// A 64-bit signed integer (`Int64`, `Int`).
    case integer64
    /// A double-precision floating-point number.
    case double
    /// A single-precision floating-point number; held as a `Double` that round-trips exactly.
    case float
    /// An arbitrary-precision decimal number (`Decimal`).
    case decimal
    /// A Unicode string.
    case string
    /// A Boolean.
    case boolean
    /// A point in time (`Date`).
    case date
    /// Raw bytes (`Data`).
    case binaryData
    /// A UUID.
    case uuid
    /// A URL (Core Data's URI type).
    case uri
    /// A `Codable` value stored as encoded bytes; see ``AttributeTransformer``.
    case transformable

    /// Whether values of this type are numbers that compare numerically with each other.
    public var isNumeric: Bool {
        switch self {
        case .integer16, .integer32, .integer64, .double, .float, .decimal: return true
        default: return false
        }
    }

    /// The representable range for integer types, used to refuse overflowing values.
    var integerRange: ClosedRange<Int64>? {
        switch self {
        case .integer16: return Int64(Int16.min)...Int64(Int16.max)
        case .integer32: return Int64(Int32.min)...Int64(Int32.max)
        case .integer64: return Int64.min...Int64.max
        default: return nil
        }
    }
}
