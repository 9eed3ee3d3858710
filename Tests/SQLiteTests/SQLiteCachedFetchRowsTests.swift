import Foundation
import ObjectGraph
import ObjectGraphSQLite
import Testing

/// A fetch whose rows the coordinator's row cache keeps too (a batch of more than a few rows and
/// at most a tenth of the cache) installs copies of them in its objects instead of moving them
/// out: the cached rows must stay whole for the contexts that fault from the cache later, and
/// the fetched objects must hold the same values.
@Suite("SQLite fetched rows kept by the row cache")
struct SQLiteCachedFetchRowsTests {
    @Test("objects fetched with values and a later context faulting from the cache both see every row's values")
    func cachedRowsStayWhole() throws {
        let (container, _, _) = try SQLitePushdownTests.store()
        let writer = container.newBackgroundContext()
        let texts = (0..<200).map { "message \($0) " + String(repeating: "·", count: $0 % 7) }
        try writer.performAndWait {
            let chat = try writer.insertObject(entityName: "Chat")
            try chat.setValue("many", forKey: "title")
            for text in texts {
                let message = try writer.insertObject(entityName: "Message")
                try message.setValue(text, forKey: "text")
                try message.setValue(chat, forKey: "chat")
            }
            try writer.save()
        }
        container.coordinator.rowCache.removeAll()
        let first = container.newBackgroundContext()
        let fetched: [ObjectID] = try first.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Message", predicate: .key("chat.title") == "many", sortKeys: [SortKey("text")])
            request.returnsObjectsAsFaults = false
            let messages = try first.fetch(request)
            #expect(messages.count == texts.count)
            #expect(messages.allSatisfy { !$0.isFault })
            #expect(try messages.map { try $0.value(forKey: "text") as? String } == texts.sorted().map { Optional($0) })
            return messages.map(\.objectID)
        }
        #expect(container.coordinator.rowCache.count >= texts.count, "the fetch's rows were kept by the cache")
        let second = container.newBackgroundContext()
        try second.performAndWait {
            let hitsBefore = second.statistics.rowCacheHits
            let read = try fetched.map { try second.existingObject(with: $0).value(forKey: "text") as? String }
            #expect(read == texts.sorted().map { Optional($0) }, "the cached rows still hold every value")
            #expect(second.statistics.rowCacheHits - hitsBefore == texts.count, "each fault served by the cache")
            #expect(second.statistics.storeRoundTrips == 0)
        }
        // The first context's objects still hold theirs, and changing one changes no cached row.
        try first.performAndWait {
            let object = try first.existingObject(with: fetched[0])
            try object.setValue("changed", forKey: "text")
            #expect(try first.existingObject(with: fetched[1]).value(forKey: "text") as? String == texts.sorted()[1])
        }
        let third = container.newBackgroundContext()
        let stored = try third.performAndWait { try third.existingObject(with: fetched[0]).value(forKey: "text") as? String }
        #expect(stored == texts.sorted()[0], "an unsaved change stays in its context")
    }
}
