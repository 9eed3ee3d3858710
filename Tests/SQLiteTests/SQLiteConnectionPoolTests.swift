import Dispatch
import Foundation
import ObjectGraph
@testable import ObjectGraphSQLite
import Testing

/// The store's connections: pooled, each one reading or writing (see ``SQLiteStore``).
@Suite("SQLite connection pool")
struct SQLiteConnectionPoolTests {
    static func open(options: [String: String] = [:]) throws -> (PersistentContainer, SQLiteStore) {
        let url = try SQLiteStoreTests.temporaryFile()
        let container = try PersistentContainer(model: try SQLiteStoreTests.model(), stores: [.sqlite(at: url, options: options)])
        let store = try #require(container.coordinator.persistentStores.first as? SQLiteStore)
        return (container, store)
    }

    @Test("without concurrency, a read and the save after it run on one connection (whose page cache holds what the read touched)")
    func readThenSaveShareAConnection() throws {
        let (container, store) = try Self.open()
        defer { container.close() }
        let read = try store.withReader { ObjectIdentifier($0) }
        let written = try store.withConnection { ObjectIdentifier($0) }
        let readAgain = try store.withReader { ObjectIdentifier($0) }
        #expect(read == written)
        #expect(readAgain == written)
    }

    @Test("a save does not wait for a read holding a connection, and the read keeps its snapshot")
    func saveRunsBesideAnOpenRead() throws {
        let (container, store) = try Self.open()
        defer { container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for index in 0..<3 {
                try context.insertObject(entityName: "Tag").setValue("t\(index)", forKey: "label")
            }
            try context.save()
        }
        // A read in the middle of its result: its connection is out of the pool, its read
        // transaction open.
        let reader = try store.takeConnection()
        let rows = try reader.prepare("SELECT pk FROM \"Tag\" ORDER BY pk")
        #expect(try rows.step())
        let saved = DispatchSemaphore(value: 0)
        let outcome = SaveOutcome()
        DispatchQueue.global().async {
            do {
                try context.performAndWait {
                    try context.insertObject(entityName: "Tag").setValue("t3", forKey: "label")
                    try context.save()
                }
                outcome.set(nil)
            } catch {
                outcome.set(error)
            }
            saved.signal()
        }
        #expect(saved.wait(timeout: .now() + 20) == .success, "the save finished while the read held its connection")
        #expect(outcome.error == nil)
        var seen = 1
        while try rows.step() { seen += 1 }
        #expect(seen == 3, "the open read still sees the state before the save")
        store.returnConnection(reader)
        try context.performAndWait { () throws in
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Tag")) == 4)
        }
    }

    @Test("every connection the pool opens gets the store's settings: synchronous=FULL when asked")
    func everyConnectionIsConfigured() throws {
        for (option, expected) in [("FULL", Int64(2)), ("NORMAL", Int64(1))] {
            let (container, store) = try Self.open(options: ["synchronous": option])
            defer { container.close() }
            // Two at once: the second is opened for the occasion.
            let first = try store.takeConnection()
            let second = try store.takeConnection()
            #expect(first !== second)
            for connection in [first, second] {
                let pragma = try connection.prepare("PRAGMA synchronous")
                #expect(try pragma.step())
                #expect(pragma.int64(0) == expected, "synchronous=\(option)")
            }
            store.returnConnection(first)
            store.returnConnection(second)
        }
    }

    @Test("a connection opened after the file is gone reports it, and makes no empty file in its place")
    func missingFileIsNotRecreated() throws {
        let (container, store) = try Self.open()
        defer { container.close() }
        let held = try store.takeConnection()
        defer { store.returnConnection(held) }
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: store.url.path + suffix)
        }
        #expect(throws: StoreError.self) { _ = try store.takeConnection() }
        #expect(!FileManager.default.fileExists(atPath: store.url.path))
    }
}

/// The background save's error, if any, handed back to the test's thread.
private final class SaveOutcome: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: (any Error)?
    private var finished = false

    func set(_ error: (any Error)?) {
        lock.withLock {
            stored = error
            finished = true
        }
    }

    var error: (any Error)? {
        lock.withLock { finished ? stored : CancellationError() }
    }
}
