import CSQLite
import Foundation
import ObjectGraph

/// One libsqlite3 connection with a cache of prepared statements keyed by SQL text.
///
/// Not thread-safe: the owning store hands a connection to one thread at a time (the writer
/// under its lock, readers from a pool), hence the unchecked conformance — and the statement
/// caches skip Swift's dynamic exclusivity checks, which were a twentieth of a fault.
final class SQLiteConnection: @unchecked Sendable {
    private(set) var handle: OpaquePointer?
    @exclusivity(unchecked) private var statements: [String: SQLiteStatement] = [:]
    /// The same statements, for callers that name their SQL by an object kept for the store's
    /// lifetime (``prepare(_:key:)``): hashing an address instead of the SQL text.
    @exclusivity(unchecked) private var statementsByKey: [IdentityKey: SQLiteStatement] = [:]
    /// Statements handed out since the last ``resetActive()``: a statement left mid-result
    /// would keep its read transaction (and an old WAL snapshot) open.
    @exclusivity(unchecked) private var active: [SQLiteStatement] = []
    /// The WAL-index header the read transaction kept open between reads began at, `nil`
    /// when none is kept (see `SQLiteConnection+ParkedRead.swift`).
    @exclusivity(unchecked) var parkedSnapshot: WALIndexHeader?
    /// This connection's mapping of the WAL index's first region (SQLite's own, through the
    /// VFS), looked up once; `nil` before or where there is none.
    @exclusivity(unchecked) var walIndex: UnsafeRawPointer?
    let path: String

    /// Opens `path` for reading and writing; `create` makes the file if it is missing (only
    /// the store's first connection does: a later one finding no file reports it).
    init(path: String, create: Bool = false) throws {
        self.path = path
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &db, flags, nil)
        guard status == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(db)
            throw SQLiteError(code: status, message: message, sql: nil).storeError("opening \(path)")
        }
        handle = db
        SQLiteFunctions.register(on: db)
        SQLiteAggregates.register(on: db)
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, 5_000)
    }

    deinit { close() }

    func close() {
        // An open read transaction ends with the connection (SQLite rolls it back).
        parkedSnapshot = nil
        walIndex = nil
        for statement in statements.values { statement.finalize() }
        statements = [:]
        statementsByKey = [:]
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    func lastError(_ status: Int32, sql: String?) -> SQLiteError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "connection closed"
        return SQLiteError(code: status, message: message, sql: sql)
    }

    /// Runs SQL without results (several statements allowed).
    func execute(_ sql: String) throws {
        guard let handle else { throw StoreError(.closed, "the SQLite store at \(path) is closed") }
        var errorMessage: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if status != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? "error \(status)"
            sqlite3_free(errorMessage)
            throw SQLiteError(code: status, message: message, sql: sql).storeError("running SQL on \(path)")
        }
    }

    /// A cached prepared statement for `sql`, reset and with bindings cleared.
    func prepare(_ sql: String) throws -> SQLiteStatement {
        if let cached = statements[sql] {
            cached.reset()
            active.append(cached)
            return cached
        }
        guard let handle else { throw StoreError(.closed, "the SQLite store at \(path) is closed") }
        var raw: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard status == SQLITE_OK, let raw else {
            throw lastError(status, sql: sql).storeError("preparing SQL on \(path)")
        }
        let statement = SQLiteStatement(raw, connection: self, sql: sql)
        statements[sql] = statement
        active.append(statement)
        return statement
    }

    /// ``prepare(_:)`` for SQL that `key` stands for: `key` must live as long as the
    /// connection and always stand for the same SQL (a store's precomputed plans do).
    func prepare(_ sql: String, key: AnyObject) throws -> SQLiteStatement {
        if let cached = statementsByKey[IdentityKey(key)] {
            cached.reset()
            active.append(cached)
            return cached
        }
        let statement = try prepare(sql)
        statementsByKey[IdentityKey(key)] = statement
        return statement
    }

    /// Resets every statement used since the last call, ending their read transactions.
    func resetActive() {
        for statement in active { statement.reset() }
        active.removeAll(keepingCapacity: true)
    }

    /// Rows changed by the last statement.
    var changes: Int { handle.map { Int(sqlite3_changes($0)) } ?? 0 }
}

