import CLMDB
import Foundation
import ObjectGraph
import ObjectGraphLMDB
import Testing

@Suite("LMDB engine")
struct LMDBEngineTests {
    @Test("the map grows by itself when a save fills it, and nothing is lost")
    func mapGrows() throws {
        let url = try LMDBFixture.temporaryFile()
        let description = StoreDescription.lmdb(at: url, options: ["initialMapSize": "\(256 << 10)"])
        let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [description])
        let context = container.newBackgroundContext()
        let text = String(repeating: "0123456789abcdef", count: 256)  // 4 KiB per row
        try context.performAndWait {
            for round in 0..<4 {
                for index in 0..<250 {
                    let note = try context.insertObject(entityName: "Doc")
                    try note.setValue("\(round)-\(index) " + text, forKey: "title")
                    try note.setValue(Double(index), forKey: "rank")
                }
                try context.save()
            }
        }
        container.close()
        let size = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int ?? 0
        #expect(size > 256 << 10, "the data outgrew the initial map")
        let reopened = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        let check = reopened.newBackgroundContext()
        try check.performAndWait { () throws in
            #expect(try check.count(for: FetchRequest<ManagedObject>(entityName: "Doc")) == 1000)
            #expect(try check.count(for: FetchRequest<ManagedObject>(entityName: "Doc", predicate: key("rank") >= 200.0)) == 200)
        }
        reopened.close()
    }

    @Test("readers on other threads see whole saves only, while saves run and grow the map")
    func readersSeeWholeSaves() async throws {
        let url = try LMDBFixture.temporaryFile()
        let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url, options: ["initialMapSize": "\(128 << 10)"])])
        let writer = container.newBackgroundContext()
        let batch = 20
        let rounds = 30
        let padding = String(repeating: "p", count: 2048)
        let observed = try await withThrowingTaskGroup(of: [Int].self) { group in
            for _ in 0..<3 {
                group.addTask {
                    let reader = container.newBackgroundContext()
                    var counts: [Int] = []
                    for _ in 0..<rounds {
                        counts.append(try reader.performAndWait { try reader.count(for: FetchRequest<ManagedObject>(entityName: "Doc")) })
                    }
                    return counts
                }
            }
            group.addTask {
                for round in 0..<rounds {
                    try writer.performAndWait {
                        // 2 KiB titles: the saves outgrow the 128 KiB map several times while
                        // the readers run, so growing waits for their transactions correctly.
                        for index in 0..<batch { try writer.insertObject(entityName: "Doc").setValue("\(round).\(index) " + padding, forKey: "title") }
                        try writer.save()
                    }
                }
                return []
            }
            var all: [Int] = []
            for try await counts in group { all += counts }
            return all
        }
        #expect(observed.allSatisfy { $0 % batch == 0 }, "every count is a whole number of saves: \(observed.filter { $0 % batch != 0 })")
        let size = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int ?? 0
        #expect(size > 4 * (128 << 10), "the map grew while the readers ran")
        try writer.performAndWait { () throws in #expect(try writer.count(for: FetchRequest<ManagedObject>(entityName: "Doc")) == batch * rounds) }
        container.close()
    }

    @Test("two stores on one file in one process share the environment")
    func twoStoresOneFile() throws {
        let url = try LMDBFixture.temporaryFile()
        let first = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        let second = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        let writer = first.newBackgroundContext()
        try writer.performAndWait {
            try writer.insertObject(entityName: "Label").setValue("shared", forKey: "name")
            try writer.save()
        }
        first.close()
        let reader = second.newBackgroundContext()
        try reader.performAndWait {
            let labels = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Label")).map { try $0.value(forKey: "name") as? String }
            #expect(labels == ["shared"])
        }
        second.close()
    }

    @Test("a closed store refuses calls with a typed error")
    func closedStore() throws {
        let url = try LMDBFixture.temporaryFile()
        let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        let store = try #require(container.coordinator.persistentStores.first)
        container.close()
        let error = #expect(throws: StoreError.self) { _ = try store.metadata() }
        #expect(error?.code == .closed)
    }
}

@Suite("LMDB permissions")
struct LMDBPermissionTests {
    /// Opens a store in a folder the process may not write, in a child process that gives up
    /// root first (root passes every permission check); exits 0 when that is an I/O error.
    static func openInDeniedFolder() -> Never {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("og-lmdb-denied").path  // (one folder, reused: the child cannot remove it)
        mkdir(folder, 0o755)
        if getuid() == 0 {
            guard setgid(65534) == 0, setuid(65534) == 0 else { exit(3) }
        } else {
            chmod(folder, 0o555)
        }
        guard let model = try? LMDBFixture.model() else { exit(4) }
        LMDBFixture.exitOpening(URL(fileURLWithPath: folder + "/store.lmdb"), model: model) { $0.code == .io && $0.message.contains("permission denied") }
    }

    @Test("opening a store in a folder the process may not write is an I/O error, not busy")
    func deniedFolderIsIO() async {
        // (EACCES is also what a lock held elsewhere reports: it was busy, and a caller retrying
        // busy stores would have retried a permission error for ever.)
        await #expect(processExitsWith: .success) { Self.openInDeniedFolder() }
    }
}
