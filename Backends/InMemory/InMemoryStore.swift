import Foundation
import ObjectGraph

/// A store that keeps everything in memory: the atomic-store base with no file.
///
/// It implements the same store protocol as every other backend and passes the same
/// conformance kit, so tests written against it hold on SQLite too — unlike Core Data's
/// in-memory store, which behaves differently from its SQLite one. Data is gone when the store
/// closes.
public final class InMemoryStore: AtomicStore, @unchecked Sendable {
    /// Creates an empty store for `request`.
    public init(request: StoreOpenRequest) {
        let identifier = UUID().uuidString
        super.init(request: request, contents: .empty(for: request, identifier: identifier), capabilities: [])
    }
}

extension StoreDescription {
    /// An in-memory store, optionally holding one configuration of the model. It takes no
    /// options: a description given some is refused at open (``StoreError/Code/invalidOption``).
    public static func inMemory(configuration: String? = nil) -> StoreDescription {
        StoreDescription(type: "memory", configuration: configuration) { request in
            try request.checkOptionNames([], storeType: "memory")
            return InMemoryStore(request: request)
        }
    }
}
