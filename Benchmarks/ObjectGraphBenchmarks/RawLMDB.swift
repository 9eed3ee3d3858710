import CLMDB
import Foundation

/// The raw side of the LMDB workloads: liblmdb called directly, with the thinnest wrapper a
/// hand-written data layer would have, on the layout ObjectGraph's LMDB store writes
/// (Backends/LMDB/README.md): `og:rows:Chat` and `og:rows:Message` keyed by 8-byte big-endian
/// keys (sign bit flipped), rows in the store's encoding, and `og:m:Chat.messages` holding each
/// chat's message keys as sorted duplicates.
///
/// The environment is opened as ``ObjectGraphLMDB/LMDBStore`` opens its own (`MDB_NOSUBDIR |
/// MDB_NOTLS`, full sync, a 64 MiB map), and reads renew a reset read-only transaction, as the
/// store does, so the two sides differ only in what runs above LMDB.
final class RawLMDB {
    let env: OpaquePointer
    let path: String
    let chats: MDB_dbi
    let messages: MDB_dbi
    let members: MDB_dbi
    private var reader: OpaquePointer?

    /// Entity codes: the model's entity names sorted (Chat, Item, Message, Student, Subject).
    static let chatCode: UInt16 = 0
    static let messageCode: UInt16 = 2

