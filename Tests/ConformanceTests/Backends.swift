import Foundation
import ObjectGraph
import ObjectGraphConformance
import ObjectGraphBinaryFile
import ObjectGraphInMemory
import ObjectGraphLMDB
import ObjectGraphSQLite

/// Every built-in backend, plus test-only variants. Adding a backend to the matrix is adding
/// one entry here.
let allBackends: [ConformanceBackend] = [
    ConformanceBackend(name: "memory") { _ in .inMemory() },
    ConformanceBackend(name: "sqlite") { directory in .sqlite(at: directory.appendingPathComponent("store.sqlite")) },
    ConformanceBackend(name: "binary") { directory in .binaryFile(at: directory.appendingPathComponent("store.bin")) },
    ConformanceBackend(name: "lmdb") { directory in .lmdb(at: directory.appendingPathComponent("store.lmdb")) },
    // Every indexable attribute indexed, so every fetch that can use an index does: the index
    // paths (lookups, ranges, index-ordered sorts) must give the scan's answers.
    ConformanceBackend(name: "lmdb-indexed") { directory in
        .lmdb(at: directory.appendingPathComponent("store.lmdb"), options: ["index": "all"])
    },
    // The pushdown contract: a store that evaluates nothing natively must give the same
    // answers, because the shared layer completes the predicate, sort and range.
    ConformanceBackend(name: "memory-no-pushdown") { _ in
        StoreDescription(type: "memory-no-pushdown") { request in NoPushdownStore(request: request) }
    },
]

/// An in-memory store that declines to evaluate predicates, sorts and ranges: it returns every
/// row of the requested entities, in reverse key order, and says it applied nothing.
final class NoPushdownStore: PersistentStore, @unchecked Sendable {
    private let inner: InMemoryStore

    init(request: StoreOpenRequest) { inner = InMemoryStore(request: request) }

    var identifier: String { inner.identifier }
    var capabilities: StoreCapabilities { inner.capabilities.subtracting([.evaluatesPredicates, .sorts]) }
    func metadata() throws -> StoreMetadata { try inner.metadata() }
    func allocatePrimaryKeys(rootEntity: String, count: Int) throws -> Int64 { try inner.allocatePrimaryKeys(rootEntity: rootEntity, count: count) }
    func snapshots(for ids: [ObjectID]) throws -> [RowSnapshot] { try inner.snapshots(for: ids) }
    func relatedIDs(for relationship: RelationshipDescription, of sources: [ObjectID]) throws -> [[ObjectID]] {
        try inner.relatedIDs(for: relationship, of: sources)
    }
    func save(_ changes: StoreChangeSet) throws { try inner.save(changes) }
    func close() { inner.close() }

    func fetch(_ request: StoreFetchRequest) throws -> StoreFetchResult {
        var everything = request
        everything.predicate = nil
        everything.sortKeys = []
        everything.offset = 0
        everything.limit = nil
        everything.resultType = .snapshots
        let rows = try inner.fetch(everything).snapshots
        return StoreFetchResult(snapshots: rows.reversed(), applied: [])
    }
}
