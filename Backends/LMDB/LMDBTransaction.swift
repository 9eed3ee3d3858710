import CLMDB
import ObjectGraph

/// One LMDB transaction, read-only or read-write, valid only inside the closure that
/// ``LMDBEnvironment`` hands it to. Byte views it returns point into the map and are valid
/// until the transaction ends (or, in a write transaction, until the next write).
struct LMDBTransaction {
    let txn: OpaquePointer
    let environment: LMDBEnvironment

    /// The value stored under `key`, or `nil`.
    func get(_ dbi: MDB_dbi, _ key: [UInt8]) throws -> UnsafeRawBufferPointer? {
        try key.withUnsafeBytes { raw in try get(dbi, raw) }
    }

    /// The value stored under the row key of `pk` (see ``PrimaryKeyBytes``), without building
    /// the key in an array.
    func get(_ dbi: MDB_dbi, primaryKey pk: Int64) throws -> UnsafeRawBufferPointer? {
        try PrimaryKeyBytes.withKey(pk) { raw in try get(dbi, raw) }
    }

    /// The value stored under `key` (bytes the caller keeps alive for the call).
    func get(_ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        let rc = mdb_get(txn, dbi, &k, &v)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "reading \(environment.path)")
        return UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
    }

    /// Stores `value` under `key` (for a duplicate-sorted database, adds the pair).
    func put(_ dbi: MDB_dbi, _ key: [UInt8], _ value: [UInt8], flags: UInt32 = 0) throws {
        let rc = rawPut(dbi, key, value, flags: flags)
        if rc == MDB_KEYEXIST && flags & UInt32(MDB_NODUPDATA) != 0 { return }
        try check(rc, "writing \(environment.path)")
    }

    /// Stores bytes the caller lends (say, from the stack) under `key`, as `put(_:_:_:flags:)`.
    func put(_ dbi: MDB_dbi, _ key: [UInt8], lent value: UnsafeRawBufferPointer, flags: UInt32 = 0) throws {
        let rc = key.withUnsafeBytes { rawKey -> Int32 in
            var k = MDB_val(mv_size: rawKey.count, mv_data: UnsafeMutableRawPointer(mutating: rawKey.baseAddress))
            var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
            return mdb_put(txn, dbi, &k, &v, flags)
        }
        if rc == MDB_KEYEXIST && flags & UInt32(MDB_NODUPDATA) != 0 { return }
        try check(rc, "writing \(environment.path)")
    }

    /// `mdb_put`'s status for `key` and `value` with `flags`.
    private func rawPut(_ dbi: MDB_dbi, _ key: [UInt8], _ value: [UInt8], flags: UInt32) -> Int32 {
        key.withUnsafeBytes { rawKey in rawPut(dbi, rawKey, value, flags: flags) }
    }

    private func rawPut(_ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer, _ value: [UInt8], flags: UInt32) -> Int32 {
        value.withUnsafeBytes { rawValue in
            var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
            var v = MDB_val(mv_size: rawValue.count, mv_data: UnsafeMutableRawPointer(mutating: rawValue.baseAddress))
            return mdb_put(txn, dbi, &k, &v, flags)
        }
    }

    /// Deletes the row key of `pk` (every duplicate), the key laid out on the stack (a cascade
    /// deletes thousands of rows: an array per key was an allocation each); `false` if absent.
    @discardableResult
    func delete(_ dbi: MDB_dbi, primaryKey pk: Int64) throws -> Bool {
        let rc = PrimaryKeyBytes.withKey(pk) { key -> Int32 in
            var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
            return mdb_del(txn, dbi, &k, nil)
        }
        if rc == MDB_NOTFOUND { return false }
        try check(rc, "deleting from \(environment.path)")
        return true
    }

    /// Deletes `key` (every duplicate), or only the pair `key`/`value`; `false` if absent.
    @discardableResult
    func delete(_ dbi: MDB_dbi, _ key: [UInt8], value: [UInt8]? = nil) throws -> Bool {
        try key.withUnsafeBytes { rawKey in
            var k = MDB_val(mv_size: rawKey.count, mv_data: UnsafeMutableRawPointer(mutating: rawKey.baseAddress))
            let rc: Int32
            if let value {
                rc = value.withUnsafeBytes { rawValue in
                    var v = MDB_val(mv_size: rawValue.count, mv_data: UnsafeMutableRawPointer(mutating: rawValue.baseAddress))
                    return mdb_del(txn, dbi, &k, &v)
                }
            } else {
                rc = mdb_del(txn, dbi, &k, nil)
            }
            if rc == MDB_NOTFOUND { return false }
            try check(rc, "deleting from \(environment.path)")
            return true
        }
    }

    /// A cursor on `dbi`, closed when `body` returns.
    func withCursor<T>(_ dbi: MDB_dbi, _ body: (LMDBCursor) throws -> T) throws -> T {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, dbi, &cursor), "opening a cursor on \(environment.path)")
        defer { mdb_cursor_close(cursor) }
        return try body(LMDBCursor(cursor: cursor!, environment: environment))
    }

    /// `body` with a set of cursors, one per database it asks for, opened on first use and
    /// closed when it returns; see ``CursorSet``.
    func withCursorSet<T>(_ body: (inout CursorSet) throws -> T) rethrows -> T {
        var cursors = CursorSet(transaction: self)
        defer { cursors.closeAll() }
        return try body(&cursors)
    }

    /// How many duplicates the row key of `pk` has in the duplicate-sorted database `dbi`
    /// (`mdb_cursor_count`, reading none of them); 0 without the key.
    func duplicateCount(_ dbi: MDB_dbi, primaryKey pk: Int64) throws -> Int {
        try withCursor(dbi) { cursor in
            try cursor.position(MDB_SET_KEY, primaryKey: pk) == nil ? 0 : try cursor.duplicateCount()
        }
    }

    /// Every value stored under `key` in a duplicate-sorted database, in order.
    func duplicates(_ dbi: MDB_dbi, _ key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        try withCursor(dbi) { cursor in
            guard var entry = try cursor.position(MDB_SET_KEY, key: key) else { return }
            while true {
                try body(entry.value)
                guard let next = try cursor.move(MDB_NEXT_DUP) else { return }
                entry = next
            }
        }
    }
}