/// A prepared statement: bind values by position, step through rows, read columns.
final class SQLiteStatement {
    /// The decimal a decimal column's text holds (written as its `description`); `nil` for
    /// text that is none. Read here and by the SQL functions (``SQLiteFunctions``), so both
    /// see the same values. (A NaN is stored as "NaN", which `Decimal(string:)` does not read.)
    static func storedDecimal(_ text: String) -> Decimal? {
        text == "NaN" ? Decimal.nan : Decimal(string: text, locale: posix)
    }

    private static let posix = Locale(identifier: "en_US_POSIX")

    private let raw: OpaquePointer
    private unowned let connection: SQLiteConnection
    let sql: String
    /// How many rows the statement's last run gave: a fetch reserves that much room before
    /// reading the next run's rows. Grown from empty, a fetch of 100,000 rows moved its row
    /// array 17 times, a twentieth of the fetch (perf); room reserved but not used is never
    /// touched, so costs no memory.
    var lastRowCount = 0
    /// The first column of the current row whose stored value is not of its attribute's kind
    /// (see ``noteDamage(_:)``), `-1` while there is none.
    var damagedColumn: Int32 = -1
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(_ raw: OpaquePointer, connection: SQLiteConnection, sql: String) {
        self.raw = raw
        self.connection = connection
        self.sql = sql
    }

    func finalize() { sqlite3_finalize(raw) }

    func reset() {
        sqlite3_reset(raw)
        sqlite3_clear_bindings(raw)
        damagedColumn = -1
    }

    /// Readies the statement to run again, keeping its bindings: for a loop that binds every
    /// parameter before each run. Clearing them as well (``reset()``) freed and zeroed each
    /// bound value only for the loop to bind the next: 3% of inserting 100,000 rows (perf).
    func rewind() {
        sqlite3_reset(raw)
    }

    /// Binds a value at 1-based `index`. Strings and bytes are bound with their exact length,
    /// so NUL bytes survive; empty data is a zero-length blob, not NULL.
    func bind(_ value: AttributeValue, at index: Int32) throws {
        let status: Int32
        switch value {
        case .null: status = sqlite3_bind_null(raw, index)
        case .integer(let v): status = sqlite3_bind_int64(raw, index, v)
        case .double(let v): status = v.isNaN ? bindNaN(v, at: index) : sqlite3_bind_double(raw, index, v)
        case .bool(let v): status = sqlite3_bind_int64(raw, index, v ? 1 : 0)
        case .date(let d):
            let interval = d.timeIntervalSinceReferenceDate
            status = interval.isNaN ? bindNaN(interval, at: index) : sqlite3_bind_double(raw, index, interval)
        case .string(let s): status = bindText(s, at: index)
        case .decimal(let d): status = bindText(d.description, at: index)
        case .uuid(let u): status = bindText(u.uuidString, at: index)
        case .uri(let u): status = bindText(u.absoluteString, at: index)
        case .data(let data):
            if data.isEmpty {
                status = sqlite3_bind_zeroblob(raw, index, 0)
            } else {
                status = data.withUnsafeBytes { buffer in
                    sqlite3_bind_blob64(raw, index, buffer.baseAddress, sqlite3_uint64(buffer.count), Self.transient)
                }
            }
        }
        guard status == SQLITE_OK else { throw connection.lastError(status, sql: sql).storeError("binding a value") }
    }

    /// A NaN as an 8-byte blob of its bits, big-endian. SQLite stores no NaN (a NaN bound as a
    /// real becomes `NULL`: the value lost); a blob keeps it, payload and all. Blobs order
    /// after every number, as NaN sorts after +∞ (``ObjectGraph/CompiledSort``); comparisons
    /// keep it out of ranges (see `SQLiteQueryCompiler`). Big-endian, the first byte is 0x7F or
    /// 0xFF, never the start of a number: read as a real, the blob is 0 (see ``value(_:as:)``).
    private func bindNaN(_ value: Double, at index: Int32) -> Int32 {
        withUnsafeBytes(of: value.bitPattern.bigEndian) { bytes in
            sqlite3_bind_blob(raw, index, bytes.baseAddress, Int32(bytes.count), Self.transient)
        }
    }

    /// The NaN a blob written by ``bindNaN(_:at:)`` holds; `nil` for anything else.
    private func storedNaN(_ column: Int32) -> Double? {
        guard sqlite3_column_type(raw, column) == SQLITE_BLOB, sqlite3_column_bytes(raw, column) == 8,
              let bytes = sqlite3_column_blob(raw, column) else { return nil }
        let value = Double(bitPattern: UInt64(bigEndian: UnsafeRawPointer(bytes).loadUnaligned(as: UInt64.self)))
        return value.isNaN ? value : nil
    }

