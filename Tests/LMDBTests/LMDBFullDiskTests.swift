import Foundation
import ObjectGraph
import ObjectGraphLMDB
import Testing

/// Opening a store on a full disk: a small tmpfs is mounted for the test (which needs root)
/// and filled but for a few kilobytes. The opening runs in a child process (a Swift Testing
/// exit test), since what failed was a `SIGBUS`: LMDB wrote its new lock file through a map
/// with no block on the disk to land in (the child died of it with no room at all). Once
/// that was an error, a data file cut short by the full disk (one meta page of two, with
/// 20 KiB of room) was refused as corrupt by every later open (the child exited 3).
@Suite("LMDB on a full disk", .enabled(if: SmallFileSystem.available, "mounting a small tmpfs needs root"))
struct LMDBFullDiskTests {
    @Test("opening a store on a disk with no room is an io error, never a crash, and once there is room it opens")
    func openOnFullDisk() async throws {
        let disk = try SmallFileSystem()
        defer { disk.unmount() }
        await #expect(processExitsWith: .success) { [folder = disk.path as String] in
            let url = URL(fileURLWithPath: folder).appendingPathComponent("store.lmdb")
            let filler = folder + "/filler"
            // Every few kilobytes of room, so that each write of opening (the lock file, the
            // two meta pages, the store's first commit) is the one that finds the disk full.
            for free in stride(from: 0, through: 64 << 10, by: 4 << 10) {
                SmallFileSystem.fill(filler, leaving: free)
                do {
                    let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
                    container.close()
                } catch let error as StoreError where error.code == .io {
                    // What a full disk may give.
                } catch {
                    LMDBFullDiskTests.fail(2, "with \(free) bytes of room, not an io error: \(error)")
                }
                unlink(filler)
                // With room again, the store opens and saves.
                do {
                    let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
                    let context = container.newBackgroundContext()
                    try context.performAndWait {
                        try context.insertObject(entityName: "Label").setValue("\(free)", forKey: "name")
                        try context.save()
                    }
                    container.close()
                } catch {
                    LMDBFullDiskTests.fail(3, "after an open with \(free) bytes of room, the store does not open with room again: \(error)")
                }
                for suffix in ["", "-lock"] { unlink(url.path + suffix) }
            }
        }
    }
}

extension LMDBFullDiskTests {
    /// Ends the child process with `code`, saying why on its standard error.
    static func fail(_ code: Int32, _ message: String) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(code)
    }
}

/// A tmpfs of 256 KiB mounted on a temporary folder for one test.
struct SmallFileSystem {
    let path: String

    /// Whether this process may mount one (it runs as root and the mount succeeds).
    static let available: Bool = {
        guard geteuid() == 0, let disk = try? SmallFileSystem() else { return false }
        disk.unmount()
        return true
    }()

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("og-small-fs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard mount("tmpfs", path, "tmpfs", 0, "size=256k") == 0 else {
            let code = errno
            rmdir(path)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EPERM)
        }
    }

    func unmount() {
        umount2(path, Int32(MNT_DETACH))
        rmdir(path)
    }

    /// Writes `file` until the disk is full, then gives back `bytes` of it.
    static func fill(_ file: String, leaving bytes: Int) {
        let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        let block = [UInt8](repeating: 0xA5, count: 4096)
        var written = 0
        while true {
            let count = write(fd, block, block.count)
            if count <= 0 { break }
            written += count
        }
        _ = ftruncate(fd, off_t(max(0, written - bytes)))
        close(fd)
    }
}