/// A cursor inside an ``LMDBTransaction``.
struct LMDBCursor {
    let cursor: OpaquePointer
    /// The environment, for error messages. A cursor lives inside one of the environment's
    /// transactions, so the environment outlives it: held unretained, making a cursor costs
    /// no reference counting (retaining the path for each of a save's row writes did).
    unowned(unsafe) let environment: LMDBEnvironment

    /// The environment's file, for error messages.
    var path: String { environment.path }

    typealias Entry = (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)

    /// Moves without a key (`MDB_FIRST`, `MDB_NEXT`, `MDB_NEXT_DUP`, `MDB_PREV_NODUP`, …).
    /// (Inlined into every scan: left a call once a scan loop grew, 27 instructions a row.)
    @inline(__always)
    func move(_ op: MDB_cursor_op) throws -> Entry? {
        var k = MDB_val()
        var v = MDB_val()
        let rc = mdb_cursor_get(cursor, &k, &v, op)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "moving a cursor in \(path)")
        return (UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size), UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
    }

    /// Moves to `key` (`MDB_SET_KEY`) or the first key at or after it (`MDB_SET_RANGE`).
    func position(_ op: MDB_cursor_op, key: [UInt8]) throws -> Entry? {
        try key.withUnsafeBytes { raw in try position(op, key: raw) }
    }

    /// ``position(_:key:)`` at the row key of `pk`, built on the stack.
    func position(_ op: MDB_cursor_op, primaryKey pk: Int64) throws -> Entry? {
        try PrimaryKeyBytes.withKey(pk) { raw in try position(op, key: raw) }
    }

    private func position(_ op: MDB_cursor_op, key raw: UnsafeRawBufferPointer) throws -> Entry? {
        var k = MDB_val(mv_size: raw.count, mv_data: UnsafeMutableRawPointer(mutating: raw.baseAddress))
        var v = MDB_val()
        let rc = mdb_cursor_get(cursor, &k, &v, op)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "positioning a cursor in \(path)")
        return (UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size), UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
    }

    /// Moves to the pair `key`/`value` of a duplicate-sorted database (`MDB_GET_BOTH`).
    func find(key: [UInt8], value: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { rawKey in
            try value.withUnsafeBytes { rawValue in
                var k = MDB_val(mv_size: rawKey.count, mv_data: UnsafeMutableRawPointer(mutating: rawKey.baseAddress))
                var v = MDB_val(mv_size: rawValue.count, mv_data: UnsafeMutableRawPointer(mutating: rawValue.baseAddress))
                let rc = mdb_cursor_get(cursor, &k, &v, MDB_GET_BOTH)
                if rc == MDB_NOTFOUND { return false }
                try check(rc, "looking up a pair in \(path)")
                return true
            }
        }
    }

    /// Stores the bytes the caller lends under the row key of `pk` through the cursor (which
    /// is then on it); with `MDB_NOOVERWRITE` in `flags`, `false` and nothing written when the
    /// key exists.
    @discardableResult
    func put(primaryKey pk: Int64, lent value: UnsafeRawBufferPointer, flags: UInt32 = 0) throws -> Bool {
        try PrimaryKeyBytes.withKey(pk) { key in try put(key, lent: value, flags: flags) }
    }

    /// Stores bytes the caller lends under `key` through the cursor; `false`, writing nothing,
    /// when `MDB_NOOVERWRITE` or `MDB_NODUPDATA` in `flags` finds the key or pair there.
    @discardableResult
    func put(_ key: UnsafeRawBufferPointer, lent value: UnsafeRawBufferPointer, flags: UInt32 = 0) throws -> Bool {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let rc = mdb_cursor_put(cursor, &k, &v, flags)
        if rc == MDB_KEYEXIST && flags & UInt32(MDB_NOOVERWRITE | MDB_NODUPDATA) != 0 { return false }
        try check(rc, "writing \(path)")
        return true
    }

    /// Deletes the entry the cursor is on.
    func deleteCurrent() throws {
        try check(mdb_cursor_del(cursor, 0), "deleting from \(path)")
    }

    /// The number of duplicates of the current key, without reading them.
    func duplicateCount() throws -> Int {
        var count = 0
        try check(mdb_cursor_count(cursor, &count), "counting duplicates in \(path)")
        return count
    }
}

