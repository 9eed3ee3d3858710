import CLMDB
import Foundation
import ObjectGraph
import Synchronization

/// One open LMDB environment (a data file plus its `-lock` file), shared by every store of the
/// process that opens the same path — LMDB forbids opening one environment twice in a
/// process, because its POSIX locks would be released by the second close.
///
/// **Threading contract.** `Sendable`. Read transactions (`MDB_RDONLY`, with `MDB_NOTLS` so
/// they are not tied to a thread) run concurrently on any threads and see the last committed
/// save; write transactions are serialized in the process (LMDB also serializes them across
/// processes). The map grows by itself: a write that fills it is aborted, the map doubled
/// while no transaction of the process is active (a ``ReadWriteLock`` held exclusively), and
/// the write is run again; a size grown by another process is adopted the same way.
final class LMDBEnvironment: @unchecked Sendable {
    let env: OpaquePointer
    let path: String
    private let mapLock = ReadWriteLock()
    /// Serializes this process's write transactions (an NSLock: the transaction's result is
    /// returned through it, which a `Mutex` would require to be `Sendable`).
    private let writer = NSLock()
    /// Reset read-only transactions, renewed instead of begun (cheaper, no allocation).
    private let idleReaders = Guarded<[TransactionHandle]>([])
    /// One more read-only transaction (its pointer's bits, 0 for none), taken and put back
    /// with one atomic exchange each: the common case, one read at a time, then takes no lock
    /// for it (a lock to take it and another to put it back were a twentieth of faulting
    /// objects one at a time on top of LMDB's own lookup, perf).
    ///
    /// It is put back *parked*, still holding its snapshot (``liveBit`` set), and the next
    /// read uses it as it is when no write has been committed since (by any process): the
    /// same snapshot a renewal would take, without renewing it and without LMDB looking up
    /// again, in its main database, each named database the read touches — a tenth of a
    /// count, measured. A parked snapshot keeps LMDB from reusing pages that later writes
    /// free, so it is let go (reset) when this process writes, and at most
    /// ``parkedSnapshotLifetime`` after the read that parked it.
    private let spareReader = Atomic<UInt>(0)
    /// Releases the parked snapshot soon after the last read (``releaseParkedSnapshot()``).
    private let releaseTimer = CoalescedDelay(LMDBEnvironment.parkedSnapshotLifetime)
    private var references = 0
    /// Set (with the map lock held exclusively) when the environment is closed: a read or write
    /// that passed its store's open check just before the close then finds it after taking the
    /// map lock, and throws, instead of beginning a transaction on the freed environment (a
    /// fetch racing `PersistentContainer.close()` crashed in `mdb_txn_begin`). Read and
    /// written only with the map lock held.
    private var isClosed = false

    private static let registry = Guarded<[String: LMDBEnvironment]>([:])

    /// The named databases an environment may have open (`mdb_env_set_maxdbs`). Fixed rather
    /// than sized to the model: the environment is shared by every store of the process on
    /// its path, so the first opener's model would decide for the others. A model needing
    /// more is refused by ``LMDBStore/checkLimits(_:indexEverything:url:)``.
    static let maxDatabases = 4096

    /// The largest key (a database name is a key of the main database) the linked LMDB
    /// accepts: `mdb_env_get_maxkeysize` on an environment that is never opened, so asking
    /// makes no file. It is a compile-time constant of the library (511 by default); a build
    /// that sizes it at open (`MDB_DEVEL`) answers 0 before, and then gets the default.
    static let maxKeySize: Int = {
        var env: OpaquePointer?
        guard mdb_env_create(&env) == MDB_SUCCESS, let env else { return 511 }
        defer { mdb_env_close(env) }
        let size = Int(mdb_env_get_maxkeysize(env))
        return size > 0 ? size : 511
    }()

    /// The environment at `path`, opened (creating the files) if this process has not yet.
    static func open(path: String, options: [String: String]) throws -> LMDBEnvironment {
        try registry.withLock { open in
            if let existing = open[path] {
                existing.references += 1
                return existing
            }
            let environment = try LMDBEnvironment(path: path, options: options)
            environment.references = 1
            open[path] = environment
            return environment
        }
    }

    /// Drops one reference; the last closes the environment.
    func release() {
        Self.registry.withLock { open in
            references -= 1
            guard references == 0 else { return }
            open.removeValue(forKey: path)
            // Exclusively, so a read still running on another thread finishes first.
            mapLock.exclusive {
                let idle = idleReaders.withLock { readers -> [TransactionHandle] in
                    defer { readers.removeAll() }
                    return readers
                }
                for handle in idle { mdb_txn_abort(handle.txn) }
                if let spare = OpaquePointer(bitPattern: spareReader.exchange(0, ordering: .acquiring) & ~Self.liveBit) { mdb_txn_abort(spare) }
                isClosed = true
                mdb_env_close(env)
            }
        }
    }

