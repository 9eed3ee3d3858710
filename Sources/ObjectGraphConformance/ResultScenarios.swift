import Foundation
import ObjectGraph

/// Result types beyond objects — dictionaries with aggregates and grouping, batched iteration,
/// counts — on every store, from a fresh coordinator so the store answers.
enum ResultScenarios {
    /// A context on 12 seeded students (reopened, so the store answers) and a request for
    /// them by name in batches of 4, prefetching their class and subjects.
    static func prefetchingSchool(_ env: ScenarioEnvironment) throws -> (ManagedObjectContext, FetchRequest<Student>) {
        try FaultingScenarios.seedSchool(env, students: 12)
        try env.reopen()
        var request = FetchRequest<Student>(sortKeys: [SortKey("name", comparison: .localizedStandard)])
        request.fetchBatchSize = 4
        request.relationshipKeyPathsForPrefetching = ["schoolClass", "subjects"]
        return (env.newContext(), request)
    }

    /// Walks the class and subjects of batch `index` (loaded with its prefetching), checking
    /// that it costs no round trip nor relationship fault; appends the class titles.
    static func walkPrefetched(_ batch: some Sequence<Student>, index: Int, in context: ManagedObjectContext, titles: inout [String]) throws {
        let loaded = context.statistics
        for student in batch {
            titles.append(student.schoolClass?.title ?? "none")
            try checkEqual(student.subjects.filter { !$0.name.isEmpty }.count, 2, "two subjects")
        }
        let walked = context.statistics
        try checkEqual(walked.storeRoundTrips, loaded.storeRoundTrips, "walking batch \(index)'s prefetched relationships costs no round trip")
        try checkEqual(walked.relationshipFaultsFired, loaded.relationshipFaultsFired, "and fires no relationship fault in batch \(index)")
    }

