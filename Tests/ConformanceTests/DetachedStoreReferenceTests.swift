import Foundation
import ObjectGraph
import ObjectGraphLMDB
import ObjectGraphSQLite
import Testing

/// Relationships to objects of a store the coordinator does not have (any more), saved while
/// one store is attached.
@Suite("References to objects of stores not attached")
struct DetachedStoreReferenceTests {
    /// Person with a many-to-nil `fans`: adding a member changes no row of the member, so
    /// nothing but the destination check notices where it lives.
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Person") { e in e.attribute("name", .string); e.toMany("fans", "Person") }
            for configuration in ["One", "Two"] { m.configuration(configuration, entities: ["Person"]) }
        }
    }

    static func insert(_ names: [String], _ container: PersistentContainer) throws -> [ObjectID] {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            let people = try names.map { name in
                let person = try context.insertObject(entityName: "Person")
                try person.setValue(name, forKey: "name")
                return person
            }
            try context.save()
            return people.map(\.objectID)
        }
    }

    static func person(_ name: String, _ context: ManagedObjectContext) throws -> ManagedObject {
        try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Person", predicate: try FetchPredicate(format: "name == %@", name))).first)
    }

    /// Every fan list of `container`'s people, by name.
    static func fans(_ container: PersistentContainer) throws -> [String: Set<String>] {
        let reader = container.newBackgroundContext()
        return try reader.performAndWait {
            var result: [String: Set<String>] = [:]
            for person in try reader.fetch(FetchRequest<ManagedObject>(entityName: "Person")) {
                let fans = try #require(try person.value(forKey: "fans") as? Set<ManagedObject>)
                result[try #require(try person.value(forKey: "name") as? String)] = Set(try fans.map { try $0.value(forKey: "name") as? String ?? "?" })
            }
            return result
        }
    }

    /// With the other store removed, the save saw one store and checked no destination: the
    /// SQLite store kept the removed store's p3 as its own p3 (o1's fan became o3).
    @Test func anObjectOfARemovedStoreIsRefusedAsADestination() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("objectgraph-detached-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let one = StoreDescription.sqlite(at: directory.appendingPathComponent("one.sqlite"), configuration: "One")
        let two = StoreDescription.lmdb(at: directory.appendingPathComponent("two.lmdb"), configuration: "Two")
        let alone = try PersistentContainer(model: try Self.model(), stores: [two])
        _ = try Self.insert(["t1", "t2", "t3"], alone)
        alone.close()

        let container = try PersistentContainer(model: try Self.model(), stores: [one, two])
        defer { container.close() }
        _ = try Self.insert(["o1", "o2", "o3"], container)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let t3 = try Self.person("t3", context)
            let o1 = try Self.person("o1", context)
            container.coordinator.removePersistentStore(container.coordinator.persistentStores[1])
            try o1.add(t3, to: "fans")
            let error = #expect(throws: ObjectGraphError.self) { try context.save() }
            #expect(error?.code == .crossStoreRelationship)
            #expect(error?.objectID == o1.objectID && error?.key == "fans")
            #expect(error?.message.contains(t3.objectID.description) == true)
            #expect(context.hasChanges, "the context keeps its changes")
            // Without the refused member the save goes through.
            try o1.setValue(Set<ManagedObject>([try Self.person("o2", context)]), forKey: "fans")
            try context.save()
        }
        #expect(try Self.fans(container) == ["o1": ["o2"], "o2": [], "o3": []])
    }

    /// An ID of another container's store, made an object with `object(with:)` (no store
    /// read): the save stored it as a key of this store.
    @Test func anObjectForAnotherCoordinatorsIDIsRefusedAsADestination() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("objectgraph-detached-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let other = try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: directory.appendingPathComponent("other.sqlite"))])
        defer { other.close() }
        let foreign = try Self.insert(["x1", "x2"], other)
        let container = try PersistentContainer(model: try Self.model(), stores: [.sqlite(at: directory.appendingPathComponent("mine.sqlite"))])
        defer { container.close() }
        _ = try Self.insert(["m1", "m2"], container)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let m1 = try Self.person("m1", context)
            try m1.add(context.object(with: foreign[1]), to: "fans")
            let error = #expect(throws: ObjectGraphError.self) { try context.save() }
            #expect(error?.code == .crossStoreRelationship)
            #expect(error?.objectID == m1.objectID && error?.key == "fans")
        }
        #expect(try Self.fans(container) == ["m1": [], "m2": []])
    }
}
