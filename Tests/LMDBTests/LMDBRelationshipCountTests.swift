import Foundation
import ObjectGraph
import ObjectGraphInMemory
import ObjectGraphLMDB
import Testing

/// `count(for: toOne == X)` is answered from the members database of the to-one's inverse
/// without reading a row, and looks the owner up only when its members cannot prove it exists.
/// Each count must still equal the in-memory store's, which evaluates every row — including
/// owners with no members, owners of a sub-entity, and deleted owners that no-action to-ones
/// still name (whose members are gone with them).
@Suite("LMDB relationship counts")
struct LMDBRelationshipCountTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            // Alone in its table: members prove their owner.
            m.entity("Box") { e in
                e.attribute("name", .string)
                e.toMany("items", "Item", inverse: "box", deleteRule: .noAction)
            }
            m.entity("Item") { e in
                e.attribute("n", .integer64)
                e.toOne("box", "Box", inverse: "items")
                e.toOne("crate", "Crate", inverse: "parts")
            }
            // A table of two entities: the owner is always looked up.
            m.entity("Crate") { e in
                e.attribute("name", .string)
                e.toMany("parts", "Item", inverse: "crate", deleteRule: .noAction)
            }
            m.entity("SpecialCrate", parent: "Crate") { e in e.attribute("extra", .integer16, optional: true) }
        }
    }

    /// Boxes and crates with 0, 1, 3, … items; then one box and one crate with items are
    /// deleted (their items still name them) and saved. Returns every owner's ID, by name.
    static func fill(_ context: ManagedObjectContext) throws -> [String: ObjectID] {
        var owners: [String: ManagedObject] = [:]
        for index in 0..<4 {
            let box = try context.insertObject(entityName: "Box")
            try box.setValue("box\(index)", forKey: "name")
            owners["box\(index)"] = box
            let crate = try context.insertObject(entityName: index % 2 == 0 ? "Crate" : "SpecialCrate")
            try crate.setValue("crate\(index)", forKey: "name")
            owners["crate\(index)"] = crate
            for n in 0..<(index * 2 + (index == 0 ? 0 : 1)) {
                let item = try context.insertObject(entityName: "Item")
                try item.setValue(Int64(n), forKey: "n")
                try item.setValue(box, forKey: "box")
                try item.setValue(n % 2 == 0 ? crate : nil, forKey: "crate")
            }
        }
        try context.save()
        let ids = owners.mapValues(\.objectID)
        context.delete(owners["box2"]!)
        context.delete(owners["crate3"]!)
        try context.save()
        return ids
    }

    @Test("counts of toOne == X equal the in-memory store's, for present, empty, sub-entity and deleted owners")
    func countsMatchScan() throws {
        let url = try LMDBFixture.temporaryFile()
        let lmdb = try PersistentContainer(model: try Self.model(), stores: [.lmdb(at: url)])
        let memory = try PersistentContainer(model: try Self.model(), stores: [.inMemory()])
        defer {
            lmdb.close()
            memory.close()
        }
        let contexts = [lmdb.newBackgroundContext(), memory.newBackgroundContext()]
        let ids = try contexts.map { context in try context.performAndWait { try Self.fill(context) } }
        var compared = 0
        for name in ids[0].keys.sorted() {
            let key = name.hasPrefix("box") ? "box" : "crate"
            let counts = try zip(contexts, ids).map { context, ids in
                try context.performAndWait {
                    try context.count(for: FetchRequest<ManagedObject>(entityName: "Item", predicate: .keyPath(key) == ids[name]!))
                }
            }
            #expect(counts[0] == counts[1], "items with \(key) == \(name): LMDB \(counts[0]), in-memory \(counts[1])")
            compared += 1
        }
        // The deleted owners' items still name them: the members database, emptied with the
        // owner, must not be taken for the answer.
        let deletedBox = try contexts[0].performAndWait {
            try contexts[0].count(for: FetchRequest<ManagedObject>(entityName: "Item", predicate: .keyPath("box") == ids[0]["box2"]!))
        }
        #expect(deletedBox == 5)
        #expect(compared == 8)
    }

    @Test("the store counts toOne == X itself from the members, and declines an owner that is gone")
    func storeCountsRowsItself() throws {
        let url = try LMDBFixture.temporaryFile()
        let model = try Self.model()
        let container = try PersistentContainer(model: model, stores: [.lmdb(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        let ids = try context.performAndWait { try Self.fill(context) }
        let store = container.coordinator.persistentStores[0]
        let item = try model.requireEntity("Item")
        let box = try #require(item.relationship(named: "box"))
        func count(_ owner: String) throws -> Int? {
            try store.countRows(of: item, includesSubentities: true, where: box, is: ids[owner]!)
        }
        #expect(try count("box3") == 7)
        #expect(try count("box1") == 3)
        #expect(try count("box0") == 0, "an owner without members, looked up")
        // Deleted: its members went with it while its items still name it, so only a fetch
        // can count them (the context then asks one, see countsMatchScan).
        #expect(try count("box2") == nil)
    }
}
