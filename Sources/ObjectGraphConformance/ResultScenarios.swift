import Foundation
import ObjectGraph

/// Result types beyond objects — dictionaries with aggregates and grouping, batched iteration,
/// counts — on every store, from a fresh coordinator so the store answers.
enum ResultScenarios {
    static let all: [ConformanceScenario] = [
        ConformanceScenario("results.dictionaries.groupedAggregates") { env in
            try seedChats(env, chats: [("lunch", [3, 1, 2]), ("release", [5]), ("quiet", [])])
            let context = env.newContext()
            try context.performAndWait {
                var request = FetchRequest<ManagedObject>(entityName: "Message", sortKeys: [SortKey("chat", ascending: true)])
                request.propertiesToFetch = [
                    .key("chat.title", as: "chat"), .count(as: "messages"),
                    .minimum("text", as: "first"), .maximum("text", as: "last"),
                ]
                request.propertiesToGroupBy = ["chat.title"]
                let rows = try context.fetchDictionaries(request)
                try checkEqual(rows.map { $0["chat"] }, [.string("lunch"), .string("release")], "one row per chat that has messages")
                try checkEqual(rows.map { $0["messages"] }, [.integer(3), .integer(1)], "counts per group")
                try checkEqual(rows[0]["first"], .string("lunch-1"), "minimum text in the group")
                try checkEqual(rows[0]["last"], .string("lunch-3"), "maximum text in the group")
                request.havingPredicate = .comparison(PredicateComparison(.keyPath("messages"), .greaterThan, .constant(1)))
                try checkEqual(try context.fetchDictionaries(request).map { $0["chat"] }, [.string("lunch")], "HAVING filters groups")
            }
        },
        ConformanceScenario("results.dictionaries.columnsDistinctAndPaging") { env in
            try seedChats(env, chats: [("b", [1, 1]), ("a", [2]), ("c", [])])
            let context = env.newContext()
            try context.performAndWait {
                var request = FetchRequest<ManagedObject>(entityName: "Message", sortKeys: [SortKey("text")])
                request.propertiesToFetch = [.key("text"), .key("chat.title", as: "chat")]
                request.returnsDistinctResults = true
                let rows = try context.fetchDictionaries(request)
                try checkEqual(rows.count, 2, "the two identical b-1 rows are one: \(rows)")
                try checkEqual(rows.map { $0["text"] }, [.string("a-2"), .string("b-1")], "sorted by a column")
                request.fetchOffset = 1
                request.fetchLimit = 5
                try checkEqual(try context.fetchDictionaries(request).map { $0["chat"] }, [.string("b")], "offset and limit apply last")
                var totals = FetchRequest<ManagedObject>(entityName: "Message")
                totals.propertiesToFetch = [.count(as: "n"), .minimum("text", as: "min")]
                try checkEqual(try context.fetchDictionaries(totals), [["n": .integer(3), "min": .string("a-2")]], "aggregates over everything give one row")
            }
        },
        ConformanceScenario("results.batched.iteratesEveryObjectOnceInOrder") { env in
            let context = env.newContext()
            try context.performAndWait {
                for index in 0..<2_500 {
                    let tag = Tag(context: context)
                    tag.label = String(format: "t%05d", (index * 7919) % 2_500)
                }
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                var request = FetchRequest<Tag>(sortKeys: [SortKey("label", ascending: false)])
                request.fetchBatchSize = 300
                let results = try fresh.fetchBatched(request)
                try checkEqual(results.count, 2_500, "every tag")
                var previous: String? = nil
                var seen = Set<ObjectID>()
                for tag in results {
                    let label = tag.label
                    if let previous { try check(previous > label, "descending order: \(previous) before \(label)") }
                    previous = label
                    seen.insert(tag.objectID)
                }
                try checkEqual(seen.count, 2_500, "each object exactly once")
                try check(fresh.statistics.storeRoundTrips <= 1 + 9, "one round trip for IDs and one per batch of 300 (saw \(fresh.statistics.storeRoundTrips))")
            }
        },
        ConformanceScenario("results.countsAndIDsAgreeWithObjects") { env in
            try seedChats(env, chats: [("x", [1, 2, 3, 4]), ("y", [5, 6])])
            let context = env.newContext()
            try context.performAndWait {
                let predicate = try FetchPredicate(format: "chat.title == 'x' AND text != 'x-2'")
                let request = FetchRequest<Message>(predicate: predicate, sortKeys: [SortKey("text", ascending: false)])
                let objects = try context.fetch(request)
                try checkEqual(try context.count(for: request), objects.count, "count(for:) agrees with fetch")
                try checkEqual(try context.fetchObjectIDs(request), objects.map(\.objectID), "IDs come in the same order")
                try checkEqual(objects.map(\.text), ["x-4", "x-3", "x-1"], "the objects")
                var paged = request
                paged.fetchOffset = 1
                paged.fetchLimit = 1
                try checkEqual(try context.fetch(paged).map(\.text), ["x-3"], "a page")
            }
        },
    ]

    /// Chats titled as given, each with messages "title-n" for the listed n.
    static func seedChats(_ env: ScenarioEnvironment, chats: [(String, [Int])]) throws {
        let context = env.newContext()
        try context.performAndWait {
            for (title, numbers) in chats {
                let chat = Chat(context: context)
                chat.title = title
                for number in numbers {
                    let message = Message(context: context)
                    message.text = "\(title)-\(number)"
                    message.sentAt = Date(timeIntervalSince1970: Double(number) * 60)
                    message.chat = chat
                }
            }
            try context.save()
        }
        try env.reopen()
    }
}
