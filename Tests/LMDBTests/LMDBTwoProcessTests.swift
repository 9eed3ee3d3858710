import Foundation
import ObjectGraph
import ObjectGraphLMDB
import Testing

/// Two processes reading and writing one LMDB environment. The second process is a Swift
/// Testing exit test (a child of the test process) that finds the file through its parent's
/// process ID. Both start from a tiny map, and the child writes far more than fits, so its
/// saves grow the map and the parent must then adopt the grown size (`MDB_MAP_RESIZED`)
/// before it can read or write again.
@Suite("LMDB across processes")
struct LMDBTwoProcessTests {
    static func store(processID: Int32) -> StoreDescription {
        .lmdb(at: FileManager.default.temporaryDirectory.appendingPathComponent("og-two-process-\(processID).lmdb"),
              options: ["initialMapSize": "\(128 << 10)"])
    }

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Entry") { e in
                e.attribute("author", .string, indexed: true)
                e.attribute("body", .string, optional: true)
            }
        }
    }

    /// A container on `description`'s file (emptied first; `removeFiles` removes it), holding
    /// one entry written by the parent.
    static func openParent(_ description: StoreDescription) throws -> (container: PersistentContainer, context: ManagedObjectContext, removeFiles: () -> Void) {
        let path = try #require(description.url).path
        let removeFiles = { for suffix in ["", "-lock"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        removeFiles()
        let container = try PersistentContainer(model: try model(), stores: [description])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            try context.insertObject(entityName: "Entry").setValue("parent", forKey: "author")
            try context.save()
        }
        return (container, context, removeFiles)
    }

    static let bulk = 400
    static let bulkBody = String(repeating: "lmdb ", count: 2_000)

    @Test("each process sees the other's saves, across a map the other process grew")
    func twoProcesses() async throws {
        let path = try #require(Self.store(processID: getpid()).url).path
        let (container, context, removeFiles) = try Self.openParent(Self.store(processID: getpid()))
        defer { removeFiles() }
        let sizeBefore = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0

        await #expect(processExitsWith: .success) {
            let container = try PersistentContainer(model: try LMDBTwoProcessTests.model(), stores: [LMDBTwoProcessTests.store(processID: getppid())])
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let authors = try context.fetch(FetchRequest<ManagedObject>(entityName: "Entry")).map { try $0.value(forKey: "author") as? String }
                guard authors == ["parent"] else { exit(3) }
                for index in 0..<LMDBTwoProcessTests.bulk {
                    let entry = try context.insertObject(entityName: "Entry")
                    try entry.setValue(index < 3 ? "child \(index)" : "bulk", forKey: "author")
                    try entry.setValue(LMDBTwoProcessTests.bulkBody, forKey: "body")
                }
                try context.save()
            }
            container.close()
        }

        let sizeAfter = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        #expect(sizeAfter > sizeBefore + Self.bulk * Self.bulkBody.utf8.count / 2, "the child's save outgrew the map the parent had")
        try context.performAndWait {
            try context.insertObject(entityName: "Entry").setValue("parent again", forKey: "author")
            try context.save()
            let named = try context.fetch(FetchRequest<ManagedObject>(entityName: "Entry", predicate: key("author") != "bulk", sortKeys: [SortKey("author")]))
            #expect(try named.map { try $0.value(forKey: "author") as? String } == ["child 0", "child 1", "child 2", "parent", "parent again"])
            let all = try context.fetch(FetchRequest<ManagedObject>(entityName: "Entry"))
            #expect(all.count == Self.bulk + 2)
            #expect(Set(all.map(\.objectID)).count == all.count, "keys allocated by the two processes never collide")
        }
        container.close()
    }

    static func snapshotStore(processID: Int32) -> StoreDescription {
        .lmdb(at: FileManager.default.temporaryDirectory.appendingPathComponent("og-two-process-snapshot-\(processID).lmdb"))
    }

    @Test("a read right after the other process's save sees it, with no write of its own between")
    func readAfterOtherProcessSave() async throws {
        let (container, context, removeFiles) = try Self.openParent(Self.snapshotStore(processID: getpid()))
        defer { removeFiles() }
        let countEntries = { try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Entry")) } }
        // This read leaves its snapshot parked; the child's save must not go unseen by the
        // next read, which this process does not precede with a write.
        #expect(try countEntries() == 1)
        await #expect(processExitsWith: .success) {
            let container = try PersistentContainer(model: try LMDBTwoProcessTests.model(), stores: [LMDBTwoProcessTests.snapshotStore(processID: getppid())])
            let context = container.newBackgroundContext()
            try context.performAndWait {
                for index in 0..<3 { try context.insertObject(entityName: "Entry").setValue("child \(index)", forKey: "author") }
                try context.save()
            }
            container.close()
        }
        #expect(try countEntries() == 4)
        container.close()
    }

    static func concurrentStore(processID: Int32) -> StoreDescription {
        .lmdb(at: FileManager.default.temporaryDirectory.appendingPathComponent("og-two-process-concurrent-\(processID).lmdb"))
    }

    /// The FIFO through which the child tells the parent it starts saving.
    static func handshake(processID: Int32) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("og-two-process-concurrent-\(processID).fifo").path
    }

    static let saves = 50
    static let entriesPerSave = 4

    /// Saves ``saves`` times, ``entriesPerSave`` new entries each, authored "`side` save.entry".
    static func saveLoop(_ context: ManagedObjectContext, side: String) throws {
        try context.performAndWait {
            for save in 0..<saves {
                for entry in 0..<entriesPerSave {
                    try context.insertObject(entityName: "Entry").setValue("\(side) \(save).\(entry)", forKey: "author")
                }
                try context.save()
            }
        }
    }

    @Test("two processes saving at the same time lose no save and never hand out one key twice")
    func concurrentSaves() async throws {
        let (container, context, removeFiles) = try Self.openParent(Self.concurrentStore(processID: getpid()))
        defer { removeFiles() }
        let started = try ProcessSignal(listeningAt: Self.handshake(processID: getpid()))

        let child = ChildProcess {
            await #expect(processExitsWith: .success) {
                let container = try PersistentContainer(model: try LMDBTwoProcessTests.model(), stores: [LMDBTwoProcessTests.concurrentStore(processID: getppid())])
                let context = container.newBackgroundContext()
                guard ProcessSignal.send(to: LMDBTwoProcessTests.handshake(processID: getppid())) else { exit(3) }
                try LMDBTwoProcessTests.saveLoop(context, side: "child")
                container.close()
            }
        }
        // Both save loops start once the child's store is open: neither waits for the other.
        try #require(await started.received(before: child), "the child said it starts saving")
        try Self.saveLoop(context, side: "parent")
        await child.finish()

        let perSide = Self.saves * Self.entriesPerSave
        try context.performAndWait {
            let all = try context.fetch(FetchRequest<ManagedObject>(entityName: "Entry"))
            #expect(all.count == 1 + 2 * perSide)
            #expect(Set(all.map(\.objectID)).count == all.count, "no key was handed out twice")
            let authors = try all.map { try #require($0.value(forKey: "author") as? String) }
            #expect(Set(authors).count == all.count, "each entry was stored once, none overwritten")
            #expect(authors.filter { $0.hasPrefix("child ") }.count == perSide)
            #expect(authors.filter { $0.hasPrefix("parent ") }.count == perSide)
        }
        container.close()
    }
}
