import Foundation
import ObjectGraph

/// What a scenario works with: the shared test model, a container on the backend's store in a
/// fresh folder, and a way to close and reopen the store in a new coordinator.
///
/// Used on the thread running the scenario; contexts it makes are private-queue contexts, so
/// scenario code touches objects inside `performAndWait`.
public final class ScenarioEnvironment {
    /// The shared conformance model.
    public let model: ManagedObjectModel
    /// The backend under test.
    public let backend: ConformanceBackend
    /// A folder of the scenario's own, removed afterwards.
    public let directory: URL
    /// The current container (replaced by ``reopen()``).
    public private(set) var container: PersistentContainer
    private let description: StoreDescription

    init(backend: ConformanceBackend, model: ManagedObjectModel) throws {
        self.backend = backend
        self.model = model
        self.directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("objectgraph-conformance-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.description = backend.makeStore(directory)
        self.container = try PersistentContainer(model: model, stores: [description])
    }

    /// The capabilities of the store under test.
    public var capabilities: StoreCapabilities { container.coordinator.persistentStores.first?.capabilities ?? [] }

    /// A new private-queue context on the current container.
    public func newContext(_ name: String? = nil) -> ManagedObjectContext {
        container.newBackgroundContext(name: name)
    }

    /// Inserts what `make` makes in a new context, saves it, and returns the objects' IDs
    /// (permanent, read after the save) in the order `make` returned the objects.
    public func seed(_ make: (ManagedObjectContext) throws -> [ManagedObject]) throws -> [ObjectID] {
        let context = newContext()
        return try context.performAndWait {
            let objects = try make(context)
            try context.save()
            return objects.map(\.objectID)
        }
    }

    /// Starts over with a new coordinator (cold row cache, new contexts) on the same data:
    /// a persistent store is closed and opened again from its location; a store that does not
    /// persist is attached, still open, to the new coordinator — so round-trip scenarios check
    /// the store's own answers on every backend. A container already closed is opened again
    /// from the store's location (a store that does not persist then starts empty).
    public func reopen() throws {
        if container.coordinator.persistentStores.isEmpty || capabilities.contains(.persistent) {
            container.close()
            container = try PersistentContainer(model: model, stores: [description])
        } else {
            guard let store = container.coordinator.persistentStores.first else {
                throw ScenarioFailure(message: "no store is attached", file: #filePath, line: #line)
            }
            let same = StoreDescription(type: description.type, configuration: description.configuration) { _ in store }
            container = try PersistentContainer(model: model, stores: [same])
        }
    }

    func tearDown() {
        container.close()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// The result of running one scenario on one backend.
public enum ScenarioOutcome: Sendable, Equatable {
    /// It held.
    case passed
    /// It did not hold; the message says where and why.
    case failed(String)
    /// It does not apply to the store; the reason says why.
    case skipped(String)
    /// It failed, as the backend's known-failure list says it does, for this reason.
    case knownFailure(String)

    /// Whether the outcome counts as a failure of the run.
    public var isFailure: Bool { if case .failed = self { return true } else { return false } }
}
