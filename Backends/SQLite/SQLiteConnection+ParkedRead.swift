import CSQLite
import Synchronization

/// A read transaction kept open between reads, while nothing has been committed since.
///
/// Every read in autocommit mode begins and ends a read transaction: a lock on the WAL index
/// taken and released with `fcntl`, and an `fstat` of the database file. For a fault — one row
/// by key — that was two thirds of the store's time (perf, 2026-11-26). So a read leaves its
/// transaction open ("parked") with the WAL-index header it began at, and the next read on the
/// connection uses it as it is if the header is still the same: no transaction of any process
/// has committed since, so the parked snapshot is the one a new transaction would take.
///
/// The header is read as SQLite's own readers read it without a lock (`walIndexTryHdr`,
/// documented in the WAL-index format): writers store its second copy, then the first, so two
/// equal copies are a whole header, and unequal ones count as a change. It is recorded before
/// the transaction takes its snapshot, so a commit in between can only make the next read
/// begin anew, never keep an old snapshot. Without a WAL index (a connection not yet in WAL
/// mode), reads stay in autocommit mode.
///
/// A parked transaction keeps the WAL from being restarted, so the store ends it before it
/// writes and at most ``SQLiteStore/parkedReadLifetime`` after the read that parked it.
struct WALIndexHeader: Equatable, Sendable {
    /// The header's 48 bytes (`WalIndexHdr`: version, change counter, frame count, page
    /// count, salts and checksums).
    let words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)

    /// `iChange`, which every commit moves on by one.
    var changeCounter: UInt32 { UInt32(truncatingIfNeeded: words.1) }

    static func == (a: WALIndexHeader, b: WALIndexHeader) -> Bool {
        a.words.0 == b.words.0 && a.words.1 == b.words.1 && a.words.2 == b.words.2
            && a.words.3 == b.words.3 && a.words.4 == b.words.4 && a.words.5 == b.words.5
    }

    /// The header at `base` if its two copies agree and it is initialized; `nil` otherwise.
    static func read(at base: UnsafeRawPointer) -> WALIndexHeader? {
        func copy(_ offset: Int) -> WALIndexHeader {
            WALIndexHeader(words: (
                base.loadUnaligned(fromByteOffset: offset, as: UInt64.self),
                base.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self),
                base.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self),
                base.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self),
                base.loadUnaligned(fromByteOffset: offset + 32, as: UInt64.self),
                base.loadUnaligned(fromByteOffset: offset + 40, as: UInt64.self)))
        }
        let first = copy(0)
        atomicMemoryFence(ordering: .acquiring)
        let second = copy(48)
        // `isInit`, the byte after the change counter: 0 until the index is built.
        guard first == second, base.load(fromByteOffset: 12, as: UInt8.self) != 0 else { return nil }
        return first
    }
}

extension SQLiteConnection {
    /// Whether a read transaction is parked on this connection.
    var hasParkedRead: Bool { parkedSnapshot != nil }

    /// Readies the connection for a read: keeps its parked transaction if no commit happened
    /// since, else ends it and opens a new one (left to take its snapshot at the first read).
    func beginRead() throws {
        let now = currentWALIndexHeader()
        if let parked = parkedSnapshot {
            if let now, now == parked, !isInAutocommit { return }
            try endParkedRead()
        }
        guard let now else { return }
        // (A transaction left open by anything else would make BEGIN fail.)
        if !isInAutocommit { try? run("ROLLBACK;") }
        try run("BEGIN DEFERRED;")
        parkedSnapshot = now
    }

    /// Ends the parked read transaction, if any.
    func endParkedRead() throws {
        guard parkedSnapshot != nil else { return }
        parkedSnapshot = nil
        // SQLite may have ended the transaction itself (an error that rolls back).
        guard !isInAutocommit else { return }
        do {
            try run("COMMIT;")
        } catch {
            // Nothing was written in it: rolling back ends it just as well.
            try? run("ROLLBACK;")
            if !isInAutocommit { throw error }
        }
    }

    /// Whether no transaction is open on the connection.
    private var isInAutocommit: Bool { handle.map { sqlite3_get_autocommit($0) != 0 } ?? true }

    /// Runs one cached statement without results (`BEGIN`/`COMMIT`: `execute` parsed the text
    /// at every call).
    private func run(_ sql: String) throws {
        let statement = try prepare(sql)
        try statement.run()
        statement.rewind()
    }

    /// The WAL-index header now, through SQLite's own mapping of the index (the VFS's
    /// `xShmMap` on the database file, which maps nothing new once SQLite has): opening the
    /// `-shm` file again in this process would risk its locks, which POSIX drops at any close.
    func currentWALIndexHeader() -> WALIndexHeader? {
        if walIndex == nil {
            // Until SQLite has built the index there is nothing to map; asked again next read.
            walIndex = mapWALIndex()
        }
        return walIndex.flatMap(WALIndexHeader.read(at:))
    }

    private func mapWALIndex() -> UnsafeRawPointer? {
        guard let handle else { return nil }
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK,
              let file, let methods = file.pointee.pMethods, methods.pointee.iVersion >= 2,
              let map = methods.pointee.xShmMap else { return nil }
        var region: UnsafeMutableRawPointer?
        // Region 0 of the standard 32 KiB, not extended: nil until SQLite has built the index.
        guard map(file, 0, 32_768, 0, &region) == SQLITE_OK, let region else { return nil }
        return UnsafeRawPointer(region)
    }
}
