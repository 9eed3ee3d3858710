import Foundation
import ObjectGraph
@testable import ObjectGraphSQLite
import Testing

/// The SQL compiled for a fetch is kept per shape and reused with each request's values (see
/// `SQLiteQueryShape`). Each family below asks requests of one shape whose values fall in
/// different classes — a value or `nil`, an ID of the table's root entity or of its
/// sub-entity, an unsaved or foreign ID, lists of other lengths — and checks both the answers
/// and how many shapes the store compiled: a value class the shape ignored would reuse SQL
/// that answers wrongly. (Debug builds also compile every cached request afresh and compare.)
@Suite("SQLite query cache")
struct SQLiteQueryCacheTests {
    struct Fixture {
        let container: PersistentContainer
        let store: SQLiteStore
        let items: EntityDescription
        /// Items by label: a (rank 1, owner), b (no label, rank 2, admin), c (rank nil, no
        /// owner), d (rank 4, owner).
        let item: [String: ObjectID]
        let owner: ObjectID
        let admin: ObjectID

        /// The labels (or "b" for the unlabelled item) of the items `predicate` selects, in
        /// key order, and the number of shapes compiled so far.
        func labels(_ predicate: FetchPredicate, sortKeys: [SortKey] = [], offset: Int = 0, limit: Int? = nil) throws -> [String] {
            let answer = try store.fetch(StoreFetchRequest(entity: items, predicate: predicate, sortKeys: sortKeys, offset: offset, limit: limit))
            #expect(answer.applied == .all, "\(predicate) runs in SQL")
            let names = Dictionary(uniqueKeysWithValues: item.map { ($0.value, $0.key) })
            return answer.objectIDs.map { names[$0] ?? "?" }
        }

        func count(_ predicate: FetchPredicate) throws -> Int {
            try store.fetch(StoreFetchRequest(entity: items, predicate: predicate, resultType: .count)).count
        }

        var shapes: Int { store.queryCache.withLock { $0.count } }
    }

    static func fixture() throws -> Fixture {
        let model = try ManagedObjectModel { m in
            m.entity("Owner") { e in
                e.attribute("name", .string)
                e.toMany("items", "Item", inverse: "owner")
            }
            m.entity("Admin", parent: "Owner") { _ in }
            m.entity("Item") { e in
                e.attribute("label", .string, optional: true)
                e.attribute("rank", .integer64, optional: true)
                e.toOne("owner", "Owner", inverse: "items")
            }
        }
        let container = try PersistentContainer(model: model, stores: [.sqlite(at: try SQLiteStoreTests.temporaryFile())])
        let context = container.newBackgroundContext()
        let (items, owner, admin) = try context.performAndWait {
            let owner = try context.insertObject(entityName: "Owner")
            try owner.setValue("o", forKey: "name")
            let admin = try context.insertObject(entityName: "Admin")
            try admin.setValue("a", forKey: "name")
            var items: [String: ManagedObject] = [:]
            for (label, rank, holder) in [("a", 1, owner), ("b", 2, admin), ("c", nil, nil), ("d", 4, owner)] as [(String, Int?, ManagedObject?)] {
                let item = try context.insertObject(entityName: "Item")
                try item.setValue(label == "b" ? nil : label, forKey: "label")
                try item.setValue(rank, forKey: "rank")
                try item.setValue(holder, forKey: "owner")
                items[label] = item
            }
            try context.save()
            return (items.mapValues(\.objectID), owner.objectID, admin.objectID)
        }
        let store = try #require(container.coordinator.persistentStores.first as? SQLiteStore)
        return Fixture(container: container, store: store, items: try model.requireEntity("Item"), item: items, owner: owner, admin: admin)
    }

    @Test("an attribute compared with values and with nil")
    func attributeValues() throws {
        let f = try Self.fixture()
        let before = f.shapes
        #expect(try f.labels(.key("label") == "a") == ["a"])
        #expect(try f.labels(.key("label") == "c") == ["c"])
        #expect(try f.labels(.key("label") == "zz") == [])
        #expect(f.shapes == before + 1, "three values, one shape")
        #expect(try f.labels(.key("label") == String?.none) == ["b"], "nil compiles to IS NULL, not to a reused IS ?")
        #expect(try f.labels(.key("label") != String?.none) == ["a", "c", "d"])
        #expect(try f.labels(.key("label") != "a") == ["b", "c", "d"], "a missing label differs from every value")
        #expect(f.shapes == before + 4)
    }

