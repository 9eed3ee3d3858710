import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Testing

/// Typed accessors of an inaccessible fault its context deleted (see
/// `ManagedObjectContext.shouldDeleteInaccessibleFaults`): every non-optional type reads a value
/// instead of stopping the process.
@Suite struct InaccessibleFaultAccessorTests {
    struct Shade: TransformableValue, Equatable {
        var hue: Double
        var name: String
        var source: URL
    }

    final class Thing: ManagedObject {
        @Attribute var link: URL
        @Attribute var shade: Shade
        @Attribute var when: Date
        @Attribute var amount: Decimal
        @Attribute var token: UUID
        @Attribute var blob: Data
        @Attribute var flag: Bool
        @Attribute var ratio: Float
        @Attribute var count: Int32
    }

    @Test("non-optional attributes of every type read empty values on an inaccessible fault")
    func everyTypeReadsEmpty() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Thing", as: Thing.self) { e in
                e.attribute("link", .uri)
                e.transformable("shade", Shade.self, optional: false)
                e.attribute("when", .date)
                e.attribute("amount", .decimal)
                e.attribute("token", .uuid)
                e.attribute("blob", .binaryData)
                e.attribute("flag", .boolean)
                e.attribute("ratio", .float)
                e.attribute("count", .integer32)
            }
        }
        let container = try PersistentContainer(model: model, stores: [.inMemory()])
        let setup = container.newBackgroundContext()
        let id = try setup.performAndWait {
            let thing = Thing(context: setup)
            thing.link = URL(string: "https://example.org/a")!
            thing.shade = Shade(hue: 1, name: "red", source: URL(string: "https://example.org/red")!)
            thing.when = Date(timeIntervalSince1970: 1_000)
            thing.amount = 3
            thing.token = UUID()
            thing.blob = Data([1])
            thing.flag = true
            thing.ratio = 1
            thing.count = 2
            try setup.save()
            return thing.objectID
        }
        let context = container.newBackgroundContext()
        let thing = context.performAndWait { context.object(with: id) as! Thing }
        try setup.performAndWait {
            setup.delete(try setup.existingObject(with: id))
            try setup.save()
        }
        try context.performAndWait {
            // The URI was read first: it stopped the process (nil has no URL to convert to).
            #expect(thing.link == URL(fileURLWithPath: "/"))
            #expect(thing.isDeleted)
            #expect(thing.shade.name == "" && thing.shade.hue == 0)
            #expect(thing.when == Date(timeIntervalSinceReferenceDate: 0))
            #expect(thing.amount == 0 && thing.blob.isEmpty && !thing.flag && thing.ratio == 0 && thing.count == 0)
            try context.save()
            #expect(!context.hasChanges)
        }
    }
}
