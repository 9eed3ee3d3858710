import Foundation
import ObjectGraph
import ObjectGraphSQLite
import Testing

/// Two processes using one store file, as SQLite promises: the second process is a Swift
/// Testing exit test (a child of the test process), which finds the file through its parent's
/// process ID.
@Suite("SQLite across processes")
struct SQLiteTwoProcessTests {
    static func sharedFile(processID: Int32) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("og-two-process-\(processID).sqlite")
    }

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in m.entity("Entry") { e in e.attribute("author", .string) } }
    }

    @Test("a second process reads what the first saved, and the first sees what the second saved")
    func twoProcesses() async throws {
        let url = Self.sharedFile(processID: getpid())
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) } }
        let container = try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: url)])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let entry = try context.insertObject(entityName: "Entry")
            try entry.setValue("parent", forKey: "author")
            try context.save()
        }

        await #expect(processExitsWith: .success) {
            let url = SQLiteTwoProcessTests.sharedFile(processID: getppid())
            let container = try PersistentContainer(model: try SQLiteTwoProcessTests.model(), stores: [.sqlite(at: url)])
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let authors = try context.fetch(FetchRequest<ManagedObject>(entityName: "Entry")).map { try $0.value(forKey: "author") as? String }
                guard authors == ["parent"] else { exit(3) }
                for index in 0..<3 {
                    let entry = try context.insertObject(entityName: "Entry")
                    try entry.setValue("child \(index)", forKey: "author")
                }
                try context.save()
            }
            container.close()
        }

        try context.performAndWait {
            let another = try context.insertObject(entityName: "Entry")
            try another.setValue("parent again", forKey: "author")
            try context.save()
            let all = try context.fetch(FetchRequest<ManagedObject>(entityName: "Entry", sortKeys: [SortKey("author")]))
            let authors = try all.map { try $0.value(forKey: "author") as? String }
            #expect(authors == ["child 0", "child 1", "child 2", "parent", "parent again"])
            #expect(Set(all.map(\.objectID)).count == 5, "keys allocated by the two processes never collide")
        }
        container.close()
    }

    @Test("a read right after the other process's save sees it, with no write of its own between")
    func readAfterOtherProcessSave() async throws {
        let url = Self.sharedFile(processID: getpid()).deletingPathExtension().appendingPathExtension("parked.sqlite")
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) } }
        let container = try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: url)])
        let context = container.newBackgroundContext()
        let countEntries = { try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Entry")) } }
        try context.performAndWait {
            try context.insertObject(entityName: "Entry").setValue("parent", forKey: "author")
            try context.save()
        }
        // This read leaves its transaction open; the child's save must not go unseen by the
        // next read, which this process does not precede with a write.
        #expect(try countEntries() == 1)
        await #expect(processExitsWith: .success) {
            let url = SQLiteTwoProcessTests.sharedFile(processID: getppid()).deletingPathExtension().appendingPathExtension("parked.sqlite")
            let container = try PersistentContainer(model: try SQLiteTwoProcessTests.model(), stores: [.sqlite(at: url)])
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
}
