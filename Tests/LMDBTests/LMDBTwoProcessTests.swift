import Foundation
import ObjectGraph
import ObjectGraphLMDB
import Testing

/// Two processes reading and writing one LMDB environment: the second process is a Swift
/// Testing exit test (a child of the test process), which finds the file through its parent's
/// process ID.
@Suite("LMDB across processes")
struct LMDBTwoProcessTests {
    static func sharedFile(processID: Int32) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("og-two-process-\(processID).lmdb")
    }

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in m.entity("Entry") { e in e.attribute("author", .string, indexed: true) } }
    }

    @Test("a second process reads what the first saved, and the first sees what the second saved")
    func twoProcesses() async throws {
        let url = Self.sharedFile(processID: getpid())
        for suffix in ["", "-lock"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        defer { for suffix in ["", "-lock"] { try? FileManager.default.removeItem(atPath: url.path + suffix) } }
        let container = try PersistentContainer(model: try Self.model(), stores: [.lmdb(at: url)])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let entry = try context.insertObject(entityName: "Entry")
            try entry.setValue("parent", forKey: "author")
            try context.save()
        }

        await #expect(processExitsWith: .success) {
            let url = LMDBTwoProcessTests.sharedFile(processID: getppid())
            // A small map, so this process's writes grow it under the parent's feet.
            let container = try PersistentContainer(model: try LMDBTwoProcessTests.model(), stores: [.lmdb(at: url)])
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
}
