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

    struct Reading: TransformableValue, Equatable {
        var value: Double
    }

    final class Gauge: ManagedObject {
        @Attribute var reading: Reading?
    }

    @Test("non-finite numbers in a transformable round-trip, through the typed property and key-value access")
    func nonFiniteNumbersRoundTrip() throws {
        // (JSON has no NaN: the typed property stored nil, losing the value it held before.)
        let model = try ManagedObjectModel { m in
            m.entity("Gauge", as: Gauge.self) { e in e.transformable("reading", Reading.self) }
        }
        let container = try PersistentContainer(model: model, stores: [.inMemory()])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let gauge = Gauge(context: context)
            gauge.reading = Reading(value: 1)
            gauge.reading = Reading(value: .nan)
            #expect(gauge.reading?.value.isNaN == true)
            try context.save()
            let other = container.newBackgroundContext()
            let stored = try other.performAndWait { (try other.existingObject(with: gauge.objectID) as! Gauge).reading }
            #expect(stored?.value.isNaN == true)
            try gauge.setValue(Reading(value: -.infinity), forKey: "reading")
            #expect((try gauge.value(forKey: "reading") as? Reading) == Reading(value: -.infinity))
            gauge.reading = Reading(value: .infinity)
            #expect(gauge.reading == Reading(value: .infinity))
        }
    }
}