    @Test("a to-one compared with IDs of the root, of a sub-entity, unsaved, foreign and nil")
    func relationshipIDs() throws {
        let f = try Self.fixture()
        #expect(try f.labels(.key("owner") == f.owner) == ["a", "d"])
        #expect(try f.labels(.key("owner") == f.admin) == ["b"])
        #expect(try f.count(.key("owner") == f.owner) == 2)
        #expect(try f.count(.key("owner") == f.admin) == 1)
        let before = f.shapes
        // Another owner of the same entity reuses the SQL (none holds items).
        let context = f.container.newBackgroundContext()
        let other = try context.performAndWait {
            let other = try context.insertObject(entityName: "Owner")
            try other.setValue("p", forKey: "name")
            try context.save()
            return other.objectID
        }
        let scratch = f.container.newBackgroundContext()
        let unsaved = try scratch.performAndWait { try scratch.insertObject(entityName: "Owner").objectID }
        #expect(try f.labels(.key("owner") == other) == [])
        #expect(try f.labels(.key("owner") == f.owner) == ["a", "d"])
        #expect(f.shapes == before, "same entity, same store: the cached SQL")
        #expect(try f.labels(.key("owner") == unsaved).isEmpty, "an ID without a primary key matches no row")
        let foreign = ObjectID(entityName: "Owner", storeIdentifier: "another-store", primaryKey: f.owner.primaryKey ?? 1)
        #expect(try f.labels(.key("owner") == foreign).isEmpty, "the same key in another store matches no row")
        let stranger = ObjectID(entityName: "Item", storeIdentifier: f.store.identifier, primaryKey: f.owner.primaryKey ?? 1)
        #expect(try f.labels(.key("owner") == stranger).isEmpty, "an ID of an entity outside the relationship's hierarchy matches no row")
        #expect(try f.labels(.key("owner") == ObjectID?.none) == ["c"])
        #expect(try f.labels(.key("owner") != f.owner) == ["b", "c"])
    }

    @Test("IN and BETWEEN with other lengths, values and nil")
    func listsAndRanges() throws {
        let f = try Self.fixture()
        #expect(try f.labels(.key("rank").isIn([1, 4])) == ["a", "d"])
        let before = f.shapes
        #expect(try f.labels(.key("rank").isIn([1, 2])) == ["a", "b"])
        #expect(f.shapes == before, "same length: the cached SQL")
        #expect(try f.labels(.key("rank").isIn([2])) == ["b"])
        #expect(try f.labels(.key("rank").isIn([Int?.none, 4])) == ["c", "d"], "nil in the list matches a missing rank")
        #expect(try f.labels(.key("rank").isIn([Int?.none, Int?.none])) == ["c"])
        #expect(try f.labels(.key("rank").between(1, 2)) == ["a", "b"])
        #expect(try f.labels(.key("rank").between(2, 4)) == ["b", "d"])
        #expect(try f.labels(.key("rank").between(Int?.none, 4)) == [], "a range with a nil end holds nothing")
    }

    @Test("conjunctions number their values in order; limit and offset are bound per request")
    func orderAndRange() throws {
        let f = try Self.fixture()
        let byRank = [SortKey("rank", ascending: false)]
        #expect(try f.labels(.key("rank") >= 1 && .key("label") != "d", sortKeys: byRank) == ["b", "a"])
        #expect(try f.labels(.key("rank") >= 3 && .key("label") != "a", sortKeys: byRank) == ["d"])
        #expect(try f.labels(.key("rank") >= 0 && .key("label") != "x", sortKeys: byRank, offset: 1, limit: 1) == ["b"])
        #expect(try f.labels(.key("rank") >= 0 && .key("label") != "x", sortKeys: byRank, offset: 0, limit: 2) == ["d", "b"])
        #expect(try f.labels(.key("rank") >= 0 && .key("label") != "x", sortKeys: byRank, offset: 2, limit: 5) == ["a"])
        let this = FetchPredicate.comparison(PredicateComparison(.evaluatedObject, .equal, .object(f.item["a"]!)))
        let that = FetchPredicate.comparison(PredicateComparison(.evaluatedObject, .equal, .object(f.item["d"]!)))
        #expect(try f.labels(this) == ["a"])
        #expect(try f.labels(that) == ["d"], "SELF == another object: the same SQL with its key")
    }

    @Test("the cache stays bounded: past its capacity it starts over, and answers stay right")
    func bounded() throws {
        let f = try Self.fixture()
        let capacity = SQLiteStore.queryCacheCapacity
        // Lists of every length make as many shapes; each list holds 1 and 4, and fillers.
        for length in 2...(capacity + 40) {
            let values = [1, 4] + Array(repeating: 1000, count: length - 2)
            #expect(try f.labels(.key("rank").isIn(values)) == ["a", "d"], "a list of \(length)")
            #expect(f.shapes <= capacity)
        }
        #expect(try f.labels(.key("rank").isIn([2, 1000])) == ["b"], "a shape compiled before the cache started over")
    }
}

