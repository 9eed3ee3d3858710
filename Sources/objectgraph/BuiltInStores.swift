import ArgumentParser
import Foundation
import ObjectGraph
import ObjectGraphConformance
import ObjectGraphInMemory

/// The stores built into the tool, by the name `--store` takes.
enum BuiltInStore: String, CaseIterable, ExpressibleByArgument {
    case memory

    /// A store description for the demo, located in `directory` when the store has files.
    func description(in directory: URL) -> StoreDescription {
        switch self {
        case .memory: return .inMemory()
        }
    }

    /// The conformance-kit entry for this store.
    var conformanceBackend: ConformanceBackend {
        switch self {
        case .memory: return ConformanceBackend(name: rawValue) { _ in .inMemory() }
        }
    }
}