/// One cursor per database, kept open across the many operations of a save (or of a read of
/// many rows). LMDB keeps a write transaction's cursors valid through its other writes, and a
/// cursor that is already on a leaf page finds a key on the same page without descending
/// from the root: a save's rows come in key order (new keys ascending at the end of the tree,
/// a cascade's messages next to each other), as do a relationship's members, so most reads and
/// writes stay on the page of the one before.
struct CursorSet {
    let transaction: LMDBTransaction
    private var open: [(dbi: MDB_dbi, cursor: OpaquePointer)] = []

    init(transaction: LMDBTransaction) { self.transaction = transaction }

    /// The cursor on `dbi`, opened on first use.
    mutating func cursor(_ dbi: MDB_dbi) throws -> LMDBCursor {
        // A save touches a handful of row databases: a scan beats hashing.
        for entry in open where entry.dbi == dbi { return LMDBCursor(cursor: entry.cursor, environment: transaction.environment) }
        var cursor: OpaquePointer?
        let path = transaction.environment.path
        try check(mdb_cursor_open(transaction.txn, dbi, &cursor), "opening a cursor on \(path)")
        guard let cursor else { throw LMDBError(code: MDB_PANIC).storeError("opening a cursor on \(path)") }
        open.append((dbi, cursor))
        return LMDBCursor(cursor: cursor, environment: transaction.environment)
    }

    /// Closes every cursor (before the transaction ends, as LMDB asks).
    mutating func closeAll() {
        for entry in open { mdb_cursor_close(entry.cursor) }
        open.removeAll()
    }
}
