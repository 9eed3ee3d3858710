import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Testing

/// A subclass that overrides the required initializer, as Core Data subclasses override
/// `init(entity:insertInto:)`; its override is written without the base class's `__shared`
/// on the context, as users write it.
final class Stamp: ManagedObject {
    @Attribute var label: String
    /// How this instance was made: by the override, with or without a context.
    private(set) var madeWithContext: Bool?

    required init(entity: EntityDescription, insertInto context: ManagedObjectContext?) {
        super.init(entity: entity, insertInto: context)
        madeWithContext = context != nil
    }
}

/// Every way an object is made (inserted by the app, created as a fault by a fetch) goes
/// through the required initializer, overrides included.
@Suite("Object initializers")
struct InitializerTests {
    static func build(_ m: ModelBuilder) {
        m.entity("Stamp", as: Stamp.self) { e in
            e.attribute("label", .string)
        }
    }

    @Test("an override of init(entity:insertInto:) runs for inserted objects and for faults")
    func overridingTheRequiredInitializer() throws {
        let (container, context) = try makeContext(Self.build)
        let id = try context.performAndWait {
            let stamp = Stamp(context: context)
            #expect(stamp.madeWithContext == true, "init(context:) reaches the override with the context")
            #expect(stamp.isInserted)
            #expect(stamp.managedObjectContext === context)
            stamp.label = "first"
            // Many objects through the override: an override that took its context with the
            // wrong ownership released it once per object, freeing it while in use (a crash
            // here, not an expectation).
            for number in 1...50 {
                Stamp(context: context).label = "extra \(number)"
            }
            try context.save()
            #expect(try context.count(for: FetchRequest<Stamp>()) == 51)
            return stamp.objectID
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let fetched = try reader.fetch(FetchRequest<Stamp>(predicate: .key("label") == "first"))
            #expect(fetched.count == 1)
            let stamp = try #require(fetched.first)
            #expect(stamp.objectID == id)
            #expect(stamp.madeWithContext == false, "a fault is made through the override, without a context")
            #expect(stamp.isFault)
            #expect(stamp.label == "first")
            #expect(stamp.managedObjectContext === reader)
        }
    }
}
