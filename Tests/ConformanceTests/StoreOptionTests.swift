import Foundation
import ObjectGraph
import ObjectGraphBinaryFile
import ObjectGraphInMemory
import ObjectGraphLMDB
import ObjectGraphSQLite
import Testing

/// Store descriptions whose options a store kind does not take are refused at open, naming the
/// option: they were ignored, so a misspelt `synchronous: "FULL"` silently left the default.
@Suite("Store description options")
struct StoreOptionTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in m.entity("Note") { e in e.attribute("text", .string) } }
    }

    /// A description of each kind with `options`, and the kind's file (none for memory).
    static func description(_ kind: String, _ directory: URL, _ options: [String: String]) -> StoreDescription {
        let url = directory.appendingPathComponent("store.\(kind)")
        switch kind {
        case "sqlite": return .sqlite(at: url, options: options)
        case "lmdb": return .lmdb(at: url, options: options)
        case "binary": return .binaryFile(at: url, options: options)
        default:
            var memory = StoreDescription.inMemory()
            memory.options = options
            return memory
        }
    }

    static let refused: [(kind: String, options: [String: String], named: String)] = [
        ("sqlite", ["synchronus": "FULL"], "synchronus"),
        ("sqlite", ["synchronous": "FUL"], "synchronous"),
        ("binary", ["synchronous": "NORMAL"], "synchronous"),
        ("binary", ["sync": "OFF"], "sync"),
        ("lmdb", ["sync": "sometimes"], "sync"),
        ("lmdb", ["initialMapSize": "-1"], "initialMapSize"),
        ("lmdb", ["initialMapSize": "64MB"], "initialMapSize"),
        ("lmdb", ["index": "some"], "index"),
        ("lmdb", ["synchronous": "FULL"], "synchronous"),
        ("memory", ["synchronous": "OFF"], "synchronous"),
    ]

    @Test(arguments: refused.indices)
    func anOptionTheStoreDoesNotTakeIsRefusedAtOpenNamingIt(_ index: Int) throws {
        let (kind, options, named) = Self.refused[index]
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("objectgraph-options-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = PersistentStoreCoordinator(model: try Self.model())
        let error = #expect(throws: StoreError.self, "\(kind) \(options)") {
            try coordinator.addPersistentStore(Self.description(kind, directory, options))
        }
        #expect(error?.code == .invalidOption)
        #expect(error?.message.contains("'\(named)'") == true, "\(error?.message ?? "")")
        #expect(coordinator.persistentStores.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("store.\(kind)").path), "no file is made")
    }

    @Test(arguments: ["sqlite", "lmdb", "binary"])
    func theOptionsAStoreTakesOpenIt(_ kind: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("objectgraph-options-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let options: [String: String] = switch kind {
        case "sqlite": ["synchronous": "full"]
        case "lmdb": ["sync": "META", "initialMapSize": "\(256 << 10)", "index": "all"]
        default: ["synchronous": "off"]
        }
        let container = try PersistentContainer(model: try Self.model(), stores: [Self.description(kind, directory, options)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            try context.insertObject(entityName: "Note").setValue("kept", forKey: "text")
            try context.save()
        }
    }
}