    private init(path: String, options: [String: String]) throws {
        var env: OpaquePointer?
        try check(mdb_env_create(&env), "creating an LMDB environment for \(path)")
        var flags = UInt32(MDB_NOSUBDIR | MDB_NOTLS)
        switch options["sync"]?.lowercased() {
        case "none": flags |= UInt32(MDB_NOSYNC)
        case "meta": flags |= UInt32(MDB_NOMETASYNC)
        default: break
        }
        let initialSize = options["initialMapSize"].flatMap(Int.init) ?? 64 << 20
        do {
            // Before LMDB writes its files: on a full disk, writing the lock file through its
            // map was a SIGBUS, and a data file cut short was refused by every later open.
            try LMDBFilePreparation.reserve(path: path)
            try check(mdb_env_set_maxdbs(env, MDB_dbi(Self.maxDatabases)), "configuring \(path)")
            try check(mdb_env_set_mapsize(env, initialSize), "configuring \(path)")
            try check(mdb_env_open(env, path, flags, 0o644), "opening \(path)")
            // Before any page is read: a page past the end of a truncated file is a SIGBUS.
            try LMDBFileExtent.verify(env!, path: path)
        } catch let error as StoreError {
            mdb_env_close(env)
            if case let lmdb as LMDBError = error.underlying, lmdb.code == MDB_INVALID || lmdb.code == MDB_VERSION_MISMATCH {
                throw StoreError(.corrupt, "\(path) is not an LMDB environment (\(lmdb.message))", underlying: lmdb)
            }
            // EACCES is what a lock held elsewhere can report (busy), and also what opening a
            // file the process may not read or write reports: that is no lock, and retrying it
            // as one would never end, so it is an I/O error naming the file.
            if case let lmdb as LMDBError = error.underlying, lmdb.code == EACCES, let denied = Self.deniedPath(path, flags: flags) {
                throw StoreError(.io, "opening \(path): permission denied for \(denied)", underlying: lmdb)
            }
            throw error
        }
        self.env = env!
        self.path = path
        // Reader slots of processes that died are freed now, not when the table fills up.
        var dead: Int32 = 0
        mdb_reader_check(env, &dead)
    }

    /// The file or folder of the environment at `path` this process may not use as opening
    /// it needs (read and write, or read only with `MDB_RDONLY`), if any.
    private static func deniedPath(_ path: String, flags: UInt32) -> String? {
        let files = flags & UInt32(MDB_NOSUBDIR) != 0 ? [path, path + "-lock"] : [path, path + "/data.mdb", path + "/lock.mdb"]
        let mode = flags & UInt32(MDB_RDONLY) != 0 ? R_OK : R_OK | W_OK
        for file in files where access(file, F_OK) == 0 && access(file, mode) != 0 { return file }
        let folder = flags & UInt32(MDB_NOSUBDIR) != 0 ? (path as NSString).deletingLastPathComponent : path
        if access(folder, F_OK) == 0 && access(folder, R_OK | W_OK | X_OK) != 0 { return folder }
        return nil
    }

    /// What a read or write of a closed environment throws.
    private func closedError() -> StoreError {
        StoreError(.closed, "the LMDB store at \(path) is closed")
    }

    /// The largest key LMDB accepts.
    var maxKeySize: Int { Int(mdb_env_get_maxkeysize(env)) }

    /// The current map size in bytes.
    var mapSize: Int {
        var info = MDB_envinfo()
        mdb_env_info(env, &info)
        return info.me_mapsize
    }

    /// The handle of the named database, opened (created when `create`) in `txn`. The handle
    /// serves other transactions only once `txn` commits, so callers keep it only then.
    func database(_ name: String, in txn: LMDBTransaction, create: Bool, duplicates: Bool) throws -> MDB_dbi? {
        var flags: UInt32 = create ? UInt32(MDB_CREATE) : 0
        if duplicates { flags |= UInt32(MDB_DUPSORT) }
        var dbi: MDB_dbi = 0
        let rc = mdb_dbi_open(txn.txn, name, flags, &dbi)
        if rc == MDB_NOTFOUND { return nil }
        if rc == MDB_INCOMPATIBLE {
            throw StoreError(.corrupt, "\(path): database \(name) exists with other flags; the file is not an ObjectGraph store of this layout", underlying: LMDBError(code: rc))
        }
        try check(rc, "opening database \(name) in \(path)")
        return dbi
    }

    // MARK: Transactions

