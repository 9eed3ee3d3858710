import CSQLite
import Foundation
import ObjectGraph

/// A value as raw SQL holds it: text as bytes, so it can be invalid UTF-8.
enum SQLValue: CustomStringConvertible {
    case null
    case integer(Int64)
    case real(Double)
    case text([UInt8])
    case blob([UInt8])

    static func text(_ string: String) -> SQLValue { .text(Array(string.utf8)) }

    var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let v): return "\(v)"
        case .real(let v): return "real \(v)"
        case .text(let bytes):
            let shown = bytes.count > 40 ? "\(bytes.count) bytes" : String(decoding: bytes, as: UTF8.self).debugDescription
            return "text \(shown)\(String(bytes: bytes, encoding: .utf8) == nil ? " (not UTF-8)" : "")"
        case .blob(let bytes): return "blob of \(bytes.count) bytes \(bytes.prefix(8).map { String($0, radix: 16) })"
        }
    }
}

/// A raw connection to a store file, with the store's `OG_NATURAL` collation (its indexes on
/// text need it for any write to their tables), comparing exactly as the store does.
final class RawDatabase {
    let handle: OpaquePointer
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(_ url: URL) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(url.path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let db else {
            sqlite3_close_v2(db)
            throw StoreError(.io, "cannot open \(url.path) raw")
        }
        handle = db
        sqlite3_create_collation_v2(db, "OG_NATURAL", SQLITE_UTF8, nil, { _, lengthA, a, lengthB, b in
            RawDatabase.natural(a, lengthA, b, lengthB)
        }, nil)
    }

    deinit { sqlite3_close_v2(handle) }

    static func natural(_ a: UnsafeRawPointer?, _ lengthA: Int32, _ b: UnsafeRawPointer?, _ lengthB: Int32) -> Int32 {
        func string(_ pointer: UnsafeRawPointer?, _ length: Int32) -> String {
            guard let pointer, length > 0 else { return "" }
            return String(decoding: UnsafeRawBufferPointer(start: pointer, count: Int(length)), as: UTF8.self)
        }
        let x = CompiledSort.prepare(.string(string(a, lengthA)), .natural)
        let y = CompiledSort.prepare(.string(string(b, lengthB)), .natural)
        switch CompiledSort.compare(x, y, .natural) {
        case .orderedAscending: return -1
        case .orderedSame: return 0
        case .orderedDescending: return 1
        }
    }

    /// Runs `sql` with `values` bound; the rows it returns, or `nil` when it fails.
    @discardableResult
    func run(_ sql: String, _ values: [SQLValue] = []) -> [[SQLValue]]? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else { return nil }
        defer { sqlite3_finalize(statement) }
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .null: sqlite3_bind_null(statement, index)
            case .integer(let v): sqlite3_bind_int64(statement, index, v)
            case .real(let v): sqlite3_bind_double(statement, index, v)
            case .text(let bytes):
                if bytes.isEmpty {
                    sqlite3_bind_text64(statement, index, "", 0, Self.transient, UInt8(SQLITE_UTF8))
                } else {
                    bytes.withUnsafeBytes { buffer in
                        _ = sqlite3_bind_text64(statement, index, buffer.baseAddress?.assumingMemoryBound(to: CChar.self), sqlite3_uint64(buffer.count), Self.transient, UInt8(SQLITE_UTF8))
                    }
                }
            case .blob(let bytes):
                if bytes.isEmpty {
                    sqlite3_bind_zeroblob(statement, index, 0)
                } else {
                    bytes.withUnsafeBytes { buffer in
                        _ = sqlite3_bind_blob64(statement, index, buffer.baseAddress, sqlite3_uint64(buffer.count), Self.transient)
                    }
                }
            }
        }
        var rows: [[SQLValue]] = []
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { return rows }
            guard status == SQLITE_ROW else { return nil }
            rows.append((0..<sqlite3_column_count(statement)).map { column in
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, column))
                case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, column))
                case SQLITE_TEXT:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    guard let text = sqlite3_column_text(statement, column) else { return .text([]) }
                    return .text(Array(UnsafeBufferPointer(start: text, count: count)))
                case SQLITE_BLOB:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    guard let blob = sqlite3_column_blob(statement, column) else { return .blob([]) }
                    return .blob(Array(UnsafeRawBufferPointer(start: blob, count: count)))
                default: return .null
                }
            })
        }
    }

    var changes: Int { Int(sqlite3_changes(handle)) }
}
