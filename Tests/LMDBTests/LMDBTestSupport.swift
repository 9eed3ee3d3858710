import CLMDB
import Foundation
import ObjectGraph
import ObjectGraphLMDB
import Synchronization

/// Models, files and raw-LMDB helpers shared by the LMDB store's tests.
enum LMDBFixture {
    static func model(extraAttribute: Bool = false) throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Doc") { e in
                e.attribute("title", .string)
                e.attribute("rank", .double, optional: true, indexed: true)
                if extraAttribute { e.attribute("extra", .integer32, optional: true) }
                e.toMany("labels", "Label")
                e.toMany("replies", "Reply", inverse: "doc", deleteRule: .cascade)
            }
            m.entity("Label") { e in e.attribute("name", .string) }
            m.entity("Reply") { e in
                e.attribute("content", .string)
                e.toOne("doc", "Doc", inverse: "replies")
            }
        }
    }

    /// Inserts a `Reply` with `content` into `doc`'s replies.
    @discardableResult
    static func insertReply(_ content: String, to doc: ManagedObject, in context: ManagedObjectContext) throws -> ManagedObject {
        let reply = try context.insertObject(entityName: "Reply")
        try reply.setValue(content, forKey: "content")
        try reply.setValue(doc, forKey: "doc")
        return reply
    }

    static func temporaryFile() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("og-lmdb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        folders.withLock { $0.append(directory) }
        return directory.appendingPathComponent("store.lmdb")
    }

    /// The folders ``temporaryFile()`` made, removed when the test process exits (tests keep
    /// their stores open to the end, so none can remove its own earlier).
    private static let folders: Mutex<[URL]> = {
        atexit { for folder in LMDBFixture.folders.withLock({ $0 }) { try? FileManager.default.removeItem(at: folder) } }
        return Mutex([])
    }()

    /// Runs `body` with a raw environment on `url` (no ObjectGraph store may have it open).
    static func withRawEnvironment<T>(_ url: URL, _ body: (OpaquePointer, OpaquePointer) throws -> T) throws -> T {
        var env: OpaquePointer?
        mdb_env_create(&env)
        defer { mdb_env_close(env) }
        mdb_env_set_maxdbs(env, 64)
        guard mdb_env_open(env, url.path, UInt32(MDB_NOSUBDIR), 0o644) == MDB_SUCCESS else { throw CocoaError(.fileReadCorruptFile) }
        var txn: OpaquePointer?
        mdb_txn_begin(env, nil, 0, &txn)
        do {
            let result = try body(env!, txn!)
            mdb_txn_commit(txn)
            return result
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
    }

    /// `mdb_put`'s status for `key` and `value` in `dbi`, inside the raw transaction `txn`.
    static func rawPut(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ key: [UInt8], _ value: [UInt8]) -> Int32 {
        var key = key, value = value
        return key.withUnsafeMutableBytes { keyBytes in
            value.withUnsafeMutableBytes { valueBytes in
                var k = MDB_val(mv_size: keyBytes.count, mv_data: keyBytes.baseAddress)
                var v = MDB_val(mv_size: valueBytes.count, mv_data: valueBytes.baseAddress)
                return mdb_put(txn, dbi, &k, &v, 0)
            }
        }
    }

    /// In an exit test's child: opens a store of `model` at `url` and exits 0 when that throws
    /// a `StoreError` that `expected` accepts; 2 when it opens, 1 for any other error (written
    /// to standard error).
    static func exitOpening(_ url: URL, model: ManagedObjectModel, expected: (StoreError) -> Bool) -> Never {
        do {
            _ = try PersistentContainer(model: model, stores: [.lmdb(at: url)])
            exit(2)
        } catch let error as StoreError where expected(error) {
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(1)
        }
    }

    /// The names in the environment's main database: its named databases.
    static func databaseNames(_ url: URL) throws -> [String] {
        try withRawEnvironment(url) { _, txn in
            var dbi: MDB_dbi = 0
            mdb_dbi_open(txn, nil, 0, &dbi)
            var cursor: OpaquePointer?
            mdb_cursor_open(txn, dbi, &cursor)
            defer { mdb_cursor_close(cursor) }
            var key = MDB_val(), value = MDB_val()
            var names: [String] = []
            var op = MDB_FIRST
            while mdb_cursor_get(cursor, &key, &value, op) == MDB_SUCCESS {
                names.append(String(decoding: UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size), as: UTF8.self))
                op = MDB_NEXT
            }
            return names
        }
    }
}

func key(_ path: String) -> ObjectGraph.PredicateOperand { .keyPath(path) }

/// A one-byte signal between a test and its child process (an exit test), through a FIFO:
/// the listener makes the FIFO and keeps it open for reading, so that a sender never waits
/// for it to open, and waits for the byte — on an event, not by sleeping and looking again.
final class ProcessSignal: Sendable {
    struct Failure: Error { let call: String, errno: Int32 }

    let path: String
    private let fd: Int32

    /// Listens at `path` (a new FIFO there, replacing any file).
    init(listeningAt path: String) throws {
        unlink(path)
        guard mkfifo(path, 0o600) == 0 else { throw Failure(call: "mkfifo", errno: errno) }
        fd = open(path, O_RDONLY | O_NONBLOCK)
        guard fd >= 0 else { throw Failure(call: "open", errno: errno) }
        self.path = path
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// Waits for the byte, blocking the calling thread, for as long as `goOn()` holds (asked
    /// once a second); false when it stops holding first. No fixed limit: under
    /// ThreadSanitizer a child process was started five minutes after its test began (the
    /// concurrency pool was busy with other tests), and a five-minute wait failed a test that
    /// would have passed.
    func wait(while goOn: () -> Bool) -> Bool {
        var request = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        var byte: UInt8 = 0
        while true {
            if poll(&request, 1, 1_000) == 1 { return read(fd, &byte, 1) == 1 }
            if !goOn() { return false }
        }
    }

    /// In a child process: waits for the byte while the process that started it is alive.
    func waitWhileParentLives(_ parent: pid_t) -> Bool {
        wait { getppid() == parent }
    }

    /// In a test: waits, on a thread of its own, for the byte until `child` (the exit test
    /// that sends it) ends. Blocking a thread of the concurrency pool instead kept the pool (as
    /// many threads as cores) from starting the child that sends the byte, once as many tests
    /// waited as there are cores.
    func received(before child: ChildProcess) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: self.wait { !child.hasEnded }) }.start()
        }
    }

    /// Sends the byte to the listener at `path`; false when none listens there.
    static func send(to path: String) -> Bool {
        let fd = open(path, O_WRONLY | O_NONBLOCK)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var byte: UInt8 = 1
        return write(fd, &byte, 1) == 1
    }
}

/// An exit test run as a task of its own, which says when it has ended, so that a test waiting
/// for a signal from the child stops waiting when the child is gone without sending it.
final class ChildProcess: Sendable {
    private let ended = Guarded(false)
    private let task: Task<Void, Never>

    /// Runs `body` (an `await #expect(processExitsWith:)`) now.
    init(_ body: @escaping @Sendable () async -> Void) {
        let ended = self.ended
        task = Task {
            await body()
            ended.withLock { $0 = true }
        }
    }

    /// Whether the exit test has ended (its child process exited, or never started).
    var hasEnded: Bool { ended.withLock { $0 } }

    /// Waits for the exit test to end.
    func finish() async { await task.value }
}