    init(path: String) throws {
        var env: OpaquePointer?
        mdb_env_create(&env)
        mdb_env_set_maxdbs(env, 64)
        mdb_env_set_mapsize(env, 64 << 20)
        let status = mdb_env_open(env, path, UInt32(MDB_NOSUBDIR | MDB_NOTLS), 0o644)
        guard status == MDB_SUCCESS, let env else {
            mdb_env_close(env)
            throw BenchmarkFailure("raw lmdb: cannot open \(path): \(String(cString: mdb_strerror(status)))")
        }
        self.env = env
        self.path = path
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(env, nil, 0, &txn), "begin")
        var handles: [MDB_dbi] = []
        for (name, flags) in [("og:rows:Chat", 0), ("og:rows:Message", 0), ("og:m:Chat.messages", MDB_DUPSORT)] {
            var dbi: MDB_dbi = 0
            try Self.check(mdb_dbi_open(txn, name, UInt32(flags), &dbi), "opening \(name) (is this an ObjectGraph LMDB store?)")
            handles.append(dbi)
        }
        try Self.check(mdb_txn_commit(txn), "commit")
        (chats, messages, members) = (handles[0], handles[1], handles[2])
    }

    /// The school's databases, for the many-to-many workloads: Student and Subject rows, and
    /// each student's subject keys as sorted duplicates (the store also keeps the inverse,
    /// `og:m:Subject.students`, which the traversals do not read).
    struct SchoolDatabases {
        let students: MDB_dbi
        let subjects: MDB_dbi
        let studentSubjects: MDB_dbi
    }

    /// Opens the school's databases (which the store created with the file).
    func openSchool() throws -> SchoolDatabases {
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(env, nil, 0, &txn), "begin")
        var handles: [MDB_dbi] = []
        do {
            for (name, flags) in [("og:rows:Student", 0), ("og:rows:Subject", 0), ("og:m:Student.subjects", MDB_DUPSORT)] {
                var dbi: MDB_dbi = 0
                try Self.check(mdb_dbi_open(txn, name, UInt32(flags), &dbi), "opening \(name)")
                handles.append(dbi)
            }
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try Self.check(mdb_txn_commit(txn), "commit")
        return SchoolDatabases(students: handles[0], subjects: handles[1], studentSubjects: handles[2])
    }

    deinit {
        if let reader { mdb_txn_abort(reader) }
        mdb_env_close(env)
    }

    static func check(_ status: Int32, _ what: String) throws {
        guard status == MDB_SUCCESS else { throw BenchmarkFailure("raw lmdb: \(what): \(String(cString: mdb_strerror(status)))") }
    }

    /// One read-only snapshot: the reset transaction renewed, then reset again.
    func read<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        if let reader {
            try Self.check(mdb_txn_renew(reader), "renew")
        } else {
            try Self.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &reader), "begin read")
        }
        defer { mdb_txn_reset(reader) }
        return try body(reader!)
    }

    /// One write transaction, committed.
    func write<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(env, nil, 0, &txn), "begin write")
        do {
            let result = try body(txn!)
            try Self.check(mdb_txn_commit(txn), "commit")
            return result
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
    }

    // MARK: Keys and values

    @inline(__always) static func key(_ pk: Int64) -> UInt64 { (UInt64(bitPattern: pk) ^ (1 << 63)).bigEndian }

    @inline(__always) static func pk(_ raw: UnsafeRawPointer) -> Int64 {
        Int64(bitPattern: UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self)) ^ (1 << 63))
    }

    /// Runs `body` with the MDB_val of an 8-byte key.
    @inline(__always) static func withKey<T>(_ pk: Int64, _ body: (inout MDB_val) throws -> T) rethrows -> T {
        var bytes = key(pk)
        return try withUnsafeMutableBytes(of: &bytes) { raw in
            var value = MDB_val(mv_size: 8, mv_data: raw.baseAddress)
            return try body(&value)
        }
    }

    /// A member entry: the key and the entity code.
    static func memberEntry(_ pk: Int64, code: UInt16) -> [UInt8] {
        withUnsafeBytes(of: key(pk)) { Array($0) } + [UInt8(code >> 8), UInt8(code & 0xff)]
    }

    static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// A Chat row: format 2, entity code, version, one string attribute, no to-ones.
    static func chatRow(title: String, version: Int64) -> [UInt8] {
        var bytes: [UInt8] = [2]
        append(chatCode, to: &bytes)
        append(UInt64(bitPattern: version), to: &bytes)
        append(UInt16(1), to: &bytes)
        bytes.append(4)
        append(UInt32(title.utf8.count), to: &bytes)
        bytes.append(contentsOf: title.utf8)
        append(UInt16(0), to: &bytes)
        return bytes
    }

    /// A Message row: text (string), sentAt (date: reference-date seconds), to-one chat.
    static func messageRow(text: String, sentAt: Double, chat: Int64, version: Int64) -> [UInt8] {
        var bytes: [UInt8] = [2]
        bytes.reserveCapacity(48 + text.utf8.count)
        append(messageCode, to: &bytes)
        append(UInt64(bitPattern: version), to: &bytes)
        append(UInt16(2), to: &bytes)
        bytes.append(4)
        append(UInt32(text.utf8.count), to: &bytes)
        bytes.append(contentsOf: text.utf8)
        bytes.append(6)
        append(sentAt.bitPattern, to: &bytes)
        append(UInt16(1), to: &bytes)
        bytes.append(1)
        append(chatCode, to: &bytes)
        append(UInt64(bitPattern: chat) ^ (1 << 63), to: &bytes)
        return bytes
    }

    struct MessageFields {
        var text: String
        var sentAt: Double
        var chat: Int64
        var version: Int64
    }

    /// Reads the fields of a Message row written by ``messageRow`` (or by the store).
    static func decodeMessage(_ value: MDB_val) throws -> MessageFields {
        let raw = UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)
        guard raw.count >= 16, raw[0] == 2, raw[13] == 4 else { throw BenchmarkFailure("raw lmdb: not a message row") }
        let version = Int64(bitPattern: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 3, as: UInt64.self)))
        let length = Int(UInt32(bigEndian: raw.loadUnaligned(fromByteOffset: 14, as: UInt32.self)))
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: raw[18..<18 + length]), as: UTF8.self)
        var offset = 18 + length
        guard raw[offset] == 6 else { throw BenchmarkFailure("raw lmdb: message row without a date") }
        let sentAt = Double(bitPattern: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: offset + 1, as: UInt64.self)))
        offset += 9 + 2
        guard raw[offset] == 1 else { throw BenchmarkFailure("raw lmdb: message row without a chat") }
        let chat = pk(raw.baseAddress! + offset + 3)
        return MessageFields(text: text, sentAt: sentAt, chat: chat, version: version)
    }

    /// Reads a Chat row's title and version.
    static func decodeChat(_ value: MDB_val) throws -> (title: String, version: Int64) {
        let row = try decodeFirstString(value, "chat")
        return (row.text, row.version)
    }

    /// Reads the name of a Student or Subject row (one string attribute, as a Chat row).
    static func decodeName(_ value: MDB_val) throws -> String {
        try decodeFirstString(value, "student or subject").text
    }

    /// The first attribute of a row whose first attribute is a string, and the row's version.
    private static func decodeFirstString(_ value: MDB_val, _ what: String) throws -> (text: String, version: Int64) {
        let raw = UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)
        guard raw.count >= 18, raw[0] == 2, raw[13] == 4 else { throw BenchmarkFailure("raw lmdb: not a \(what) row") }
        let version = Int64(bitPattern: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 3, as: UInt64.self)))
        let length = Int(UInt32(bigEndian: raw.loadUnaligned(fromByteOffset: 14, as: UInt32.self)))
        guard raw.count >= 18 + length else { throw BenchmarkFailure("raw lmdb: a truncated \(what) row") }
        return (String(decoding: UnsafeRawBufferPointer(rebasing: raw[18..<18 + length]), as: UTF8.self), version)
    }

    // MARK: Operations

    func put(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ pk: Int64, _ value: [UInt8], flags: UInt32 = 0) throws {
        try Self.withKey(pk) { key in
            try value.withUnsafeBytes { raw in
                var data = MDB_val(mv_size: raw.count, mv_data: UnsafeMutableRawPointer(mutating: raw.baseAddress))
                try Self.check(mdb_put(txn, dbi, &key, &data, flags), "put")
            }
        }
    }

    /// The row under `pk`, or `nil`.
    func get(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ pk: Int64) throws -> MDB_val? {
        try Self.withKey(pk) { key in
            var data = MDB_val()
            let status = mdb_get(txn, dbi, &key, &data)
            if status == MDB_NOTFOUND { return nil }
            try Self.check(status, "get")
            return data
        }
    }

    /// Calls `body` with the row of each of `keys` (in key order) read through one cursor,
    /// which LMDB searches on its current page before descending from the root, as the store
    /// reads a relationship's member rows; throws for a missing row.
    func rows<T>(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ keys: [Int64], _ body: (Int64, MDB_val) throws -> T) throws -> [T] {
        var cursor: OpaquePointer?
        try Self.check(mdb_cursor_open(txn, dbi, &cursor), "cursor")
        defer { mdb_cursor_close(cursor) }
        return try keys.map { pk in
            try Self.withKey(pk) { key in
                var data = MDB_val()
                let status = mdb_cursor_get(cursor, &key, &data, MDB_SET_KEY)
                if status == MDB_NOTFOUND { throw BenchmarkFailure("raw: row \(pk) is missing") }
                try Self.check(status, "cursor get")
                return try body(pk, data)
            }
        }
    }

    /// The message keys of chat `chat` (its member duplicates, in key order).
    func messageKeys(_ txn: OpaquePointer, chat: Int64, into keys: inout [Int64]) throws {
        try memberKeys(txn, members, of: chat, into: &keys)
    }

    /// The member keys under `owner` in the duplicate-sorted relationship database `dbi`, in
    /// key order.
    func memberKeys(_ txn: OpaquePointer, _ dbi: MDB_dbi, of owner: Int64, into keys: inout [Int64]) throws {
        var cursor: OpaquePointer?
        try Self.check(mdb_cursor_open(txn, dbi, &cursor), "cursor")
        defer { mdb_cursor_close(cursor) }
        Self.memberKeys(cursor, of: owner, into: &keys)
    }

    /// ``memberKeys(_:_:of:into:)`` with a cursor already open on the database, which can
    /// serve many owners in turn.
    static func memberKeys(_ cursor: OpaquePointer?, of owner: Int64, into keys: inout [Int64]) {
        withKey(owner) { key in
            var data = MDB_val()
            var op = MDB_SET_KEY
            while mdb_cursor_get(cursor, &key, &data, op) == MDB_SUCCESS {
                keys.append(Self.pk(data.mv_data))
                op = MDB_NEXT_DUP
            }
        }
    }

    /// Calls `body` with every row of `dbi`, in key order.
    func scan(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ body: (Int64, MDB_val) throws -> Void) throws {
        var cursor: OpaquePointer?
        try Self.check(mdb_cursor_open(txn, dbi, &cursor), "cursor")
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val(), data = MDB_val()
        var op = MDB_FIRST
        while mdb_cursor_get(cursor, &key, &data, op) == MDB_SUCCESS {
            try body(Self.pk(key.mv_data), data)
            op = MDB_NEXT
        }
    }
}
