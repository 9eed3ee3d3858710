import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Synchronization
import Testing

enum KeeperPetFixture {
    /// Keepers cascade to their pets; pets nullify their owner.
    static func model() throws -> ManagedObjectModel {
        try ConcurrencyFixture.model(cascade: true)
    }

    static func container() throws -> PersistentContainer {
        try PersistentContainer(model: model(), stores: [.inMemory()])
    }

    /// A saved keeper with two pets; returns the keeper's and pets' IDs.
    static func seed(_ container: PersistentContainer) throws -> (keeper: ObjectID, pets: [ObjectID]) {
        let context = container.newBackgroundContext(name: "seed")
        return try context.performAndWait {
            let keeper = try context.insert(Keeper.self)
            keeper.name = "K"
            var pets: [Pet] = []
            for name in ["a", "b"] {
                let pet = try context.insert(Pet.self)
                pet.name = name
                pet.owner = keeper
                pets.append(pet)
            }
            try context.save()
            return (keeper.objectID, pets.map(\.objectID))
        }
    }

    /// Saves the deletion of `id` through a new context and returns the save's payload.
    static func deleteElsewhere(_ container: PersistentContainer, _ id: ObjectID) throws -> ContextDidSave {
        let other = container.newBackgroundContext(name: "other")
        let payload = Box<ContextDidSave?>(nil)
        let token = NotificationCenter.default.addObserver(forName: .objectGraphContextDidSave, object: other, queue: nil) { note in
            let changes = note.userInfo?[ContextDidSave.key] as? ContextDidSave
            payload.withLock { $0 = changes }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try other.performAndWait {
            other.delete(try other.existingObject(with: id))
            try other.save()
        }
        return try #require(payload.withLock { $0 })
    }
}

/// Records objects-did-change and did-save notifications of `context`.
final class Recorder: @unchecked Sendable {
    let log = Box<[String]>([])
    var tokens: [any NSObjectProtocol] = []
    init(_ context: ManagedObjectContext, label: String) {
        tokens.append(NotificationCenter.default.addObserver(forName: .objectGraphObjectsDidChange, object: context, queue: nil) { [log] note in
            guard let c = note.userInfo?[ObjectsDidChange.key] as? ObjectsDidChange else { return log.withLock { $0.append("\(label) change malformed") } }
            func ids(_ s: Set<ManagedObject>) -> String { s.map { $0.objectID.description }.sorted().joined(separator: ",") }
            let text = "\(label) change ins[\(ids(c.inserted))] upd[\(ids(c.updated))] del[\(ids(c.deleted))] ref[\(ids(c.refreshed))] inv[\(ids(c.invalidated))]"
            log.withLock { $0.append(text) }
        })
        tokens.append(NotificationCenter.default.addObserver(forName: .objectGraphContextDidSave, object: context, queue: nil) { [log] note in
            guard let c = note.userInfo?[ContextDidSave.key] as? ContextDidSave else { return log.withLock { $0.append("\(label) save malformed") } }
            func ids(_ s: [ObjectID]) -> String { s.map(\.description).sorted().joined(separator: ",") }
            let text = "\(label) save ins[\(ids(c.insertedIDs))] upd[\(ids(c.updatedIDs))] del[\(ids(c.deletedIDs))]"
            log.withLock { $0.append(text) }
        })
    }
    func take() -> [String] { log.withLock { let l = $0; $0 = []; return l } }
    deinit { for t in tokens { NotificationCenter.default.removeObserver(t) } }
}
