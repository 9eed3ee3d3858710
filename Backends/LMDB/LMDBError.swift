import CLMDB
import Foundation
import ObjectGraph

/// A return code and message from liblmdb, kept as the underlying error of the
/// ``ObjectGraph/StoreError`` the store throws.
public struct LMDBError: Error, Sendable, CustomStringConvertible {
    /// The LMDB return code (`MDB_MAP_FULL`, `MDB_CORRUPTED`, or an `errno` value).
    public let code: Int32
    /// `mdb_strerror`'s text for the code.
    public let message: String

    /// Wraps `code`, reading its text from liblmdb.
    public init(code: Int32) {
        self.code = code
        self.message = String(cString: mdb_strerror(code))
    }

    /// "lmdb error N: message".
    public var description: String { "lmdb error \(code): \(message)" }

    /// The ObjectGraph code for this failure. Damaged or foreign files are `corrupt`, a full
    /// disk or a failed system call is `io` (as is `MDB_PANIC`), a lock held elsewhere is `busy`
    /// (`EACCES`, `EAGAIN`, `EBUSY`, and a full reader or thread-slot table; opening a store
    /// whose files the process may not use, also `EACCES`, is told apart at open, see
    /// `LMDBEnvironment`), a duplicate key is `constraintViolation`; the other `MDB_*` codes
    /// (too many databases, bad transaction, a changed database handle…) and negative codes
    /// LMDB does not define are backend failures.
    public var storeCode: StoreError.Code {
        switch code {
        case MDB_INVALID, MDB_CORRUPTED, MDB_PAGE_NOTFOUND, MDB_VERSION_MISMATCH, MDB_INCOMPATIBLE:
            return .corrupt
        case MDB_PANIC:
            return .io
        case MDB_READERS_FULL, MDB_TLS_FULL:
            return .busy
        case MDB_KEYEXIST:
            return .constraintViolation
        // MDB_BAD_DBI says a database handle no longer names the database it was opened for
        // (closed or reopened since the transaction began, or kept from a transaction that
        // aborted): a fault in the handles the store keeps, not damage in the file, so not
        // `corrupt` (which tells the caller the file is bad). Nor `closed`: the store closes
        // its environment only after refusing new transactions with `closed` itself
        // (`LMDBEnvironment`), so a store that answers this is still open.
        case MDB_NOTFOUND, MDB_MAP_FULL, MDB_MAP_RESIZED, MDB_DBS_FULL, MDB_TXN_FULL, MDB_CURSOR_FULL,
             MDB_PAGE_FULL, MDB_BAD_RSLOT, MDB_BAD_TXN, MDB_BAD_VALSIZE, MDB_BAD_DBI:
            return .backend
        default:
            // Positive codes are errno values from the system calls under LMDB.
            if code == EACCES || code == EAGAIN || code == EBUSY { return .busy }
            return code > 0 ? .io : .backend
        }
    }

    /// The ObjectGraph error for this failure, saying what was being done where.
    func storeError(_ context: String) -> StoreError {
        StoreError(storeCode, "\(context): \(message) (MDB code \(code))", underlying: self)
    }
}

/// Throws the ObjectGraph error for a failed LMDB call; `MDB_SUCCESS` passes.
@inline(__always)
func check(_ code: Int32, _ context: @autoclosure () -> String) throws {
    if code != MDB_SUCCESS { throw LMDBError(code: code).storeError(context()) }
}