    /// Messages counted per chat title: columns `chat` (the title) and `n`.
    static func messagesPerChatTitle(sortKeys: [SortKey] = []) -> FetchRequest<ManagedObject> {
        var request = FetchRequest<ManagedObject>(entityName: "Message", sortKeys: sortKeys)
        request.propertiesToFetch = [.key("chat.title", as: "chat"), .count(as: "n")]
        request.propertiesToGroupBy = ["chat.title"]
        return request
    }

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
        ConformanceScenario("results.dictionaries.groupsOfEveryKeyType") { env in
            // Stores may compute groups natively; these are the cases where SQL and Swift part
            // ways unless a store is careful: canonically equivalent strings, nil keys, integer
            // overflow, empty matches, dates, booleans.
            let day = 86_400.0
            let rows: [(String?, Int64, Double?, Bool?)] = [
                ("Jos\u{E9}", 5, 1, true), ("Jose\u{301}", 7, 3, false), (nil, 1, nil, true),
                ("Ana", .max, 2, nil), ("Ana", 1, 1, true),
            ]
            let writer = env.newContext()
            try writer.performAndWait {
                for (string, number, days, flag) in rows {
                    let object = try writer.insertObject(entityName: "AllTypes")
                    try object.setValue(string, forKey: "string")
                    try object.setValue(number, forKey: "int64")
                    try object.setValue(days.map { Date(timeIntervalSince1970: $0 * day) }, forKey: "date")
                    try object.setValue(flag, forKey: "bool")
                }
                try writer.save()
            }
            try env.reopen()
            let context = env.newContext()
            try context.performAndWait {
                var request = FetchRequest<ManagedObject>(entityName: "AllTypes", predicate: try FetchPredicate(format: "int64 < 1000"))
                request.propertiesToFetch = [
                    .key("string"), .count(as: "n"), .sum("int64", as: "sum"), .minimum("int64", as: "low"),
                    .minimum("date", as: "first"), .maximum("date", as: "last"),
                ]
                request.propertiesToGroupBy = ["string"]
                let groups = try context.fetchDictionaries(request)
                try checkEqual(groups.count, 3, "é precomposed and decomposed are one group; nil is a group: \(groups)")
                try checkEqual(groups.map { $0["string"] }, [.string("Jos\u{E9}"), .null, .string("Ana")], "groups in order of their first member")
                try checkEqual(groups.map { $0["n"] }, [.integer(2), .integer(1), .integer(1)], "counts")
                try checkEqual(groups.map { $0["sum"] }, [.integer(12), .integer(1), .integer(1)], "integer sums")
                try checkEqual(groups.map { $0["low"] }, [.integer(5), .integer(1), .integer(1)], "integer minimums")
                try checkEqual(groups[0]["first"], .date(Date(timeIntervalSince1970: day)), "earliest date")
                try checkEqual(groups[0]["last"], .date(Date(timeIntervalSince1970: 3 * day)), "latest date")
                try checkEqual(groups[1]["first"], .null, "a group without dates has no minimum")

                var overflow = FetchRequest<ManagedObject>(entityName: "AllTypes")
                overflow.propertiesToFetch = [.key("bool"), .sum("int64", as: "sum"), .count(as: "n")]
                overflow.propertiesToGroupBy = ["bool"]
                let byFlag = try context.fetchDictionaries(overflow)
                try checkEqual(byFlag.map { $0["bool"] }, [.bool(true), .bool(false), .null], "boolean keys, nil last to appear")
                try checkEqual(byFlag.map { $0["n"] }, [.integer(3), .integer(1), .integer(1)], "counts per flag")
                try checkEqual(byFlag[0]["sum"], AggregateFunction.sum.apply([.integer(5), .integer(1), .integer(1)]), "sum of the true group")
                try checkEqual(byFlag[2]["sum"], AggregateFunction.sum.apply([.integer(.max)]), "sum of one value")
                var both = overflow
                both.propertiesToGroupBy = []
                both.propertiesToFetch = [.sum("int64", as: "sum")]
                try checkEqual(try context.fetchDictionaries(both), [["sum": AggregateFunction.sum.apply(rows.map { .integer($0.1) })]], "an overflowing sum is what the shared function gives")

                var none = FetchRequest<ManagedObject>(entityName: "AllTypes", predicate: try FetchPredicate(format: "int64 > 1000 AND int64 < 2000"))
                none.propertiesToFetch = [.count(as: "n"), .sum("int64", as: "sum"), .maximum("date", as: "last")]
                try checkEqual(try context.fetchDictionaries(none), [["n": .integer(0), "sum": AggregateFunction.sum.apply([]), "last": .null]], "no match still gives one row")
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
        ConformanceScenario("results.batched.prefetchesEachBatch") { env in
            // Core Data loads a batched result's relationshipKeyPathsForPrefetching with each
            // batch: walking a batch's relationships then costs no round trip.
            let (context, school) = try prefetchingSchool(env)
            var request = school
            try context.performAndWait {
                let results = try context.fetchBatched(request)
                var titles: [String] = []
                for index in 0..<3 {
                    try walkPrefetched(try results.batch(at: index), index: index, in: context, titles: &titles)
                }
                try checkEqual(titles, (0..<12).map { $0 % 2 == 0 ? "A" : "B" }, "class titles in name order")
                request.relationshipKeyPathsForPrefetching = ["schoolClass.title"]
                try FetchScenarios.checkInvalidFetch("prefetching an attribute in a batched fetch") { _ = try context.fetchBatched(request) }
            }
        },
        ConformanceScenario("results.batched.fetchPrefetchesEachBatchAsItLoads") { env in
            // A fetch with a batch size returns faults and loads a batch when one of its
            // objects is touched; its prefetching key paths load with each batch. They were
            // loaded for every object at the fetch, which fired every batch there.
            let (context, school) = try prefetchingSchool(env)
            var request = school
            try context.performAndWait {
                let students = try context.fetch(request)
                try checkEqual(context.statistics.storeRoundTrips, 1, "the fetch reads the matches, no batch and no prefetching")
                try check(students.allSatisfy(\.isFault), "every student is a fault")
                var titles: [String] = []
                for index in 0..<3 {
                    let batch = students[(index * 4)..<(index * 4 + 4)]
                    _ = batch.first?.name
                    try check(batch.allSatisfy { !$0.isFault }, "touching one student loads batch \(index)")
                    try check(students[(index * 4 + 4)...].allSatisfy(\.isFault), "and no later batch")
                    try walkPrefetched(batch, index: index, in: context, titles: &titles)
                }
                try checkEqual(titles, (0..<12).map { $0 % 2 == 0 ? "A" : "B" }, "class titles in name order")
                request.relationshipKeyPathsForPrefetching = ["schoolClass.title"]
                try FetchScenarios.checkInvalidFetch("prefetching an attribute in a batched fetch") { _ = try context.fetch(request) }
            }
        },
        ConformanceScenario("results.batched.unsavedMatchSavedBetweenBatchesIsTheSameObject") { env in
            // An unsaved object a batched fetch matched, saved before its batch is read: the
            // batch gives that object (uniquing), under its permanent ID. The result held its
            // temporary ID, which after the save named nothing: the batch made a second object
            // under it, which no read could load (a typed read stopped the process).
            let context = env.newContext()
            try context.performAndWait {
                for index in 0..<4 { let student = Student(context: context); student.name = "s\(index)" }
                try context.save()
                let newcomer = Student(context: context); newcomer.name = "s9"
                var request = FetchRequest<Student>(sortKeys: [SortKey("name")])
                request.fetchBatchSize = 2
                let results = try context.fetchBatched(request)
                try checkEqual(results.count, 5, "four saved students and the unsaved one")
                try checkEqual(results[0].name, "s0", "first batch, read before the save")
                try context.save()
                let last = results[4]
                try check(last === newcomer, "the saved newcomer is its own object (got \(last.objectID), the newcomer is \(newcomer.objectID))")
                try checkEqual(last.name, "s9", "its name")
                try checkEqual(results.objectIDs.last, newcomer.objectID, "the result lists its permanent ID")
                try check(results.objectIDs.allSatisfy { !$0.isTemporary }, "no temporary ID is left")
            }
        },
        ConformanceScenario("results.dictionaries.groupsInOrderOfTheirFirstMatchingMember") { env in
            // Chats saved a, b, c; their messages saved so that the order of each group's first
            // member is neither the chats' order nor the same with and without the predicate,
            // with a message in no chat (a nil key) among them.
            try seedMessages(env, chats: ["a", "b", "c"], messages: [("skip", 2), ("x", 0), ("x", nil), ("x", 2), ("x", 1), ("x", 0)])
            let context = env.newContext()
            try context.performAndWait {
                var request = messagesPerChatTitle()
                let all = try context.fetchDictionaries(request)
                try checkEqual(all.map { $0["chat"] }, [.string("c"), .string("a"), .null, .string("b")], "groups in order of their first member")
                try checkEqual(all.map { $0["n"] }, [.integer(2), .integer(2), .integer(1), .integer(1)], "counts")
                request.predicate = try FetchPredicate(format: "text != 'skip'")
                let matching = try context.fetchDictionaries(request)
                try checkEqual(matching.map { $0["chat"] }, [.string("a"), .null, .string("c"), .string("b")], "groups in order of their first matching member")
                try checkEqual(matching.map { $0["n"] }, [.integer(2), .integer(1), .integer(1), .integer(1)], "counts of matching members")
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
