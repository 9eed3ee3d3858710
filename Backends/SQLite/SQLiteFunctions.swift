import CSQLite
import Foundation
import ObjectGraph

/// Collations and functions registered on every connection, so SQL evaluates strings with the
/// very same code as the shared evaluator (``ObjectGraph/StringOperators``,
/// ``ObjectGraph/CompiledSort``) — never with SQLite's own byte-wise rules.
///
/// - `OG_NATURAL`: Swift string order (canonical equivalence, so "é" equals "e\u{301}");
/// - `OG_CASE`: case-folded, then natural; `OG_LOCALIZED`: case- and diacritic-folded, digit
///   runs compared as numbers;
/// - `OG_DECIMAL`: decimals (stored as text) by value, NaN last;
/// - `og_text(op, options, text, operand)`: 1 or 0 for a string operator with `[c]`/`[d]`
///   options, NULL when either string is NULL;
/// - `og_decimal(op, value, operand…)`: 1 or 0 for a comparison whose value or operands are
///   decimals (stored as text), decided by ``ObjectGraph/AttributeValue/satisfies(_:_:)``.
enum SQLiteFunctions {
    static let operators = ComparisonOperator.allCases

    static func register(on db: OpaquePointer) {
        sqlite3_create_collation_v2(db, "OG_NATURAL", SQLITE_UTF8, nil, { _, lengthA, a, lengthB, b in
            SQLiteFunctions.collate(a, lengthA, b, lengthB, .natural)
        }, nil)
        sqlite3_create_collation_v2(db, "OG_CASE", SQLITE_UTF8, nil, { _, lengthA, a, lengthB, b in
            SQLiteFunctions.collate(a, lengthA, b, lengthB, .caseInsensitive)
        }, nil)
        sqlite3_create_collation_v2(db, "OG_LOCALIZED", SQLITE_UTF8, nil, { _, lengthA, a, lengthB, b in
            SQLiteFunctions.collate(a, lengthA, b, lengthB, .localizedStandard)
        }, nil)
        sqlite3_create_collation_v2(db, "OG_DECIMAL", SQLITE_UTF8, nil, { _, lengthA, a, lengthB, b in
            let x = SQLiteFunctions.decimal(a, lengthA), y = SQLiteFunctions.decimal(b, lengthB)
            switch CompiledSort.compare(x, y, .natural) {
            case .orderedAscending: return -1
            case .orderedSame: return 0
            case .orderedDescending: return 1
            }
        }, nil)
        sqlite3_create_function_v2(db, "og_text", 4, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, { context, count, arguments in
            guard count == 4, let arguments,
                  let text = SQLiteFunctions.text(arguments[2]), let operand = SQLiteFunctions.text(arguments[3]) else {
                sqlite3_result_null(context)
                return
            }
            let opIndex = Int(sqlite3_value_int64(arguments[0]))
            guard SQLiteFunctions.operators.indices.contains(opIndex) else { sqlite3_result_null(context); return }
            let options = StringComparisonOptions(rawValue: Int(sqlite3_value_int64(arguments[1])))
            let result = StringOperators.evaluate(SQLiteFunctions.operators[opIndex], options, text, operand)
            sqlite3_result_int64(context, result ? 1 : 0)
        }, nil, nil, nil)
        sqlite3_create_function_v2(db, "og_decimal", -1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, { context, count, arguments in
            guard count >= 3, let arguments else { sqlite3_result_null(context); return }
            let opIndex = Int(sqlite3_value_int64(arguments[0]))
            guard SQLiteFunctions.operators.indices.contains(opIndex) else { sqlite3_result_null(context); return }
            let value = SQLiteFunctions.number(arguments[1])
            let operands = (2..<Int(count)).map { SQLiteFunctions.number(arguments[$0]) }
            sqlite3_result_int64(context, value.satisfies(SQLiteFunctions.operators[opIndex], operands) ? 1 : 0)
        }, nil, nil, nil)
    }

    /// A numeric SQL value as the store reads it: an integer, a real, a decimal's text, or a
    /// NaN's blob (see `SQLiteStatement.bindNaN`); `.null` for NULL, and for text that is no
    /// decimal, as a damaged value reads.
    static func number(_ value: OpaquePointer?) -> AttributeValue {
        guard let value else { return .null }
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: return .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT: return .double(sqlite3_value_double(value))
        case SQLITE_TEXT:
            return text(value).map(decimal) ?? .null
        case SQLITE_BLOB:
            guard sqlite3_value_bytes(value) == 8, let bytes = sqlite3_value_blob(value) else { return .null }
            let number = Double(bitPattern: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)))
            return number.isNaN ? .double(number) : .null
        default: return .null
        }
    }

    /// A decimal's stored text as the store reads it (see ``number(_:)``).
    static func decimal(_ text: String) -> AttributeValue {
        SQLiteStatement.storedDecimal(text).map { .decimal($0) } ?? .null
    }

    /// ``decimal(_:)`` of the text a collation is handed.
    static func decimal(_ pointer: UnsafeRawPointer?, _ length: Int32) -> AttributeValue {
        guard let pointer, length > 0 else { return decimal("") }
        return decimal(String(decoding: UnsafeRawBufferPointer(start: pointer, count: Int(length)), as: UTF8.self))
    }


    static func opcode(_ op: ComparisonOperator) -> Int64 { Int64(operators.firstIndex(of: op) ?? 0) }

    static func text(_ value: OpaquePointer?) -> String? {
        guard let value, sqlite3_value_type(value) != SQLITE_NULL, let bytes = sqlite3_value_text(value) else { return nil }
        let count = Int(sqlite3_value_bytes(value))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    static func collate(_ a: UnsafeRawPointer?, _ lengthA: Int32, _ b: UnsafeRawPointer?, _ lengthB: Int32, _ comparison: SortKey.Comparison) -> Int32 {
        func string(_ pointer: UnsafeRawPointer?, _ length: Int32) -> String {
            guard let pointer, length > 0 else { return "" }
            return String(decoding: UnsafeRawBufferPointer(start: pointer, count: Int(length)), as: UTF8.self)
        }
        let x = CompiledSort.prepare(.string(string(a, lengthA)), comparison)
        let y = CompiledSort.prepare(.string(string(b, lengthB)), comparison)
        switch CompiledSort.compare(x, y, comparison) {
        case .orderedAscending: return -1
        case .orderedSame: return 0
        case .orderedDescending: return 1
        }
    }
}
