import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Testing

/// A transformable whose value type is `Data` stores its value's encoding, like any other type.
@Suite struct TransformableDataTests {
    @Test("a transformable of Data round-trips through key-value access")
    func dataTransformableRoundTrips() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Blob") { e in e.transformable("payload", Data.self) }
        }
        let container = try PersistentContainer(model: model, stores: [.inMemory()])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let blob = try context.insertObject(entityName: "Blob")
            try blob.setValue(Data([1, 2, 3]), forKey: "payload")
            #expect(try blob.value(forKey: "payload") as? Data == Data([1, 2, 3]))
            try context.save()
            let other = container.newBackgroundContext()
            let stored = try other.performAndWait { try other.existingObject(with: blob.objectID).value(forKey: "payload") as? Data }
            #expect(stored == Data([1, 2, 3]))
        }
    }
}
