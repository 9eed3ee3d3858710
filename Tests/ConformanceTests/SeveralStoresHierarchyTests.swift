import Foundation
import ObjectGraph
import ObjectGraphInMemory
import ObjectGraphLMDB
import ObjectGraphSQLite
import Testing

/// An entity hierarchy whose sub-entities live in different stores of one coordinator.
@Suite("An entity hierarchy spread over several stores")
struct SeveralStoresHierarchyTests {
    /// Abstract Animal; Dog and Cat in their own configurations, Zoo holding the whole hierarchy.
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Animal", abstract: true) { e in
                e.attribute("name", .string)
                e.attribute("legs", .integer64, optional: true)
            }
            m.entity("Dog", parent: "Animal") { e in e.attribute("breed", .string, optional: true) }
            m.entity("Cat", parent: "Animal") { e in e.attribute("indoor", .boolean, optional: true) }
            m.configuration("Kennel", entities: ["Dog"])
            m.configuration("Cattery", entities: ["Cat"])
            m.configuration("Zoo", entities: ["Animal"])
        }
    }

    static func names(_ context: ManagedObjectContext, _ request: FetchRequest<ManagedObject>) throws -> [String] {
        try context.fetch(request).map { try $0.value(forKey: "name") as? String ?? "?" }
    }

    /// Checks every read of Animal against dogs d1 d3 d5 and cats c2 c4 (a cat with 3 legs).
    static func expectAllAnimals(_ container: PersistentContainer) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            var sorted = FetchRequest<ManagedObject>(entityName: "Animal", sortKeys: [SortKey("name")])
            #expect(try names(context, sorted) == ["c2", "c4", "d1", "d3", "d5"])
            sorted.fetchOffset = 1
            sorted.fetchLimit = 3
            #expect(try names(context, sorted) == ["c4", "d1", "d3"])
            #expect(try context.count(for: sorted) == 3)
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Animal")) == 5)
            let threeLegged = FetchRequest<ManagedObject>(entityName: "Animal", predicate: try FetchPredicate(format: "legs == 3"))
            #expect(try names(context, threeLegged) == ["c4"])
            #expect(try context.count(for: threeLegged) == 1)
            var totals = FetchRequest<ManagedObject>(entityName: "Animal")
            totals.propertiesToFetch = [.count(as: "n"), .sum("legs", as: "legs")]
            let row = try #require(try context.fetchDictionaries(totals).first)
            #expect(row["n"] == .integer(5))
            #expect(row["legs"] == .integer(19))
            #expect(try names(context, FetchRequest<ManagedObject>(entityName: "Dog", sortKeys: [SortKey("name")])) == ["d1", "d3", "d5"])
            var onlyAnimals = FetchRequest<ManagedObject>(entityName: "Animal")
            onlyAnimals.includesSubentities = false
            #expect(try context.fetch(onlyAnimals).isEmpty, "an abstract entity has no objects of its own")
        }
    }

    static func insertAnimals(_ container: PersistentContainer) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for name in ["d1", "d3", "d5"] {
                let dog = try context.insertObject(entityName: "Dog")
                try dog.setValue(name, forKey: "name")
                try dog.setValue(Int64(4), forKey: "legs")
            }
            for (name, legs) in [("c2", 4), ("c4", 3)] {
                let cat = try context.insertObject(entityName: "Cat")
                try cat.setValue(name, forKey: "name")
                try cat.setValue(Int64(legs), forKey: "legs")
            }
            try context.save()
        }
    }

    /// No store holds Animal: fetching it threw `noStore` instead of reading both stores.
    @Test func fetchingAnAbstractParentReadsTheStoresOfItsSubentities() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("objectgraph-hierarchy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = try PersistentContainer(model: try Self.model(), stores: [
            .sqlite(at: directory.appendingPathComponent("kennel.sqlite"), configuration: "Kennel"),
            .lmdb(at: directory.appendingPathComponent("cattery.lmdb"), configuration: "Cattery"),
        ])
        defer { container.close() }
        try Self.insertAnimals(container)
        try Self.expectAllAnimals(container)
    }

    /// One store holds Animal (and so every animal), another only Cat, where the cats go: the
    /// fetches and counts read the first store only and missed the cats.
    @Test func fetchingAParentAlsoReadsAStoreHoldingOnlySomeOfItsSubentities() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("objectgraph-hierarchy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = try PersistentContainer(model: try Self.model(), stores: [
            .lmdb(at: directory.appendingPathComponent("cattery.lmdb"), configuration: "Cattery"),
            .inMemory(configuration: "Zoo"),
        ])
        defer { container.close() }
        try Self.insertAnimals(container)
        let cattery = container.coordinator.persistentStores[0].identifier
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let cats = try context.fetch(FetchRequest<ManagedObject>(entityName: "Cat"))
            #expect(cats.count == 2 && cats.allSatisfy { $0.objectID.storeIdentifier == cattery }, "new cats go to the first store holding Cat")
        }
        try Self.expectAllAnimals(container)
    }
}
