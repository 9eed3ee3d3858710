import CLMDB
import Foundation
import ObjectGraph
@testable import ObjectGraphLMDB
import Testing

/// A read leaves its transaction parked with its snapshot for the next read, which uses it
/// only while no write has been committed since; the snapshot is let go when the process
/// writes and shortly after the last read, so it does not keep LMDB from reusing pages.
@Suite("LMDB parked snapshots")
struct LMDBParkedSnapshotTests {
    /// The snapshot (transaction ID) of each of the environment's reader slots, "-" for a
    /// slot whose transaction is reset, from `mdb_reader_list` on the store's own environment.
    static func readerSnapshots(_ container: PersistentContainer) throws -> [String] {
        let store = try #require(container.coordinator.persistentStores.first as? LMDBStore)
        final class Lines: @unchecked Sendable { var text = "" }
        let lines = Lines()
        mdb_reader_list(store.environment.env, { message, context in
            guard let message, let context else { return 0 }
            Unmanaged<Lines>.fromOpaque(context).takeUnretainedValue().text += String(cString: message)
            return 0
        }, Unmanaged.passUnretained(lines).toOpaque())
        return lines.text.split(separator: "\n").filter { !$0.contains("pid") && !$0.contains("no active readers") }
            .compactMap { $0.split(separator: " ").last.map(String.init) }
    }

    static func docCount(_ context: ManagedObjectContext) throws -> Int {
        try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Doc")) }
    }

    static func insertDoc(_ title: String, _ context: ManagedObjectContext) throws {
        try context.performAndWait {
            try context.insertObject(entityName: "Doc").setValue(title, forKey: "title")
            try context.save()
        }
    }

    @Test("reads share a parked snapshot only while nothing was written, and every save is seen")
    func parkedSnapshotFollowsWrites() throws {
        let url = try LMDBFixture.temporaryFile()
        let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        defer { container.close() }
        let reader = container.newBackgroundContext()
        let writer = container.newBackgroundContext()
        try Self.insertDoc("first", writer)
        #expect(try Self.docCount(reader) == 1)
        let parked = try Self.readerSnapshots(container).filter { $0 != "-" }
        #expect(parked.count == 1, "the read left its snapshot parked: \(parked)")
        // A save of this process lets the parked snapshot go before it writes, and the next
        // read takes a new one that includes the save.
        try Self.insertDoc("second", writer)
        #expect(try Self.docCount(reader) == 2)
        let after = try Self.readerSnapshots(container).filter { $0 != "-" }
        #expect(after.count == 1 && after != parked, "a newer snapshot is parked: \(parked) then \(after)")
        // A second store on the file in this process writes through the same environment.
        let second = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        try Self.insertDoc("third", second.newBackgroundContext())
        second.close()
        #expect(try Self.docCount(reader) == 3)
    }

    @Test("a parked snapshot is let go soon after the last read")
    func parkedSnapshotIsReleased() async throws {
        let url = try LMDBFixture.temporaryFile()
        let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        try Self.insertDoc("only", context)
        #expect(try Self.docCount(context) == 1)
        // Released after about LMDBEnvironment.parkedSnapshotLifetime (50 ms); waited for up to
        // 20 s so that only a release that never comes fails, not a slow machine.
        var live = try Self.readerSnapshots(container).filter { $0 != "-" }
        for _ in 0..<400 where !live.isEmpty {
            try await Task.sleep(for: .milliseconds(50))
            live = try Self.readerSnapshots(container).filter { $0 != "-" }
        }
        #expect(live.isEmpty, "no reader keeps a snapshot once reads stop: \(live)")
        // The next read parks a snapshot again, and sees the data.
        #expect(try Self.docCount(context) == 1)
    }
}