    /// Runs `body` in a read-only snapshot transaction.
    ///
    /// Begun and ended around `body`, not inside closures of the locks: each closure level
    /// retained every value `body` captured once more (four retains and releases of each per
    /// read, perf). A map grown by another process is adopted before `body` runs, so `body`
    /// runs once.
    @inline(__always)
    func read<T>(_ body: (LMDBTransaction) throws -> T) throws -> T {
        let txn = try beginRead()
        defer { endRead(txn) }
        do {
            return try body(LMDBTransaction(txn: txn, environment: self))
        } catch is ByteReader.Truncated {
            throw damagedValue()
        }
    }

    /// The error for a key or value shorter than its encoding (or of an unknown tag or code)
    /// that no caller turned into a more precise one: a row key or a key counter not 8 bytes
    /// long, a member or index entry cut short. Without it the reader's own untyped error
    /// reached the caller, naming neither the file nor the problem.
    func damagedValue() -> StoreError {
        StoreError(.corrupt, "\(path) holds a damaged key or value (shorter than its encoding, or of an unknown kind)")
    }

    /// A renewed idle or new read-only transaction, with the map lock held shared; ended by
    /// ``endRead(_:)``.
    private func beginRead() throws -> OpaquePointer {
        var checkedReaders = false
        while true {
            mapLock.lockShared()
            if isClosed {
                mapLock.unlockShared()
                throw closedError()
            }
            let spare = spareReader.exchange(0, ordering: .acquiring)
            if spare & Self.liveBit != 0, let live = OpaquePointer(bitPattern: spare & ~Self.liveBit) {
                if mdb_txn_id(live) == lastCommittedTransaction() { return live }
                mdb_txn_reset(live)
            }
            var txn = OpaquePointer(bitPattern: spare & ~Self.liveBit)
                ?? idleReaders.withLock { $0.popLast() }?.txn
            var rc = MDB_SUCCESS
            if let idle = txn {
                rc = mdb_txn_renew(idle)
                if rc != MDB_SUCCESS { mdb_txn_abort(idle); txn = nil }
            }
            if txn == nil { rc = mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn) }
            if rc == MDB_SUCCESS, let txn { return txn }
            if rc == MDB_READERS_FULL {
                // Slots of a process that died while this one had the environment open stay
                // taken (the check at open came before), and once they fill the table every
                // read would fail until the store reopens: they are cleared now and the read
                // tried once more — even when this check clears none, since another thread's
                // may just have. With the map lock held, so that a close waits for it.
                defer { mapLock.unlockShared() }
                guard checkedReaders else {
                    mdb_reader_check(env, nil)
                    checkedReaders = true
                    continue
                }
                throw readerTableFull()
            }
            mapLock.unlockShared()
            guard rc == MDB_MAP_RESIZED else {
                throw LMDBError(code: rc).storeError("starting a read transaction on \(path)")
            }
            try adoptGrownMap()
        }
    }

    /// What a read throws when every slot of the reader table is held by a live transaction
    /// (of any process), after dead processes' slots were cleared: busy, since the slots free
    /// up as those reads end. (Write transactions take no slot, so only reads throw it.) Made
    /// with the map lock held: it reads the environment.
    private func readerTableFull() -> StoreError {
        var slots: UInt32 = 0
        mdb_env_get_maxreaders(env, &slots)
        let error = LMDBError(code: MDB_READERS_FULL)
        return StoreError(error.storeCode, "starting a read transaction on \(path): the reader table is full, all \(slots) slots held by open read transactions of live processes (MDB code \(error.code))", underlying: error)
    }

    /// Parks `txn` as the spare reader with its snapshot, or else resets it for reuse (or
    /// aborts it when enough are idle); releases the map lock.
    private func endRead(_ txn: OpaquePointer) {
        let bits = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(txn)))
        if spareReader.compareExchange(expected: 0, desired: bits | Self.liveBit, ordering: .releasing).exchanged {
            mapLock.unlockShared()
            scheduleRelease()
            return
        }
        mdb_txn_reset(txn)
        let kept = idleReaders.withLock { idle -> Bool in
            guard idle.count < 8 else { return false }
            idle.append(TransactionHandle(txn: txn))
            return true
        }
        if !kept { mdb_txn_abort(txn) }
        mapLock.unlockShared()
    }

    /// Marks the spare reader as parked with its snapshot (not reset). Transactions are
    /// allocated by malloc, so the low bit of their address is free.
    private static let liveBit: UInt = 1

    /// How long a parked snapshot outlives the read that parked it, at most: long enough for
    /// a loop of reads to share it, short enough that pinning pages costs another process's
    /// writes nothing noticeable (LMDB's warning is about readers held for minutes).
    static let parkedSnapshotLifetime = DispatchTimeInterval.milliseconds(50)

    /// The ID of the last committed write transaction, of any process (the newer meta page).
    private func lastCommittedTransaction() -> Int {
        var info = MDB_envinfo()
        mdb_env_info(env, &info)
        return info.me_last_txnid
    }

    /// Schedules the release of the parked snapshot, unless one is scheduled: one timer per
    /// ``parkedSnapshotLifetime`` of reading, not one per read.
    private func scheduleRelease() {
        releaseTimer.request(for: self) { environment in
            environment.mapLock.shared { environment.releaseParkedSnapshot() }
        }
    }

    /// Resets the spare reader if it is parked with its snapshot, so that it pins no pages.
    /// Called with the map lock held (shared or exclusive), so no map change runs meanwhile.
    private func releaseParkedSnapshot() {
        let spare = spareReader.exchange(0, ordering: .acquiring)
        guard spare != 0, let txn = OpaquePointer(bitPattern: spare & ~Self.liveBit) else { return }
        if spare & Self.liveBit != 0 { mdb_txn_reset(txn) }
        if !spareReader.compareExchange(expected: 0, desired: spare & ~Self.liveBit, ordering: .releasing).exchanged {
            mdb_txn_abort(txn)
        }
    }

    /// Runs `body` in a write transaction and commits it; on any error nothing is written.
    /// A full map is grown and `body` run again from the start, so it must not have effects
    /// outside the transaction that a second run would repeat wrongly.
    func write<T>(_ body: (LMDBTransaction) throws -> T) throws -> T {
        writer.lock()
        defer { writer.unlock() }
        do {
            while true {
                let result: Result<T, Retry> = try mapLock.shared {
                    if isClosed { throw closedError() }
                    // This write frees pages a parked snapshot would keep it from reusing.
                    releaseParkedSnapshot()
                    var txn: OpaquePointer?
                    let rc = mdb_txn_begin(env, nil, 0, &txn)
                    if rc == MDB_MAP_RESIZED { return .failure(.adopt) }
                    try check(rc, "starting a write transaction on \(path)")
                    let value: T
                    do {
                        value = try body(LMDBTransaction(txn: txn!, environment: self))
                    } catch let error as StoreError where (error.underlying as? LMDBError)?.code == MDB_MAP_FULL {
                        mdb_txn_abort(txn)
                        return .failure(.grow)
                    } catch is ByteReader.Truncated {
                        mdb_txn_abort(txn)
                        throw damagedValue()
                    } catch {
                        mdb_txn_abort(txn)
                        throw error
                    }
                    // A commit frees the transaction whether or not it succeeds.
                    let commit = mdb_txn_commit(txn)
                    if commit == MDB_MAP_FULL { return .failure(.grow) }
                    try check(commit, "committing a write transaction on \(path)")
                    return .success(value)
                }
                switch result {
                case .success(let value): return value
                case .failure(.grow): try growMap()
                case .failure(.adopt): try adoptGrownMap()
                }
            }
        }
    }

    /// Doubles the map while no transaction of this process is active.
    private func growMap() throws {
        try mapLock.exclusive {
            if isClosed { throw closedError() }
            releaseParkedSnapshot()
            try check(mdb_env_set_mapsize(env, mapSize * 2), "growing the map of \(path)")
        }
    }

    /// Takes on the map size another process set.
    private func adoptGrownMap() throws {
        try mapLock.exclusive {
            if isClosed { throw closedError() }
            releaseParkedSnapshot()
            try check(mdb_env_set_mapsize(env, 0), "adopting the grown map of \(path)")
        }
    }
}

/// A reset read-only transaction kept for renewal; used by one thread at a time.
private struct TransactionHandle: @unchecked Sendable {
    let txn: OpaquePointer
}

/// Why a write transaction must run again.
private enum Retry: Error { case grow, adopt }

extension LMDBTransaction {
    /// The number of entries (of key–value pairs, duplicates counted) in `dbi`, from its
    /// B-tree statistics: no entry is read.
    func entries(_ dbi: MDB_dbi) throws -> Int {
        var stat = MDB_stat()
        try check(mdb_stat(txn, dbi, &stat), "reading the statistics of \(environment.path)")
        return stat.ms_entries
    }

    /// The number of entries in the environment's main database, where LMDB keeps the names
    /// of named databases (so 0 means a new, empty environment).
    func mainDatabaseEntries() throws -> Int {
        var dbi: MDB_dbi = 0
        try check(mdb_dbi_open(txn, nil, 0, &dbi), "opening the main database of \(environment.path)")
        var stat = MDB_stat()
        try check(mdb_stat(txn, dbi, &stat), "reading the main database of \(environment.path)")
        return stat.ms_entries
    }
}
