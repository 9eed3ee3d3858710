import ArgumentParser
import Foundation
import ObjectGraph
import ObjectGraphConformance
import ObjectGraphBinaryFile
import ObjectGraphInMemory
import ObjectGraphLMDB
import ObjectGraphSQLite

/// The stores built into the tool, by the name `--store` takes.
enum BuiltInStore: String, CaseIterable, ExpressibleByArgument {
    case sqlite
    case binary
    case lmdb
    case memory

    /// A store description for the demo, located in `directory` when the store has files.
    func description(in directory: URL) -> StoreDescription {
        switch self {
        case .sqlite: return .sqlite(at: directory.appendingPathComponent("store.sqlite"))
        case .binary: return .binaryFile(at: directory.appendingPathComponent("store.bin"))
        case .lmdb: return .lmdb(at: directory.appendingPathComponent("store.lmdb"))
        case .memory: return .inMemory()
        }
    }

    /// The conformance-kit entry for this store.
    var conformanceBackend: ConformanceBackend {
        switch self {
        case .sqlite: return ConformanceBackend(name: rawValue) { .sqlite(at: $0.appendingPathComponent("store.sqlite")) }
        case .binary: return ConformanceBackend(name: rawValue) { .binaryFile(at: $0.appendingPathComponent("store.bin")) }
        case .lmdb: return ConformanceBackend(name: rawValue) { .lmdb(at: $0.appendingPathComponent("store.lmdb")) }
        case .memory: return ConformanceBackend(name: rawValue) { _ in .inMemory() }
        }
    }
}
