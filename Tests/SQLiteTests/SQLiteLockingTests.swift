import Dispatch
import Foundation
import ObjectGraph
@testable import ObjectGraphSQLite
import Testing

/// How the store shares its file with other connections (other processes): the journal mode
/// and connection settings it opens with, waiting for another writer's lock instead of failing,
/// and reading beside another writer's open transaction.
@Suite("SQLite locking and journal")
struct SQLiteLockingTests {
    /// A new store holding the tags `t0`, `t1`, `t2`, and a container on it.
    static func seeded() throws -> (url: URL, container: PersistentContainer) {
        let url = try SQLiteStoreTests.temporaryFile()
        let container = try PersistentContainer(model: try SQLiteStoreTests.model(), stores: [.sqlite(at: url)])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for index in 0..<3 {
                try context.insertObject(entityName: "Tag").setValue("t\(index)", forKey: "label")
            }
            try context.save()
        }
        return (url, container)
    }

    /// The labels of every tag, read from the rows (not faults) of a fetch in a new context.
    static func labels(in container: PersistentContainer) throws -> [String] {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Tag", sortKeys: [SortKey("label")])
            request.returnsObjectsAsFaults = false
            return try context.fetch(request).map { try $0.value(forKey: "label") as? String ?? "(nil)" }
        }
    }

    @Test("the file is in WAL mode, so that reads and the one write proceed side by side")
    func fileIsInWALMode() throws {
        let (url, container) = try Self.seeded()
        defer { container.close() }
        // The journal mode is the file's, read here through a connection of the test's own.
        #expect(SQLiteStoreTests.strings(url, "PRAGMA journal_mode") == ["wal"])
    }

    @Test("without the synchronous option every connection runs synchronous=NORMAL (WAL's durable-enough default)")
    func synchronousDefaultsToNormal() throws {
        // (SQLiteConnectionPoolTests checks both values when the option names them.)
        let (container, store) = try SQLiteConnectionPoolTests.open()
        defer { container.close() }
        let first = try store.takeConnection()
        let second = try store.takeConnection()
        defer {
            store.returnConnection(first)
            store.returnConnection(second)
        }
        for connection in [first, second] {
            let pragma = try connection.prepare("PRAGMA synchronous")
            #expect(try pragma.step())
            #expect(pragma.int64(0) == 1, "1 is NORMAL (2 would be FULL, SQLite's own default)")
        }
    }

    // Another process holding the write lock briefly is normal life for a shared file: without
    // the busy timeout the save failed at once with "database is locked".
    @Test("a save while another connection holds the write lock waits for it, then succeeds")
    func saveWaitsForAnotherWriter() throws {
        let (url, container) = try Self.seeded()
        defer { container.close() }
        let other = try RawConnection(url)
        try other.execute("BEGIN IMMEDIATE; CREATE TABLE held (x); INSERT INTO held VALUES (1);")
        // Released from another thread while the save below waits; the only assertions are on
        // the save's outcome and the data, none on how long anything took.
        let released = DispatchGroup()
        let releaseError = Guarded<(any Error)?>(nil)
        DispatchQueue.global().async(group: released) {
            usleep(300_000)
            do { try other.execute("COMMIT;") } catch { releaseError.withLock { $0 = error } }
        }
        defer { released.wait() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            try context.insertObject(entityName: "Tag").setValue("t3", forKey: "label")
            try context.save()
        }
        released.wait()
        #expect(releaseError.withLock { $0 } == nil)
        #expect(try Self.labels(in: container) == ["t0", "t1", "t2", "t3"])
        #expect(SQLiteStoreTests.strings(url, "SELECT x FROM held") == ["1"], "the other writer's transaction committed too")
    }

    // An exclusive transaction with uncommitted changes is what a writer in the middle of its
    // commit looks like to readers. In WAL mode readers never wait for it; in a rollback
    // journal they would (here for the whole busy timeout, then failing with a busy error).
    @Test("a fetch while another connection's write transaction is open returns the last committed state, without waiting")
    func readDoesNotWaitForAnOpenWrite() throws {
        let (url, container) = try Self.seeded()
        defer { container.close() }
        // A second container on the file: its coordinator has cached no rows, so its fetches
        // read the file.
        let reading = try PersistentContainer(model: try SQLiteStoreTests.model(), stores: [.sqlite(at: url)])
        defer { reading.close() }
        let writer = try RawConnection(url)
        try writer.execute("""
            BEGIN EXCLUSIVE;
            UPDATE "Tag" SET "a:Tag.label" = 'uncommitted';
            DELETE FROM "Tag" WHERE pk = (SELECT MIN(pk) FROM "Tag");
            """)
        // On this thread, the writer's transaction still open: a read that waited for it
        // could only end by failing.
        let labels = try Self.labels(in: reading)
        let count = try reading.viewContext.performAndWait {
            try reading.viewContext.count(for: FetchRequest<ManagedObject>(entityName: "Tag", predicate: .key("label") == "uncommitted"))
        }
        try writer.execute("ROLLBACK;")
        #expect(labels == ["t0", "t1", "t2"], "the committed rows, none of the open transaction's changes")
        #expect(count == 0)
    }
}