    /// A stored NaN (see ``bindNaN(_:at:)``) in a non-NULL column reading 0; `nil` for a
    /// number, and damage noted for anything else (text, another blob).
    @inline(never)
    private func storedNaNOrNumber(_ column: Int32) -> Double? {
        if let nan = storedNaN(column) { return nan }
        _ = zeroIsNumber(column)
        return nil
    }

    /// Text that does not parse as its attribute's kind: noted as damage, read as nil.
    @inline(never)
    private func parseFailure(_ column: Int32) -> AttributeValue {
        noteDamage(column)
        return .null
    }

    private func bindText(_ text: String, at index: Int32) -> Int32 {
        var copy = text
        return copy.withUTF8 { buffer -> Int32 in
            guard let base = buffer.baseAddress, buffer.count > 0 else {
                // An empty string is an empty text value, not NULL.
                return sqlite3_bind_text64(raw, index, "", 0, Self.transient, UInt8(SQLITE_UTF8))
            }
            return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { pointer in
                sqlite3_bind_text64(raw, index, pointer, sqlite3_uint64(buffer.count), Self.transient, UInt8(SQLITE_UTF8))
            }
        }
    }

    /// Binds `text` without copying it (SQLite reads it in place until the next binding,
    /// reset or finalization, all of which `text`'s owner outlives; see ``StaticText``).
    func bind(_ text: StaticText, at index: Int32) throws {
        let status = sqlite3_bind_text64(raw, index, text.pointer, sqlite3_uint64(text.count), nil, UInt8(SQLITE_UTF8))
        guard status == SQLITE_OK else { throw connection.lastError(status, sql: sql).storeError("binding a value") }
    }

    func bind(_ value: Int64, at index: Int32) throws {
        let status = sqlite3_bind_int64(raw, index, value)
        guard status == SQLITE_OK else { throw connection.lastError(status, sql: sql).storeError("binding a value") }
    }

    func bind(_ value: String, at index: Int32) throws {
        let status = bindText(value, at: index)
        guard status == SQLITE_OK else { throw connection.lastError(status, sql: sql).storeError("binding a value") }
    }

