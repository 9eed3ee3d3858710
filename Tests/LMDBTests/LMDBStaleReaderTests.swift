import CLMDB
import Foundation
import ObjectGraph
@testable import ObjectGraphLMDB
import Testing

/// Reader slots left in the lock file by a process that died with read transactions open.
/// LMDB frees a slot only when its transaction ends, so a dead process's slots stay taken
/// until someone runs `mdb_reader_check`. The store does when it opens the environment, and
/// again when a read finds the table full, so slots of a process that died while the store
/// was open do not fail every read once they fill the table.
@Suite("LMDB stale readers")
struct LMDBStaleReaderTests {
    /// The file of the test `name` (each test its own: they run in parallel).
    static func file(_ name: String, processID: Int32) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("og-\(name)-\(processID).lmdb")
    }

    /// Empties the test's file, and returns what removes it again.
    static func removingFiles(_ url: URL) -> () -> Void {
        let removeFiles = { for suffix in ["", "-lock"] { try? FileManager.default.removeItem(atPath: url.path + suffix) } }
        removeFiles()
        return removeFiles
    }

    /// The parent's environment, opened with raw LMDB in the child process (which exits 3 if
    /// it cannot open it).
    static func openParentEnvironment(_ name: String) -> OpaquePointer {
        var env: OpaquePointer?
        mdb_env_create(&env)
        mdb_env_set_maxdbs(env, 64)
        guard let env, mdb_env_open(env, file(name, processID: getppid()).path, UInt32(MDB_NOSUBDIR | MDB_NOTLS), 0o644) == MDB_SUCCESS else { exit(3) }
        return env
    }

    /// The reader lines `mdb_reader_list` prints for `env` (none: "(no active readers)").
    static func readerLines(_ env: OpaquePointer) -> [String] {
        final class Lines { var text = "" }
        let lines = Lines()
        mdb_reader_list(env, { message, context in
            guard let message, let context else { return 0 }
            Unmanaged<Lines>.fromOpaque(context).takeUnretainedValue().text += String(cString: message)
            return 0
        }, Unmanaged.passUnretained(lines).toOpaque())
        return lines.text.split(separator: "\n").map(String.init).filter { !$0.contains("pid") }
    }

    /// The reader lines of the environment at `url`, which no store of this process has open.
    static func readerLines(_ url: URL) throws -> [String] {
        try LMDBFixture.withRawEnvironment(url) { env, _ in readerLines(env) }
    }

    @Test("a dead process's reader slot is freed when the store opens")
    func staleReaderCleared() async throws {
        let url = Self.file("stale-reader", processID: getpid())
        let removeFiles = Self.removingFiles(url)
        defer { removeFiles() }
        try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)]).close()
        await #expect(processExitsWith: .success) {
            let env = LMDBStaleReaderTests.openParentEnvironment("stale-reader")
            var txn: OpaquePointer?
            guard mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn) == MDB_SUCCESS else { exit(4) }
            exit(0)  // dies holding its reader slot
        }
        #expect(try Self.readerLines(url).count == 1, "the dead process's slot is still in the table")
        try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)]).close()
        #expect(try Self.readerLines(url) == ["(no active readers)"])
    }

    /// A store on the test `name`'s emptied file, and what closes it and removes the file.
    static func openStore(_ name: String) throws -> (container: PersistentContainer, store: LMDBStore, close: () -> Void) {
        let removeFiles = removingFiles(file(name, processID: getpid()))
        let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: file(name, processID: getpid()))])
        let store = try #require(container.coordinator.persistentStores.first as? LMDBStore)
        return (container, store, { container.close(); removeFiles() })
    }

    /// Begins read transactions on `env` until the reader table is full, and never ends them;
    /// false when it took no slot or failed otherwise.
    static func takeEveryReaderSlot(_ env: OpaquePointer) -> Bool {
        var taken = 0
        while true {
            var txn: OpaquePointer?
            let rc = mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn)
            if rc == MDB_READERS_FULL { return taken > 0 }
            guard rc == MDB_SUCCESS else { return false }
            taken += 1
        }
    }

    /// Begins `depth` read transactions of `environment`, each inside the previous one, and
    /// returns how many were open at once. (Nested reads take the map lock shared again,
    /// which only a waiting map resize could block: this suite's store grows no map.)
    static func nestedReads(_ environment: LMDBEnvironment, depth: Int) throws -> Int {
        guard depth > 0 else { return 0 }
        return try environment.read { _ in try nestedReads(environment, depth: depth - 1) + 1 }
    }

    @Test("reads succeed after a process that died while the store was open left every reader slot taken")
    func fullTableOfDeadReaders() async throws {
        let (container, store, closeStore) = try Self.openStore("dead-readers")
        defer { closeStore() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            try context.insertObject(entityName: "Doc").setValue("kept", forKey: "title")
            try context.save()
        }

        await #expect(processExitsWith: .success) {
            let env = LMDBStaleReaderTests.openParentEnvironment("dead-readers")
            // Dies holding every slot it took: `_exit` ends no transaction and closes nothing.
            _exit(LMDBStaleReaderTests.takeEveryReaderSlot(env) ? 0 : 4)
        }

        // More reads open at once than the store keeps transactions for (one parked, eight
        // idle), so some begin a new transaction, which needs a free slot: only the dead
        // process's are left. They failed with a full reader table until the store reopened.
        #expect(try Self.nestedReads(store.environment, depth: 12) == 12)
        let count = try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Doc")) }
        #expect(count == 1)
        let slots = Self.readerLines(store.environment.env).count
        #expect(slots <= 12, "only this process's slots are left, not the dead process's: \(slots)")
    }

    /// The FIFO of the test's signal `name` (see ``ProcessSignal``).
    static func signal(_ name: String, processID: Int32) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("og-\(name)-\(processID).fifo").path
    }

    @Test("a reader table that live readers fill is a busy error naming its size, until they end")
    func fullTableOfLiveReaders() async throws {
        let (_, store, closeStore) = try Self.openStore("live-readers")
        defer { closeStore() }
        let full = try ProcessSignal(listeningAt: Self.signal("live-readers-full", processID: getpid()))
        defer { unlink(Self.signal("live-readers-done", processID: getpid())) }

        let child = ChildProcess {
            await #expect(processExitsWith: .success) {
                let parent = getppid()
                let done = try ProcessSignal(listeningAt: LMDBStaleReaderTests.signal("live-readers-done", processID: parent))
                let env = LMDBStaleReaderTests.openParentEnvironment("live-readers")
                guard LMDBStaleReaderTests.takeEveryReaderSlot(env),
                      ProcessSignal.send(to: LMDBStaleReaderTests.signal("live-readers-full", processID: parent)) else { exit(4) }
                // Alive, holding every slot, until the parent has tried to read.
                _exit(done.waitWhileParentLives(parent) ? 0 : 5)
            }
        }
        try #require(await full.received(before: child), "the child took every free slot")
        let error = #expect(throws: StoreError.self) { try Self.nestedReads(store.environment, depth: 12) }
        var slots: UInt32 = 0
        mdb_env_get_maxreaders(store.environment.env, &slots)
        #expect(error?.code == .busy)
        #expect(error?.message.contains("the reader table is full, all \(slots) slots") == true, "\(String(describing: error))")
        #expect(ProcessSignal.send(to: Self.signal("live-readers-done", processID: getpid())))
        await child.finish()
        // The child is dead now, and its slots are cleared when the next read finds the table full.
        #expect(try Self.nestedReads(store.environment, depth: 12) == 12)
    }
}
