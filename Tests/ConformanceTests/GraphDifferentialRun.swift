import Foundation
import ObjectGraph
import ObjectGraphConformance

/// One random sequence of changes to the conformance model's graph, run on one backend: the
/// same seed makes the same choices on every backend as long as the backends answer alike
/// (objects are chosen by label from sorted lists, never by ID or by a set's order).
///
/// What it records — the outcome of every save and, after each one that lands, the stored
/// graph as a fresh context reads it — is compared across backends by
/// ``GraphDifferentialTests``. It also checks, on each backend alone, that the saving context
/// and a fresh one see the same graph, and that every stored relationship agrees with its
/// inverse.
struct GraphDifferentialRun {
    /// An entity the run changes, and the attribute that names its objects.
    struct Kind {
        let entity: String
        let label: String
        /// How often inserts pick it (relative).
        let weight: Int
    }

    /// The entities in the run (concrete ones; the abstract `Vehicle` is reached through
    /// `Car` and `Truck`). Rosters and crews are left out: an incomplete one fails every save.
    static let kinds: [Kind] = [
        Kind(entity: "Owner", label: "name", weight: 4), Kind(entity: "Item", label: "name", weight: 8),
        Kind(entity: "Student", label: "name", weight: 4), Kind(entity: "Address", label: "street", weight: 2),
        Kind(entity: "SchoolClass", label: "title", weight: 1), Kind(entity: "Subject", label: "name", weight: 2),
        Kind(entity: "Tag", label: "label", weight: 2), Kind(entity: "Locker", label: "number", weight: 1),
        Kind(entity: "Employee", label: "name", weight: 3), Kind(entity: "Chat", label: "title", weight: 2),
        Kind(entity: "Message", label: "text", weight: 4), Kind(entity: "Member", label: "name", weight: 2),
        Kind(entity: "Playlist", label: "name", weight: 2), Kind(entity: "Track", label: "title", weight: 4),
        Kind(entity: "Node", label: "label", weight: 4), Kind(entity: "Garage", label: "name", weight: 1),
        Kind(entity: "Car", label: "name", weight: 2), Kind(entity: "Truck", label: "name", weight: 1),
        Kind(entity: "Spot", label: "label", weight: 1), Kind(entity: "Folder", label: "name", weight: 1),
        Kind(entity: "Document", label: "title", weight: 1), Kind(entity: "Login", label: "owner", weight: 1),
        Kind(entity: "Account", label: "username", weight: 1), Kind(entity: "AllTypes", label: "int64", weight: 3),
    ]

    let backend: ConformanceBackend
    let model: ManagedObjectModel
    var rng: SplitMix64
    /// The next label number.
    var counter = 0
    /// What the run saw, to compare across backends: save outcomes and stored graphs.
    var record: [String] = []
    /// What does not hold on this backend alone.
    var failures: [String] = []

    init(backend: ConformanceBackend, model: ManagedObjectModel, seed: UInt64) {
        self.backend = backend
        self.model = model
        rng = SplitMix64(seed: seed)
    }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
    mutating func pick<T>(_ items: [T]) -> T? { items.isEmpty ? nil : items[int(0...(items.count - 1))] }

    /// Runs `steps` random changes, saving now and then, with a second context changing the
    /// store behind the first's back from time to time.
    mutating func execute(steps: Int) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("objectgraph-graph-differential-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var container = try PersistentContainer(model: model, stores: [backend.makeStore(directory)])
        defer { container.close() }
        var context = Self.workingContext(of: container)
        for step in 0..<steps {
            let roll = int(0...99)
            do {
                switch roll {
                case 0..<24: try context.performAndWait { try insert(in: context) }
                case 24..<81: try context.performAndWait { try change(in: context, roll: roll) }
                case 81..<83: try context.performAndWait { try context.undo() }
                case 83..<84: try context.performAndWait { try context.redo() }
                case 84..<92: try save(context, container: container, step: step)
                case 92..<93:
                    // Unsaved changes are dropped; the saved graph must come back whole.
                    // (A memory store lives as long as its container: it gets a new context only.)
                    if !backend.name.hasPrefix("memory") {
                        container.close()
                        container = try PersistentContainer(model: model, stores: [backend.makeStore(directory)])
                    }
                    context = Self.workingContext(of: container)
                    record.append("step \(step): reopened")
                case 93..<96: try changeInChild(of: context, step: step)
                case 96..<97:
                    context.performAndWait { context.reset() }
                    record.append("step \(step): reset")
                case 97..<98:
                    context.performAndWait { context.refreshAllObjects() }
                    record.append("step \(step): refresh")
                default: try changeElsewhere(container: container, step: step)
                }
            } catch {
                // A refused change is an outcome too: every backend must refuse it alike.
                record.append("step \(step): change \(roll) threw \(Self.kind(of: error))")
            }
        }
        try save(context, container: container, step: steps)
    }

