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
/// - `og_text(op, options, text, operand)`: 1 or 0 for a string operator with `[c]`/`[d]`
///   options, NULL when either string is NULL.
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
