import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Testing

@Suite("Batched fetching")
struct BatchedFetchTests {
    static func populated(_ count: Int) throws -> (PersistentContainer, ManagedObjectContext) {
        let (container, context) = try makeContext { m in
            m.entity("Row") { e in e.attribute("n", .integer64) }
        }
        try context.performAndWait {
            for n in 0..<count {
                let row = try context.insertObject(entityName: "Row")
                try row.setValue(n, forKey: "n")
            }
            try context.save()
        }
        container.coordinator.rowCache.removeAll()
        return (container, container.newBackgroundContext())
    }

    @Test("fetchBatched loads one batch per round trip, in order, keeping memory bounded")
    func batchedIteration() throws {
        let (_, context) = try Self.populated(1_050)
        try context.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Row", sortKeys: [SortKey("n", ascending: false)])
            request.fetchBatchSize = 100
            let results = try context.fetchBatched(request)
            #expect(results.count == 1_050)
            #expect(context.statistics.storeRoundTrips == 1, "only IDs so far")
            var expected: Int64 = 1_049
            var maximumRegistered = 0
            for (index, row) in results.enumerated() {
                #expect(!row.isFault, "elements arrive loaded")
                #expect(try row.value(forKey: "n") as? Int64 == expected)
                expected -= 1
                if index % 100 == 99 { maximumRegistered = max(maximumRegistered, context.registeredObjects.count) }
            }
            #expect(context.statistics.storeRoundTrips == 1 + 11, "one round trip per batch of 100")
            #expect(maximumRegistered <= 300, "objects of released batches go away (saw \(maximumRegistered))")
            let error = #expect(throws: ObjectGraphError.self) { _ = try results.batch(at: 11) }
            #expect(error?.code == .invalidFetch)
        }
    }

    @Test("batched iteration keeps its rows out of the row cache, but uses rows already cached")
    func batchedIterationBypassesRowCache() throws {
        let (container, context) = try Self.populated(1_050)
        try context.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Row", sortKeys: [SortKey("n")])
            request.fetchBatchSize = 100
            let results = try context.fetchBatched(request)
            var sum: Int64 = 0
            for row in results { sum += try row.value(forKey: "n") as! Int64 }
            #expect(sum == 1_049 * 1_050 / 2)
            #expect(container.coordinator.rowCache.count == 0, "a scan does not fill the shared cache")
        }
        let other = container.newBackgroundContext()
        try other.performAndWait {
            var loaded = FetchRequest<ManagedObject>(entityName: "Row", predicate: .key("n") < 100)
            loaded.returnsObjectsAsFaults = false
            let fetched = try other.fetch(loaded)
            #expect(fetched.count == 100)
            #expect(container.coordinator.rowCache.count == 100, "fetched rows are cached as before")
        }
        try context.performAndWait {
            context.reset()
            context.resetStatistics()
            var request = FetchRequest<ManagedObject>(entityName: "Row", sortKeys: [SortKey("n")])
            request.fetchBatchSize = 100
            let results = try context.fetchBatched(request)
            _ = try results[0].value(forKey: "n")
            #expect(context.statistics.rowCacheHits == 100, "the first batch comes from the cache")
            #expect(context.statistics.storeRoundTrips == 1, "only the ID fetch reached the store")
        }
    }

    @Test("fetch with a batch size fires a whole batch when one of its faults is touched")
    func batchFaulting() throws {
        let (_, context) = try Self.populated(25)
        try context.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Row", sortKeys: [SortKey("n")])
            request.fetchBatchSize = 10
            let rows = try context.fetch(request)
            let faults = rows.filter(\.isFault).count
            #expect(faults == 25)
            context.resetStatistics()
            _ = try rows[3].value(forKey: "n")
            #expect(context.statistics.storeRoundTrips == 1)
            let loaded = rows.map { !$0.isFault }
            #expect(loaded == Array(repeating: true, count: 10) + Array(repeating: false, count: 15), "only the first batch is loaded")
            _ = try rows[24].value(forKey: "n")
            #expect(context.statistics.storeRoundTrips == 2)
            let after = rows.map { !$0.isFault }
            #expect(after == Array(repeating: true, count: 10) + Array(repeating: false, count: 10) + Array(repeating: true, count: 5))
        }
    }

    @Test("batched results reflect unsaved changes like fetch does")
    func batchedPendingChanges() throws {
        let (_, context) = try Self.populated(5)
        try context.performAndWait {
            let extra = try context.insertObject(entityName: "Row")
            try extra.setValue(-1, forKey: "n")
            var request = FetchRequest<ManagedObject>(entityName: "Row", sortKeys: [SortKey("n")])
            request.fetchBatchSize = 2
            let results = try context.fetchBatched(request)
            #expect(results.count == 6)
            #expect(results[0] === extra)
            #expect(try results.map { try $0.value(forKey: "n") as! Int64 } == [-1, 0, 1, 2, 3, 4])
        }
    }
}