    /// The context the run changes: it merges another context's saves (changeElsewhere) as
    /// an app's would, and records undo (each block one group).
    static func workingContext(of container: PersistentContainer) -> ManagedObjectContext {
        let context = container.newBackgroundContext()
        context.automaticallyMergesChangesFromParent = true
        context.undoStack = ContextUndoStack()
        return context
    }

    /// Saves; on failure records the error's kind and rolls back. After a save that lands,
    /// records the stored graph and checks the saving context sees the same.
    mutating func save(_ context: ManagedObjectContext, container: PersistentContainer, step: Int) throws {
        let outcome: String = context.performAndWait {
            do {
                try context.save()
                return "saved"
            } catch {
                context.rollback()
                return "failed (\(Self.kind(of: error)))"
            }
        }
        record.append("step \(step): save \(outcome)")
        guard outcome == "saved" else { return }
        let fresh = container.newBackgroundContext()
        let (stored, problems) = try fresh.performAndWait { try dump(fresh) }
        let (seen, _) = try context.performAndWait { try dump(context) }
        record.append(contentsOf: stored)
        failures += problems.map { "step \(step): \($0)" }
        if stored != seen {
            let difference = zip(stored, seen).first { $0 != $1 }.map { "stored \($0.0) but the saving context sees \($0.1)" } ?? "\(stored.count) lines stored, \(seen.count) seen"
            failures.append("step \(step): after the save, \(difference)")
        }
    }

    /// The error's type and code, without its message (which names object IDs, and a store
    /// need not number objects as another does).
    static func kind(of error: Error) -> String {
        if let error = error as? ObjectGraphError { return "ObjectGraphError \(error.code)" }
        if let error = error as? ValidationError { return "ValidationError \(error.violations.map { "\($0.code)" }.sorted().joined(separator: ","))" }
        return String(describing: type(of: error))
    }

    // MARK: Choosing objects

    /// The context's objects of `entity` (and its sub-entities when asked), by label.
    func objects(_ entity: String, in context: ManagedObjectContext, subentities: Bool = false) throws -> [ManagedObject] {
        var request = FetchRequest<ManagedObject>(entityName: entity)
        request.includesSubentities = subentities
        return try context.fetch(request).sorted { label(of: $0) < label(of: $1) }
    }

    /// The label of an object (its naming attribute, rendered).
    func label(of object: ManagedObject) -> String {
        let key = Self.kinds.first { $0.entity == object.entity.name }?.label ?? "name"
        return Self.render((try? object.value(forKey: key)) ?? nil)
    }

    /// A live object of one of the run's entities (of those `entity` accepts), chosen at
    /// random among all of them.
    mutating func anyObject(in context: ManagedObjectContext, where entity: (EntityDescription) -> Bool = { _ in true }) throws -> ManagedObject? {
        let kinds = Self.kinds.filter { model.entity(named: $0.entity).map(entity) ?? false }
        return pick(try kinds.flatMap { try objects($0.entity, in: context) })
    }

    /// The candidates for a relationship's destination: every live object of its entity
    /// hierarchy, by label.
    func candidates(for relationship: RelationshipDescription, in context: ManagedObjectContext) throws -> [ManagedObject] {
        try objects(relationship.destinationName, in: context, subentities: true)
    }

    /// Members of a to-many relationship, by label (a set's order differs between runs).
    func members(_ object: ManagedObject, _ key: String) throws -> [ManagedObject] {
        let value = try object.value(forKey: key)
        if let set = value as? Set<ManagedObject> { return set.sorted { label(of: $0) < label(of: $1) } }
        guard let value else { return [] }
        guard let sequence = value as? any Sequence else {
            try check(false, "\(object.entity.name).\(key) is a \(type(of: value))")
            return []
        }
        return sequence.compactMap { $0 as? ManagedObject }
    }
}
