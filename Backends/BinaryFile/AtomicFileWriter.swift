import Foundation
import ObjectGraph

/// Replaces a file's contents so that at every instant its path names either the old complete
/// file or the new one: write a temporary file beside it, flush it to disk, rename it over the
/// old one, then flush the directory so the rename itself is on disk.
///
/// Temporary files are named `.NAME.PID.RANDOM.tmp`; one left by a crash is an incomplete
/// write that never replaced anything, and ``removeLeftovers()`` deletes it (only the lock's
/// holder calls that, so no live writer's file is taken).
struct AtomicFileWriter {
    let url: URL
    /// Whether to flush (`fsync`) the file and the directory. Without it a completed save still
    /// survives a crash of the process (the rename is atomic), but not a power loss.
    let synchronous: Bool

    private var directory: String { url.deletingLastPathComponent().path }
    private var temporaryPrefix: String { "." + url.lastPathComponent + "." }

    /// Replaces the file with the concatenation of `pieces`.
    func write(_ pieces: [[UInt8]]) throws {
        let temporary = directory + "/" + temporaryPrefix + "\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw failure("create \(temporary)") }
        var result: StoreError?
        for piece in pieces where result == nil {
            result = piece.withUnsafeBytes { buffer in
                var written = 0
                while written < buffer.count {
                    let count = Foundation.write(fd, buffer.baseAddress! + written, buffer.count - written)
                    if count < 0 {
                        if errno == EINTR { continue }
                        return failure("write \(temporary)")
                    }
                    written += count
                }
                return nil
            }
        }
        if result == nil && synchronous && fsync(fd) != 0 { result = failure("flush \(temporary)") }
        if close(fd) != 0, result == nil {
            let error = failure("close \(temporary)")
            unlink(temporary)
            throw error
        }
        if let result {
            unlink(temporary)
            throw result
        }
        guard rename(temporary, url.path) == 0 else {
            let error = failure("rename \(temporary) over \(url.path)")
            unlink(temporary)
            throw error
        }
        if synchronous {
            // The new file is in place; if flushing the directory fails, the save may not
            // survive a power loss, and the caller must hear so.
            let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard directoryFD >= 0 else { throw failure("open the directory \(directory)") }
            defer { close(directoryFD) }
            guard fsync(directoryFD) == 0 else { throw failure("flush the directory \(directory)") }
        }
    }

    /// The file's bytes, or nil when there is no file.
    static func contents(of url: URL) throws -> [UInt8]? {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            let code = errno
            throw StoreError(.io, "cannot open the binary store \(url.path): \(String(cString: strerror(code)))", underlying: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw StoreError(.io, "cannot read the size of \(url.path)") }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                if count == 0 { bytes.removeLast(bytes.count - filled); break }  // shrank while read
                let code = errno
                throw StoreError(.io, "cannot read \(url.path): \(String(cString: strerror(code)))", underlying: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
            }
            filled += count
        }
        return bytes
    }

    /// Deletes temporary files a crashed writer left beside the store.
    func removeLeftovers() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(temporaryPrefix) && name.hasSuffix(".tmp") {
            unlink(directory + "/" + name)
        }
    }

    /// A store error for a failed call, from `errno`.
    private func failure(_ action: String) -> StoreError {
        let code = errno
        return StoreError(.io, "cannot \(action): \(String(cString: strerror(code)))", underlying: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
    }
}
