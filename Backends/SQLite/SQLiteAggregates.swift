import CSQLite
import Foundation
import ObjectGraph

/// The aggregate functions `og_sum(kind, value)` and `og_avg(kind, value)`, registered on every
/// connection: they collect a to-many's member values and answer with
/// ``ObjectGraph/AggregateFunction/apply(_:)`` — the shared evaluator's own `@sum` and `@avg`,
/// so a compiled predicate gives its answer by construction. SQL's `SUM` and `AVG` add in
/// their own way (SQLite ≥ 3.43 with compensated summation), which need not give the shared
/// layer's last bit; the shared layer adds in ascending order, whatever order SQL steps in.
///
/// `kind` (a literal the compiler writes) says how the stored value reads, as the row reader
/// reads the column: ``Kind``. A stored NaN is a blob (see `SQLiteStatement.bindNaN`), and a
/// NaN answer is returned as that same blob, so comparisons treat it as they treat a stored
/// NaN (SQLite would turn a NaN result into NULL). A value that is neither a number, nor NULL,
/// nor a stored NaN is damage: the statement fails with an error saying so.
enum SQLiteAggregates {
    /// How a collected column's values read.
    enum Kind: Int64 {
        case integer = 0
        case double = 1
        case date = 2

        /// How a column of `type` reads; `nil` for a type these functions do not take.
        init?(_ type: AttributeType) {
            switch type {
            case .integer16, .integer32, .integer64: self = .integer
            case .double, .float: self = .double
            case .date: self = .date
            default: return nil
            }
        }
    }

    /// The values collected for one group, kept in SQLite's aggregate context between steps.
    final class Collected {
        var values: [AttributeValue] = []
    }

    static func register(on db: OpaquePointer) {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        sqlite3_create_function_v2(db, "og_sum", 2, flags, nil, nil, { context, count, arguments in
            SQLiteAggregates.step(context, count, arguments)
        }, { context in SQLiteAggregates.finish(context, .sum) }, nil)
        sqlite3_create_function_v2(db, "og_avg", 2, flags, nil, nil, { context, count, arguments in
            SQLiteAggregates.step(context, count, arguments)
        }, { context in SQLiteAggregates.finish(context, .average) }, nil)
    }

    private static func step(_ context: OpaquePointer?, _ count: Int32, _ arguments: UnsafeMutablePointer<OpaquePointer?>?) {
        guard count == 2, let arguments, let kind = Kind(rawValue: sqlite3_value_int64(arguments[0])) else {
            sqlite3_result_error(context, "og_sum/og_avg: expected a kind (0, 1 or 2) and a value", -1)
            return
        }
        guard let value = value(arguments[1], kind) else {
            let file = sqlite3_db_filename(sqlite3_context_db_handle(context), "main").map { String(cString: $0) } ?? "the file"
            sqlite3_result_error(context, "\(file): og_sum/og_avg: a member's value is neither a number nor NULL (the file is damaged)", -1)
            // (Damage, as the row reader reports it: a corrupt store error, not a backend one.)
            sqlite3_result_error_code(context, SQLITE_CORRUPT)
            return
        }
        guard let slot = sqlite3_aggregate_context(context, Int32(MemoryLayout<UnsafeMutableRawPointer?>.size)) else {
            sqlite3_result_error_nomem(context)
            return
        }
        let pointer = slot.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        if let existing = pointer.pointee {
            Unmanaged<Collected>.fromOpaque(existing).takeUnretainedValue().values.append(value)
        } else {
            let collected = Collected()
            collected.values.append(value)
            pointer.pointee = Unmanaged.passRetained(collected).toOpaque()
        }
    }

    /// Called once per group, also for a group no step saw (then without a context) and for
    /// a statement reset half-way, so the collected values are always released here.
    private static func finish(_ context: OpaquePointer?, _ function: AggregateFunction) {
        var values: [AttributeValue] = []
        if let slot = sqlite3_aggregate_context(context, 0),
           let stored = slot.assumingMemoryBound(to: UnsafeMutableRawPointer?.self).pointee {
            values = Unmanaged<Collected>.fromOpaque(stored).takeRetainedValue().values
        }
        switch function.apply(values) {
        case .integer(let value): sqlite3_result_int64(context, value)
        case .double(let value) where value.isNaN:
            withUnsafeBytes(of: value.bitPattern.bigEndian) { bytes in
                sqlite3_result_blob(context, bytes.baseAddress, Int32(bytes.count), unsafeBitCast(-1, to: sqlite3_destructor_type.self))
            }
        case .double(let value): sqlite3_result_double(context, value)
        default: sqlite3_result_null(context)
        }
    }

    /// A column value as the row reader reads it for `kind` (``SQLiteStatement/value(_:as:)``):
    /// the number first, the value's type asked only when it reads as zero, so a member the
    /// row reader reads (text such as '5' in a numeric column included) is the same number
    /// here; `nil` for what the row reader notes as damage.
    private static func value(_ value: OpaquePointer?, _ kind: Kind) -> AttributeValue? {
        if kind == .integer {
            let integer = sqlite3_value_int64(value)
            if integer != 0 { return .integer(integer) }
            switch sqlite3_value_type(value) {
            case SQLITE_NULL: return .null
            case SQLITE_INTEGER, SQLITE_FLOAT: return .integer(0)
            default: return nil
            }
        }
        var number = sqlite3_value_double(value)
        if number == 0 {
            switch sqlite3_value_type(value) {
            case SQLITE_NULL: return .null
            case SQLITE_INTEGER, SQLITE_FLOAT: break
            case SQLITE_BLOB:
                // A stored NaN (see `SQLiteStatement.bindNaN`).
                guard sqlite3_value_bytes(value) == 8, let bytes = sqlite3_value_blob(value) else { return nil }
                number = Double(bitPattern: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)))
                guard number.isNaN else { return nil }
            default:
                return nil
            }
        }
        return kind == .date ? .date(Date(timeIntervalSinceReferenceDate: number)) : .double(number)
    }
}
