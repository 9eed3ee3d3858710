import Foundation
@testable import ObjectGraph
import ObjectGraphInMemory
import Testing

/// A save's objects come out of sets and dictionaries in hash order; the change set lists them
/// in a stable order, whichever way it is reached.
@Suite("Save order")
struct SaveOrderTests {
    @Test("inserted objects in creation order, closely or sparsely numbered, and permanent IDs first by key")
    func saveOrderIsStable() throws {
        let model = try ManagedObjectModel { m in m.entity("Note") { e in e.attribute("n", .integer64) } }
        let entity = try model.requireEntity("Note")
        let container = try PersistentContainer(model: model, stores: [.inMemory()])
        let context = container.newBackgroundContext()
        // Closely numbered temporary IDs, shuffled.
        let created = (0..<500).map { _ in ManagedObject(entity: entity, insertInto: nil) }
        var shuffled = created.map { (key: $0.objectID, value: $0) }
        var random = SystemRandomNumberGenerator()
        shuffled.shuffle(using: &random)
        #expect(context.inSaveOrder(shuffled).map(\.objectID) == created.map(\.objectID))
        // Temporary IDs spread far apart (other contexts created objects in between) are sorted.
        let sparse = stride(from: 0, to: created.count, by: 5).map { created[$0] }
        _ = (0..<5_000).map { _ in ManagedObject(entity: entity, insertInto: nil) }
        let late = (0..<100).map { _ in ManagedObject(entity: entity, insertInto: nil) }
        let mixed = (sparse + late).shuffled()
        #expect(context.inSaveOrder(mixed.map { (key: $0.objectID, value: $0) }).map(\.objectID) == (sparse + late).map(\.objectID))
        // Permanent IDs come first, by key.
        let saved = (1...80).map { key -> ManagedObject in
            let object = ManagedObject(entity: entity, insertInto: nil)
            object.objectID = ObjectID(entityName: "Note", storeIdentifier: "S", primaryKey: Int64(81 - key))
            return object
        }
        let order = context.inSaveOrder((late + saved).shuffled().map { (key: $0.objectID, value: $0) }).map(\.objectID)
        #expect(order == saved.reversed().map(\.objectID) + late.map(\.objectID))
    }
}
