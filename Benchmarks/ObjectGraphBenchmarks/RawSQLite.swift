import CSQLite

/// The raw side of every workload: libsqlite3 called directly, with the thinnest wrapper a
/// hand-written data layer would have (prepared statements, positional binds, column reads).
///
/// The connection is configured as ``ObjectGraphSQLite/SQLiteStore`` configures its own (WAL,
/// `synchronous=NORMAL`, no foreign-key enforcement, `SQLITE_OPEN_NOMUTEX`), so the two sides
/// differ only in what runs above SQLite.
final class RawDB {
    let handle: OpaquePointer
    let path: String

    init(path: String) throws {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &db, flags, nil)
        guard status == SQLITE_OK, let db else {
            sqlite3_close_v2(db)
            throw BenchmarkFailure("raw sqlite3: cannot open \(path) (code \(status))")
        }
        self.handle = db
        self.path = path
        sqlite3_busy_timeout(db, 5_000)
        try exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=OFF;")
    }

    deinit { sqlite3_close_v2(handle) }

    func exec(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        guard status == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? "code \(status)"
            sqlite3_free(message)
            throw BenchmarkFailure("raw sqlite3: \(text) in \(sql)")
        }
    }

    func prepare(_ sql: String) throws -> RawStatement {
        var raw: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard status == SQLITE_OK, let raw else {
            throw BenchmarkFailure("raw sqlite3: \(String(cString: sqlite3_errmsg(handle))) preparing \(sql)")
        }
        return RawStatement(raw, db: self)
    }

    /// The first column of the first row, as an integer (0 when there is no row).
    func integer(_ sql: String) throws -> Int64 {
        let statement = try prepare(sql)
        return try statement.step() ? statement.int64(0) : 0
    }

    func errorMessage() -> String { String(cString: sqlite3_errmsg(handle)) }
}

/// One prepared statement. Binds are positional (1-based), columns 0-based.
final class RawStatement {
    let raw: OpaquePointer
    private let db: RawDB
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(_ raw: OpaquePointer, db: RawDB) {
        self.raw = raw
        self.db = db
    }

    deinit { sqlite3_finalize(raw) }

    @inline(__always) func reset() { sqlite3_reset(raw) }

    @inline(__always) func bind(_ value: Int64, at index: Int32) { sqlite3_bind_int64(raw, index, value) }

    @inline(__always) func bind(_ value: Double, at index: Int32) { sqlite3_bind_double(raw, index, value) }

    @inline(__always) func bind(_ value: String, at index: Int32) {
        var copy = value
        copy.withUTF8 { buffer in
            guard !buffer.isEmpty else {
                _ = sqlite3_bind_text(raw, index, "", 0, Self.transient)
                return
            }
            buffer.withMemoryRebound(to: CChar.self) { chars in
                _ = sqlite3_bind_text(raw, index, chars.baseAddress, Int32(chars.count), Self.transient)
            }
        }
    }

    @inline(__always) func step() throws -> Bool {
        let status = sqlite3_step(raw)
        if status == SQLITE_ROW { return true }
        if status == SQLITE_DONE { return false }
        throw BenchmarkFailure("raw sqlite3: \(db.errorMessage()) (code \(status))")
    }

    /// Runs a statement that returns no rows, then resets it for the next use.
    @inline(__always) func run() throws {
        while try step() {}
        reset()
    }

    @inline(__always) func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(raw, column) }

    @inline(__always) func double(_ column: Int32) -> Double { sqlite3_column_double(raw, column) }

    @inline(__always) func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(raw, column) else { return "" }
        let count = Int(sqlite3_column_bytes(raw, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}
