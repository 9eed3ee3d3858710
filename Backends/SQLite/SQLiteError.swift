import CSQLite
import ObjectGraph

/// A result code and message from libsqlite3, kept as the underlying error of the
/// ``ObjectGraph/StoreError`` the store throws.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// The extended result code (`SQLITE_BUSY`, `SQLITE_CORRUPT`, …).
    public let code: Int32
    /// sqlite3's message.
    public let message: String
    /// The statement, when there was one.
    public let sql: String?

    /// "SQLITE code N: message (in: SQL)".
    public var description: String {
        "sqlite error \(code): \(message)" + (sql.map { " (in: \($0.prefix(200)))" } ?? "")
    }

    /// The ObjectGraph error for this failure: corrupt files, busy locks and I/O errors get
    /// their own codes; everything else is a backend error.
    func storeError(_ context: String) -> StoreError {
        let primary = code & 0xff
        let storeCode: StoreError.Code
        switch primary {
        case SQLITE_CORRUPT, SQLITE_NOTADB: storeCode = .corrupt
        case SQLITE_BUSY, SQLITE_LOCKED: storeCode = .busy
        case SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_FULL, SQLITE_READONLY, SQLITE_PERM: storeCode = .io
        case SQLITE_CONSTRAINT: storeCode = .constraintViolation
        default: storeCode = .backend
        }
        return StoreError(storeCode, "\(context): \(message)", underlying: self)
    }
}
