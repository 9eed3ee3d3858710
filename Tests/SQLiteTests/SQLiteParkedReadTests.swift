import CSQLite
import Foundation
import ObjectGraph
@testable import ObjectGraphSQLite
import Testing

/// A read leaves its transaction open on its connection for the next read, which keeps it
/// only while no transaction of any connection or process has committed since (the WAL-index
/// header is unchanged); the store ends it before it writes and shortly after reads stop.
@Suite("SQLite parked reads")
struct SQLiteParkedReadTests {
    static func tagCount(_ context: ManagedObjectContext) throws -> Int {
        try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Tag")) }
    }

    static func insertTag(_ label: String, _ context: ManagedObjectContext) throws {
        try context.performAndWait {
            try context.insertObject(entityName: "Tag").setValue(label, forKey: "label")
            try context.save()
        }
    }

    /// Whether one of the store's idle connections has a read transaction open, by SQLite's
    /// own account (`sqlite3_txn_state`), and the store's.
    static func parkedReads(_ store: SQLiteStore) -> (sqlite: Int, store: Int) {
        store.withIdleConnections { connections in
            let open = connections.filter { $0.handle.map { sqlite3_txn_state($0, "main") == SQLITE_TXN_READ } ?? false }.count
            return (open, connections.filter(\.hasParkedRead).count)
        }
    }

    @Test("reads keep one transaction while nothing commits, and every save of any store is seen")
    func parkedReadFollowsCommits() throws {
        let url = try SQLiteStoreTests.temporaryFile()
        let container = try PersistentContainer(model: try SQLiteStoreTests.model(), stores: [.sqlite(at: url)])
        defer { container.close() }
        let store = try #require(container.coordinator.persistentStores.first as? SQLiteStore)
        let reader = container.newBackgroundContext()
        try Self.insertTag("first", container.newBackgroundContext())
        #expect(try Self.tagCount(reader) == 1)
        let afterRead = Self.parkedReads(store)
        #expect(afterRead.sqlite == 1 && afterRead.store == 1, "the read left its transaction open: \(afterRead)")
        // A save through this store ends the parked transaction before it writes.
        try Self.insertTag("second", container.newBackgroundContext())
        #expect(Self.parkedReads(store).sqlite == 0)
        #expect(try Self.tagCount(reader) == 2)
        // Another store on the file (its own connections, as another process would have)
        // commits while this store's read is parked: the next read sees it all the same.
        #expect(Self.parkedReads(store).store == 1)
        let second = try PersistentContainer(model: try SQLiteStoreTests.model(), stores: [.sqlite(at: url)])
        try Self.insertTag("third", second.newBackgroundContext())
        second.close()
        #expect(try Self.tagCount(reader) == 3)
    }

    @Test("a connection handed back inside a transaction the store did not open still reads, and still writes")
    func strayTransactionIsEnded() throws {
        let (container, store) = try SQLiteConnectionPoolTests.open()
        defer { container.close() }
        try Self.insertTag("first", container.newBackgroundContext())
        // A transaction the store knows nothing of, left open on the pool's next connection.
        let connection = try store.takeConnection()
        try connection.execute("BEGIN; SELECT COUNT(*) FROM sqlite_master;")
        #expect(connection.handle.map { sqlite3_get_autocommit($0) } == 0)
        store.returnConnection(connection)
        #expect(try Self.tagCount(container.newBackgroundContext()) == 1)
        try Self.insertTag("second", container.newBackgroundContext())
        #expect(try Self.tagCount(container.newBackgroundContext()) == 2)
    }

    @Test("parked read transactions end soon after the last read")
    func parkedReadsEnd() async throws {
        let (container, store) = try SQLiteConnectionPoolTests.open()
        defer { container.close() }
        try Self.insertTag("only", container.newBackgroundContext())
        #expect(try Self.tagCount(container.newBackgroundContext()) == 1)
        // Ended after about SQLiteStore.parkedReadLifetime (50 ms); waited for up to 20 s so
        // that only an end that never comes fails, not a slow machine.
        var open = Self.parkedReads(store)
        for _ in 0..<400 where open.sqlite > 0 || open.store > 0 {
            try await Task.sleep(for: .milliseconds(50))
            open = Self.parkedReads(store)
        }
        #expect(open.sqlite == 0 && open.store == 0, "no read transaction is left open once reads stop: \(open)")
    }
}