    /// Advances to the next row; false when done.
    func step() throws -> Bool {
        let status = sqlite3_step(raw)
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.lastError(status, sql: sql).storeError("running a statement")
        }
    }

    /// Runs a statement that returns no rows.
    func run() throws {
        while try step() {}
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(raw, column) == SQLITE_NULL }

    /// Records that `column` of the current row holds a value its attribute cannot have (text
    /// in a number's column, a UUID that does not parse): read as 0 or nil, it was handed up
    /// as if stored. Noted rather than thrown, so that reading a value stays a plain call; a
    /// row reader checks ``damagedColumn`` once per row (``damageError(primaryKey:)``).
    /// Only values that already took a slow path (a number reading 0, text that does not
    /// parse) are checked: asking every column's type would cost a call per value.
    func noteDamage(_ column: Int32) {
        if damagedColumn < 0 { damagedColumn = column }
    }

    /// The error for the damage ``noteDamage(_:)`` recorded in the row with key `primaryKey`.
    func damageError(primaryKey: Int64) -> StoreError {
        let column = damagedColumn
        damagedColumn = -1
        let name = sqlite3_column_name(raw, column).map { String(cString: $0) } ?? "\(column)"
        let kinds = [SQLITE_INTEGER: "an integer", SQLITE_FLOAT: "a real", SQLITE_TEXT: "text", SQLITE_BLOB: "a blob", SQLITE_NULL: "NULL"]
        var held = kinds[sqlite3_column_type(raw, column)] ?? "a value"
        if held == "text", let text = sqlite3_column_text(raw, column),
           String(storedUTF8: UnsafeRawBufferPointer(start: text, count: Int(sqlite3_column_bytes(raw, column)))) == nil {
            held = "text that is not UTF-8"
        }
        return StoreError(.corrupt, "\(connection.path): the row with key \(primaryKey) holds \(held) in column \(name), which its attribute or relationship cannot hold")
    }

    /// Whether a non-NULL value read as 0 is stored as a number (else it is damage).
    @inline(never)
    func zeroIsNumber(_ column: Int32) -> Bool? {
        switch sqlite3_column_type(raw, column) {
        case SQLITE_NULL: return nil
        case SQLITE_INTEGER, SQLITE_FLOAT: return true
        default:
            noteDamage(column)
            return false
        }
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(raw, column) }

    func double(_ column: Int32) -> Double { sqlite3_column_double(raw, column) }

    func string(_ column: Int32) -> String? {
        guard let text = sqlite3_column_text(raw, column) else { return isNull(column) ? nil : "" }
        let count = Int(sqlite3_column_bytes(raw, column))
        let bytes = UnsafeRawBufferPointer(start: text, count: count)
        if let string = String(storedUTF8: bytes) { return string }
        // No save writes such text: the file was written by something else.
        noteDamage(column)
        return String(decoding: bytes, as: UTF8.self)
    }

    func data(_ column: Int32) -> Data? {
        // (A NULL and an empty blob both give no pointer: only then is the type asked.)
        guard let bytes = sqlite3_column_blob(raw, column) else { return isNull(column) ? nil : Data() }
        let count = Int(sqlite3_column_bytes(raw, column))
        return Data(bytes: bytes, count: count)
    }

    /// A column of an entity's rows as a row reader decodes it.
    struct Column: Sendable {
        let position: Int32
        let type: AttributeType
        /// Whether NULL is damage here: a required attribute's column, where no save puts nil
        /// (validation refuses it), so a NULL was written by something else. Read as nil, it
        /// reached the typed accessor of a non-optional property, which stops the process.
        let required: Bool
    }

    /// Reads `column` of an entity's row, noting a NULL in a required column as damage.
    @inline(__always)
    func value(_ column: Column) -> AttributeValue {
        let value = value(column.position, as: column.type)
        if case .null = value, column.required { noteDamage(column.position) }
        return value
    }

    /// Reads a column as the attribute type expects it.
    ///
    /// A number is read first and the column's type asked only when it reads as zero (what
    /// SQLite answers for NULL), and text and blobs tell NULL by themselves: asking every
    /// column's type first was a call per value (84 instructions each, a twentieth of
    /// fetching 100,000 messages, callgrind).
    func value(_ column: Int32, as type: AttributeType) -> AttributeValue {
        switch type {
        case .integer16, .integer32, .integer64:
            let value = int64(column)
            guard value == 0 else { return .integer(value) }
            return zeroIsNumber(column) == nil ? .null : .integer(value)
        case .double, .float:
            let value = double(column)
            // (The column's type is read only for a 0, which NULL and a stored NaN read as.)
            guard value == 0 else { return .double(value) }
            if isNull(column) { return .null }
            return .double(storedNaNOrNumber(column) ?? value)
        case .boolean:
            let value = int64(column)
            guard value == 0 else { return .bool(true) }
            return zeroIsNumber(column) == nil ? .null : .bool(false)
        case .date:
            let value = double(column)
            guard value == 0 else { return .date(Date(timeIntervalSinceReferenceDate: value)) }
            if isNull(column) { return .null }
            return .date(Date(timeIntervalSinceReferenceDate: storedNaNOrNumber(column) ?? value))
        case .string: return string(column).map { .string($0) } ?? .null
        case .decimal:
            guard let text = string(column) else { return .null }
            guard let value = Self.storedDecimal(text) else { return parseFailure(column) }
            return .decimal(value)
        case .uuid:
            guard let text = string(column) else { return .null }
            return UUID(uuidString: text).map { .uuid($0) } ?? parseFailure(column)
        case .uri:
            guard let text = string(column) else { return .null }
            return URL(string: text).map { .uri($0) } ?? parseFailure(column)
        case .binaryData, .transformable: return data(column).map { .data($0) } ?? .null
        }
    }
}

/// A string's UTF-8 bytes in memory of their own for as long as this object lives, bound to
/// statements without a copy: the entity names every saved row binds (its own, its to-ones'
/// destinations'), which SQLite copied into a fresh allocation at each binding and freed at
/// the next (two allocations per inserted message).
final class StaticText: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<CChar>
    let count: Int

    init(_ string: String) {
        let bytes = string.utf8.map { CChar(bitPattern: $0) }
        count = bytes.count
        pointer = .allocate(capacity: max(bytes.count, 1))
        pointer.initialize(from: bytes, count: bytes.count)
    }

    deinit { pointer.deallocate() }
}
