import CLMDB
import Foundation
import ObjectGraph

/// Disk space for an environment's files, reserved before LMDB writes them, so that opening a
/// store on a full disk is an `io` error that leaves nothing behind a later open refuses.
///
/// Two things went wrong on a full disk before (an audit, opening stores on a full tmpfs):
///
/// - LMDB sizes a new lock file with `ftruncate` (a file of holes) and then writes its reader
///   table through a shared memory map. A write through the map with no block to land in is
///   a `SIGBUS`: the process died, and no error code could report it.
/// - LMDB creates a data file by writing its two meta pages in one `pwrite`. On a full disk
///   that write can stop after the first page, and the file then holds one meta page of an
///   environment that never committed anything: every later open refused it as "not an LMDB
///   environment" (`corrupt`), even once the disk had room again.
///
/// Both files' first blocks are therefore reserved with `fallocate` (keeping the size, so a
/// file another process is using is not changed): either the blocks are there when LMDB
/// writes, or the reservation fails before LMDB runs. A file system that cannot reserve (no
/// `fallocate`), or a file this process may not open, is left to `mdb_env_open`, which reports
/// what it finds.
enum LMDBFilePreparation {
    /// The bytes of the lock file reserved at least: the lock file of LMDB's default 126
    /// reader slots is 8 KiB (64-byte slots after a 128-byte header), so twice that leaves room.
    static let reservedLockBytes = 16 << 10

    /// The bytes LMDB writes when it creates a data file: its two meta pages, of the system's
    /// page size (which LMDB uses for a new environment).
    static var createdDataBytes: Int { 2 * max(Int(getpagesize()), 4096) }

    /// Reserves the first blocks of the lock file and, while it is shorter than two pages (new
    /// or empty), of the data file at `path` (`MDB_NOSUBDIR` naming: the lock file is `path`
    /// + `-lock`); creates them if missing, empty, as LMDB would.
    ///
    /// Called only while this process does not have the environment open: closing a
    /// descriptor of the lock file drops the `fcntl` locks LMDB holds on it.
    static func reserve(path: String) throws {
        try reserve(path + "-lock", bytes: reservedLockBytes, store: path, what: "its lock file")
        try reserve(path, bytes: createdDataBytes, onlyWhenShorter: true, store: path, what: "its data file's first pages")
    }

    private static func reserve(_ file: String, bytes: Int, onlyWhenShorter: Bool = false, store: String, what: String) throws {
        #if os(Linux)
        let fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { return }
        if onlyWhenShorter && Int(status.st_size) >= bytes { return }
        let length = max(Int(status.st_size), bytes)
        guard fallocate(fd, OBJECTGRAPH_FALLOC_FL_KEEP_SIZE, 0, off_t(length)) != 0 else { return }
        let code = errno
        guard code == ENOSPC || code == EDQUOT || code == EFBIG else { return }
        throw StoreError(
            .io, "opening \(store): no room on the disk for the \(length) bytes of \(what) \(file) (\(String(cString: strerror(code))))",
            underlying: LMDBError(code: code))
        #endif
    }
}
