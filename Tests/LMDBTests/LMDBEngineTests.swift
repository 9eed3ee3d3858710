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

/// A reader slot left by a process that died with a read transaction open is cleared when a
/// store opens the environment (`mdb_reader_check`), instead of staying until the table fills.
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
        do {
            _ = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: URL(fileURLWithPath: folder + "/store.lmdb"))])
            exit(2)
        } catch let error as StoreError where error.code == .io && error.message.contains("permission denied") {
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(1)
        }
    }

    @Test("opening a store in a folder the process may not write is an I/O error, not busy")
    func deniedFolderIsIO() async {
        // (EACCES is also what a lock held elsewhere reports: it was busy, and a caller retrying
        // busy stores would have retried a permission error for ever.)
        await #expect(processExitsWith: .success) { Self.openInDeniedFolder() }
    }
}

@Suite("LMDB stale readers")
struct LMDBStaleReaderTests {
    static func file(processID: Int32) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("og-stale-reader-\(processID).lmdb")
    }

    /// The reader lines `mdb_reader_list` prints for `url` (none: "(no active readers)").
    static func readerLines(_ url: URL) throws -> [String] {
        try LMDBFixture.withRawEnvironment(url) { env, _ in
            final class Lines { var text = "" }
            let lines = Lines()
            mdb_reader_list(env, { message, context in
                guard let message, let context else { return 0 }
                Unmanaged<Lines>.fromOpaque(context).takeUnretainedValue().text += String(cString: message)
                return 0
            }, Unmanaged.passUnretained(lines).toOpaque())
            return lines.text.split(separator: "\n").map(String.init).filter { !$0.contains("pid") }
        }
    }

    @Test("a dead process's reader slot is freed when the store opens")
    func staleReaderCleared() async throws {
        let url = Self.file(processID: getpid())
        let removeFiles = { for suffix in ["", "-lock"] { try? FileManager.default.removeItem(atPath: url.path + suffix) } }
        removeFiles()
        defer { removeFiles() }
        try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)]).close()
        await #expect(processExitsWith: .success) {
            var env: OpaquePointer?
            mdb_env_create(&env)
            mdb_env_set_maxdbs(env, 64)
            guard mdb_env_open(env, LMDBStaleReaderTests.file(processID: getppid()).path, UInt32(MDB_NOSUBDIR | MDB_NOTLS), 0o644) == MDB_SUCCESS else { exit(3) }
            var txn: OpaquePointer?
            guard mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn) == MDB_SUCCESS else { exit(4) }
            exit(0)  // dies holding its reader slot
        }
        #expect(try Self.readerLines(url).count == 1, "the dead process's slot is still in the table")
        try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)]).close()
        #expect(try Self.readerLines(url) == ["(no active readers)"])
    }
}
