import ObjectGraph

/// What this store knows of the commits to its file: the WAL-index header it last saw, and
/// how many times the header had moved by a commit not made through this store object.
struct CommitWatch: Sendable {
    /// The header last seen (at a read, or around this store's own commit).
    var known: WALIndexHeader?
    /// Commits by other connections noticed so far (see ``SQLiteStore/foreignCommitCount()``).
    var foreign: UInt64 = 0
}

/// Noticing other connections' commits: another process, or another store object on the same
/// file. The coordinator keeps rows in its row cache for faults, and a fetch that returns
/// object IDs reads no rows, so without this a context of this coordinator showed a row as it
/// was before another process's save — where LMDB, which has no row cache, showed the new one.
///
/// Every read already takes the WAL-index header (see `SQLiteConnection+ParkedRead`); a header
/// unlike the last one seen means a commit. The store's own commits move it too, so each save
/// records the header it leaves: taken right after `BEGIN IMMEDIATE` (any change before then
/// was another connection's) and right after `COMMIT` (a change counter more than one ahead
/// means another connection committed in between). Races between a read and a save on other
/// threads can only count a commit that was this store's own — the cache is dropped once
/// more than needed — never miss another's.
extension SQLiteStore {
    /// How many commits of other connections this store has noticed (see the extension's
    /// summary): counted at reads and at this store's own writes.
    public func foreignCommitCount() -> UInt64 {
        commitWatch.withLock { $0.foreign }
    }

    /// A header seen at the start of a read or a write.
    func noteObserved(_ header: WALIndexHeader?) {
        guard let header else { return }
        commitWatch.withLock { watch in
            if let known = watch.known, known != header { watch.foreign &+= 1 }
            watch.known = header
        }
    }

    /// `body` in a write transaction on `connection` (`BEGIN IMMEDIATE … COMMIT`, rolled back
    /// when it throws), with the headers around it noted: every write of the store goes
    /// through here, so that its own commits are never taken for another connection's.
    func inWriteTransaction<T>(_ connection: SQLiteConnection, _ body: () throws -> T) throws -> T {
        try connection.execute("BEGIN IMMEDIATE;")
        // With the write lock held, the header moves only by this transaction's commit.
        let before = connection.currentWALIndexHeader()
        noteObserved(before)
        do {
            let result = try body()
            try connection.execute("COMMIT;")
            noteCommitted(before: before, after: connection.currentWALIndexHeader())
            return result
        } catch {
            try? connection.execute("ROLLBACK;")
            throw error
        }
    }

    /// The headers around this store's own commit: one commit moves the change counter by
    /// one (a transaction that wrote nothing, by none); more means another connection
    /// committed between this `COMMIT` and the read of `after`.
    private func noteCommitted(before: WALIndexHeader?, after: WALIndexHeader?) {
        guard let after else { return }
        commitWatch.withLock { watch in
            if let before, after != before, after.changeCounter != before.changeCounter &+ 1 { watch.foreign &+= 1 }
            watch.known = after
        }
    }
}
