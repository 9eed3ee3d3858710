import Foundation
import ObjectGraph

/// An exclusive lock on a store file, held from open to close: an advisory `flock` on a lock
/// file beside it (`store.bin.lock`), so two processes — or two coordinators in one process —
/// never write the same store.
///
/// The lock file, not the store file, is locked because each save replaces the store file by a
/// rename: a lock on the old file's inode would not stop an opener of the new one. The kernel
/// drops the lock when its holder dies, so a crashed process never leaves the store locked;
/// the lock file records the holder's process ID for the busy error's message. Closing deletes
/// the lock file while still holding it; an opener that locked a file deleted under it sees
/// the path no longer names its inode and tries again.
///
/// **Threading contract.** `release()` may be called from any thread, any number of times.
final class StoreFileLock: Sendable {
    let path: String
    private let descriptor: Guarded<Int32?>

    /// Takes the lock for the store at `storePath`, or throws `busy` if another holds it.
    init(storePath: String) throws {
        let path = storePath + ".lock"
        self.path = path
        for _ in 0..<64 {
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                throw StoreError(.io, "cannot open the lock file \(path): \(String(cString: strerror(errno)))", underlying: POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO))
            }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                let failure = errno
                let holder = Self.holder(fd)
                close(fd)
                if failure == EWOULDBLOCK {
                    throw StoreError(.busy, "the binary store at \(storePath) is open elsewhere\(holder.map { " (by process \($0))" } ?? "") — its lock file \(path) is held; close it there first")
                }
                throw StoreError(.io, "cannot lock \(path): \(String(cString: strerror(failure)))", underlying: POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO))
            }
            var held = stat()
            var named = stat()
            if fstat(fd, &held) == 0, stat(path, &named) == 0, held.st_ino == named.st_ino, held.st_dev == named.st_dev {
                let pid = Array("\(getpid())\n".utf8)
                _ = ftruncate(fd, 0)
                _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
                descriptor = Guarded(fd)
                return
            }
            close(fd)  // the holder deleted this lock file as we locked it: take the new one
        }
        throw StoreError(.busy, "could not lock \(path): it keeps being replaced")
    }

    /// The process ID written by the lock's holder, if it can be read.
    private static func holder(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Deletes the lock file and releases the lock.
    func release() {
        descriptor.withLock { fd in
            guard let open = fd else { return }
            unlink(path)
            close(open)
            fd = nil
        }
    }

    deinit { release() }
}
