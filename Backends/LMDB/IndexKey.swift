import Foundation
import ObjectGraph

/// The order-preserving key encoding of secondary indexes: comparing keys bytewise orders
/// them as ``ObjectGraph/CompiledSort`` orders the values (nil first).
///
///     nil              00
///     value            01 · payload
///     NaN              02            (floating point only; unordered, always a candidate)
///     mistyped value   03            (a value of another kind than the attribute's)
///
/// Payloads: integers as 8 big-endian bytes with the sign bit flipped; doubles (and dates,
/// as reference-date seconds) as their bits with the sign bit flipped for positives and every
/// bit flipped for negatives, -0 written as +0 because they compare equal; Booleans as one
/// byte; strings as the UTF-8 of their canonical composition (NFC), whose byte order is the
/// Unicode scalar order the shared comparison uses, cut to fit LMDB's key size. A cut key
/// only widens the candidates: the fetch always re-checks rows with the shared evaluator and
/// sorts rows sharing one key with the shared sort.
enum IndexKey {
    static let null: [UInt8] = [0x00]
    static let nan: [UInt8] = [0x02]
    static let mistyped: [UInt8] = [0x03]
    /// The first key holding a value (ranges of non-nil values start here).
    static let firstValue: [UInt8] = [0x01]

    /// Attribute types whose values have an order-preserving encoding.
    static func isIndexable(_ type: AttributeType) -> Bool {
        switch type {
        case .integer16, .integer32, .integer64, .double, .float, .string, .boolean, .date: return true
        default: return false
        }
    }

    /// The key for `value` of an attribute of `type`, at most `limit` bytes; `nil` when the
    /// value is of a kind this type's keys cannot place (a lookup must then scan).
    static func encode(_ value: AttributeValue, type: AttributeType, limit: Int) -> [UInt8]? {
        var writer = ByteWriter(capacity: 16)
        switch (type, value) {
        case (_, .null): return null
        case (.integer16, .integer(let v)), (.integer32, .integer(let v)), (.integer64, .integer(let v)):
            writer.u8(0x01)
            writer.orderedInt64(v)
        case (.double, .double(let v)), (.float, .double(let v)):
            return encodeDouble(v)
        case (.date, .date(let v)):
            return encodeDouble(v.timeIntervalSinceReferenceDate)
        case (.boolean, .bool(let v)):
            writer.u8(0x01)
            writer.u8(v ? 1 : 0)
        case (.string, .string(let v)):
            writer.u8(0x01)
            let utf8 = v.utf8.allSatisfy({ $0 < 0x80 }) ? Array(v.utf8) : Array(v.precomposedStringWithCanonicalMapping.utf8)
            writer.bytes.append(contentsOf: utf8.prefix(limit - 1))
        default:
            return nil
        }
        return writer.bytes
    }

    static func encodeDouble(_ value: Double) -> [UInt8] {
        if value.isNaN { return nan }
        let bits = (value == 0 ? 0.0 : value).bitPattern
        var writer = ByteWriter(capacity: 9)
        writer.u8(0x01)
        writer.u64(bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63))
        return writer.bytes
    }

    /// The key a stored row's value goes under.
    static func storedKey(_ value: AttributeValue, type: AttributeType, limit: Int) -> [UInt8] {
        encode(value, type: type, limit: limit) ?? mistyped
    }

    /// Whether keys of `type` can be unordered (NaN).
    static func hasUnorderedValues(_ type: AttributeType) -> Bool {
        type == .double || type == .float || type == .date
    }

    /// The duplicate stored under an index key: the row's key and entity code.
    static func entry(pk: Int64, code: UInt16) -> [UInt8] {
        withEntry(pk: pk, code: code) { Array($0) }
    }

    /// `body` applied to ``entry(pk:code:)``'s bytes, laid out on the stack: a bulk save
    /// writes one member entry per inserted member, and an array for each was an allocation.
    @inline(__always)
    static func withEntry<T>(pk: Int64, code: UInt16, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        // (A tuple of the two big-endian integers is 10 bytes, packed: no padding between or
        // after them counts in its size.)
        let entry = ((UInt64(bitPattern: pk) ^ (1 << 63)).bigEndian, code.bigEndian)
        return try withUnsafeBytes(of: entry) { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(10))) }
    }
}
