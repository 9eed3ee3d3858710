import Foundation
import ObjectGraph
import ObjectGraphInMemory
import ObjectGraphSQLite
import Testing

@Suite("SQLite pushdown")
struct SQLitePushdownTests {
    static func store() throws -> (PersistentContainer, any PersistentStore, ManagedObjectModel) {
        let model = try ManagedObjectModel { m in
            m.entity("Chat") { e in
                e.attribute("title", .string)
                e.attribute("budget", .decimal, optional: true)
                e.toMany("messages", "Message", inverse: "chat")
            }
            m.entity("Message") { e in
                e.attribute("text", .string)
                e.attribute("rank", .integer32, optional: true)
                e.toOne("chat", "Chat", inverse: "messages")
            }
        }
        let container = try PersistentContainer(model: model, stores: [.sqlite(at: try SQLiteStoreTests.temporaryFile())])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for (title, texts) in [("Émile", ["b", "A", "c"]), ("emile", ["x"]), ("zed", [])] {
                let chat = try context.insertObject(entityName: "Chat")
                try chat.setValue(title, forKey: "title")
                try chat.setValue(Decimal(texts.count), forKey: "budget")
                for (rank, text) in texts.enumerated() {
                    let message = try context.insertObject(entityName: "Message")
                    try message.setValue(text, forKey: "text")
                    try message.setValue(rank == 1 ? nil : rank, forKey: "rank")
                    try message.setValue(chat, forKey: "chat")
                }
            }
            try context.save()
        }
        return (container, try #require(container.coordinator.persistentStores.first), model)
    }

    @Test("predicates through to-one, [cd] text, ANY, @count, sort and range run in SQL")
    func compiled() throws {
        let (_, store, model) = try Self.store()
        let messages = try model.requireEntity("Message")
        let chats = try model.requireEntity("Chat")
        let throughToOne = try store.fetch(StoreFetchRequest(
            entity: messages, predicate: try FetchPredicate(format: "chat.title ==[cd] 'emile' AND NOT (rank < 1)"),
            sortKeys: [SortKey("text", comparison: .caseInsensitive)], offset: 0, limit: 10))
        #expect(throughToOne.applied == .all)
        #expect(throughToOne.objectIDs.count == 2, "A (nil rank passes NOT (rank < 1), as in the shared evaluator) and c")
        let any = try store.fetch(StoreFetchRequest(entity: chats, predicate: try FetchPredicate(format: "ANY messages.text BEGINSWITH[c] 'a' OR messages.@count == 0"), sortKeys: [SortKey("title", ascending: false)]))
        #expect(any.applied == .all)
        #expect(any.objectIDs.map(\.primaryKey) == [1, 3], "É sorts after z in Unicode order")
        let count = try store.fetch(StoreFetchRequest(entity: messages, predicate: try FetchPredicate(format: "rank != 0"), resultType: .count))
        #expect(count.applied == .all)
        #expect(count.count == 2, "nil != 0 holds (two-valued logic)")
    }

    @Test("@sum over integers, @avg, @min, @max and SUBQUERY counts in predicates run in SQL with the shared layer's answers")
    func aggregates() throws {
        let (container, store, model) = try Self.store()
        let chats = try model.requireEntity("Chat")
        // Émile's ranks are 0, nil, 2; emile's 0; zed has no messages.
        let cases: [(String, [Int64])] = [
            ("messages.@sum.rank == 2", [1]),
            ("messages.@sum.rank == 0", [2, 3]),  // no members sum to 0
            ("messages.@max.rank >= 2", [1]),
            ("messages.@min.rank == 0", [1, 2]),  // nil is skipped
            ("messages.@max.rank == nil", [3]),  // no members: nil
            ("messages.@min.text ==[c] 'a'", [1]),  // "A" sorts before "b"
            ("messages.@max.text == 'x'", [2]),
            // Means through the shared layer's function (og_avg): Émile's is 1, zed has none.
            ("messages.@avg.rank > 0.5", [1]),
            ("messages.@avg.rank == 0", [2]),
            ("messages.@avg.rank == nil", [3]),
            ("SUBQUERY(messages, $m, $m.rank >= 0 AND $m.text != 'b').@count == 1", [1, 2]),  // nil >= 0 fails
            ("SUBQUERY(messages, $m, $m.chat.title ==[cd] 'emile').@count == 3", [1]),  // a join from the member
            // A range, BETWEEN and IN on a count whose subquery binds values of its own.
            ("SUBQUERY(messages, $m, $m.text IN {'A', 'x'}).@count > 0", [1, 2]),
            ("SUBQUERY(messages, $m, $m.text BEGINSWITH 'x' OR $m.rank == 2).@count BETWEEN {1, 2}", [1, 2]),
            ("SUBQUERY(messages, $m, $m.text != 'b').@count IN {0, 2}", [1, 3]),
            ("SUBQUERY(messages, $m, $m.rank == nil).@count == 0 AND messages.@count == 0", [3]),
            // A count compared with nil holds for no row; the values of the subquery dropped
            // with it must not shift the parameters after it.
            ("SUBQUERY(messages, $m, $m.text == 'b').@count > nil OR title == 'zed'", [3]),
        ]
        let context = container.newBackgroundContext()
        for (format, expected) in cases {
            let answer = try store.fetch(StoreFetchRequest(entity: chats, predicate: try FetchPredicate(format: format)))
            #expect(answer.applied.contains(.predicate), "\(format) runs in SQL")
            #expect(answer.objectIDs.compactMap(\.primaryKey).sorted() == expected, "\(format)")
            let counted = try store.fetch(StoreFetchRequest(entity: chats, predicate: try FetchPredicate(format: format), resultType: .count))
            #expect(counted.count == expected.count, "\(format), counted in SQL")
            try context.performAndWait {
                let found = try context.fetch(FetchRequest<ManagedObject>(entityName: "Chat", predicate: try FetchPredicate(format: format)))
                #expect(found.compactMap(\.objectID.primaryKey).sorted() == expected, "\(format) through a context")
            }
        }
    }

    @Test("@count, aggregates and ANY through a to-one run in SQL; an empty to-one gives nil, not the answer for no members")
    func membersThroughToOne() throws {
        let (container, store, model) = try Self.store()
        let messages = try model.requireEntity("Message")
        let context = container.newBackgroundContext()
        let orphan = try context.performAndWait {
            let message = try context.insertObject(entityName: "Message")
            try message.setValue("orphan", forKey: "text")
            try context.save()
            return message.objectID
        }
        let cases: [(String, Set<String>)] = [
            ("chat.messages.@count == 3", ["b", "A", "c"]),
            ("chat.messages.@count == 0", []),  // the orphan's key path is nil, not 0
            ("chat.messages.@count == nil", ["orphan"]),
            ("chat.messages.@sum.rank == 0", ["x"]),
            ("chat.messages.@max.rank == nil", ["orphan"]),
            ("ANY chat.messages.text == 'x'", ["x"]),
            ("ALL chat.messages.rank != 2", ["x", "orphan"]),  // no chat: no members, ALL holds
            ("NONE chat.messages.text == 'b'", ["x", "orphan"]),
            // Through the members' own to-one: the orphan's empty chat gives no value.
            ("ANY chat.messages.chat.title == 'emile'", ["x"]),
            // A SUBQUERY counts the members it reaches: none without a chat.
            ("SUBQUERY(chat.messages, $m, $m.rank == 0).@count == 0", ["orphan"]),
        ]
        for (format, expected) in cases {
            let answer = try store.fetch(StoreFetchRequest(entity: messages, predicate: try FetchPredicate(format: format)))
            #expect(answer.applied.contains(.predicate), "\(format) runs in SQL")
            try context.performAndWait {
                let found = try context.fetch(FetchRequest<ManagedObject>(entityName: "Message", predicate: try FetchPredicate(format: format)))
                #expect(Set(try found.map { try #require($0.value(forKey: "text") as? String) }) == expected, "\(format)")
                #expect(found.contains { $0.objectID == orphan } == expected.contains("orphan"))
            }
        }
    }

    @Test("a to-many compared with objects (ANY/ALL/NONE ==, IN, CONTAINS) runs in SQL with the shared layer's answers")
    func memberObjects() throws {
        let (container, store, model) = try Self.store()
        let chats = try model.requireEntity("Chat")
        let context = container.newBackgroundContext()
        let (a, x) = try context.performAndWait {
            let messages = try context.fetch(FetchRequest<ManagedObject>(entityName: "Message", sortKeys: [SortKey("text")]))
            let ids = try Dictionary(uniqueKeysWithValues: messages.map { (try #require($0.value(forKey: "text") as? String), $0.objectID) })
            return (try #require(ids["A"]), try #require(ids["x"]))
        }
        // Émile holds b, A, c; emile holds x; zed none.
        let cases: [(FetchPredicate, [Int64])] = [
            (try FetchPredicate(format: "ANY messages == %@", a), [1]),
            (try FetchPredicate(format: "messages CONTAINS %@", x), [2]),
            (try FetchPredicate(format: "ANY messages IN %@", [a, x]), [1, 2]),
            (try FetchPredicate(format: "ALL messages != %@", a), [2, 3]),  // zed: no members, ALL holds
            (try FetchPredicate(format: "NONE messages == %@", x), [1, 3]),
            (try FetchPredicate(format: "ANY messages == nil"), []),
        ]
        for (predicate, expected) in cases {
            let answer = try store.fetch(StoreFetchRequest(entity: chats, predicate: predicate))
            #expect(answer.applied.contains(.predicate), "\(predicate) runs in SQL")
            #expect(answer.objectIDs.compactMap(\.primaryKey).sorted() == expected, "\(predicate)")
            try context.performAndWait {
                let found = try context.fetch(FetchRequest<ManagedObject>(entityName: "Chat", predicate: predicate))
                #expect(found.compactMap(\.objectID.primaryKey).sorted() == expected, "\(predicate) through a context")
            }
        }
    }

    @Test("ANY/ALL/NONE through to-ones after a to-many, and through two to-manys: a member whose to-one is empty gives no value, as in the shared layer")
    func toOneAfterMembers() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Team") { e in
                e.attribute("name", .string)
                e.toMany("players", "Player", inverse: "team")
            }
            m.entity("Player") { e in
                e.toOne("team", "Team", inverse: "players")
                e.toOne("coach", "Coach", inverse: "players")
            }
            m.entity("Coach") { e in
                e.attribute("name", .string)
                e.toMany("players", "Player", inverse: "coach")
            }
        }
        // A: a player coached by c1 and one without a coach; B: one coached by c2; C: one
        // without a coach; D: no players.
        func fill(_ context: ManagedObjectContext) throws {
            let coaches = try ["c1", "c2"].map { name in
                let coach = try context.insertObject(entityName: "Coach"); try coach.setValue(name, forKey: "name"); return coach
            }
            for (team, players) in [("A", [coaches[0], nil]), ("B", [coaches[1]]), ("C", [nil]), ("D", [])] as [(String, [ManagedObject?])] {
                let object = try context.insertObject(entityName: "Team")
                try object.setValue(team, forKey: "name")
                for coach in players {
                    let player = try context.insertObject(entityName: "Player")
                    try player.setValue(object, forKey: "team")
                    try player.setValue(coach, forKey: "coach")
                }
            }
            try context.save()
        }
        let sqlite = try PersistentContainer(model: model, stores: [.sqlite(at: try SQLiteStoreTests.temporaryFile())])
        let memory = try PersistentContainer(model: model, stores: [.inMemory()])
        for container in [sqlite, memory] {
            let context = container.newBackgroundContext()
            try context.performAndWait { try fill(context) }
        }
        let store = try #require(sqlite.coordinator.persistentStores.first)
        let cases: [(String, [String])] = [
            ("ANY players.coach.name == 'c1'", ["A"]),
            ("ALL players.coach.name == 'c1'", ["A", "C", "D"]),
            ("ANY players.coach.name == nil", []),
            ("NONE players.coach.name == 'c2'", ["A", "C", "D"]),
            // Two to-manys: a nested EXISTS per to-many.
            ("ANY players.coach.players.team.name == 'B'", ["B"]),
            ("ALL players.coach.players.team.name == 'A'", ["A", "C", "D"]),
            ("NONE players.coach.players.team.name IN {'A', 'B'}", ["C", "D"]),
        ]
        for (format, expected) in cases {
            let answer = try store.fetch(StoreFetchRequest(entity: try model.requireEntity("Team"), predicate: try FetchPredicate(format: format)))
            #expect(answer.applied.contains(.predicate), "\(format) runs in SQL")
            for container in [sqlite, memory] {
                let context = container.newBackgroundContext()
                try context.performAndWait {
                    let found = try context.fetch(FetchRequest<ManagedObject>(entityName: "Team", predicate: try FetchPredicate(format: format), sortKeys: [SortKey("name")]))
                    #expect(try found.map { try #require($0.value(forKey: "name") as? String) } == expected, "\(format)")
                }
            }
        }
    }

    @Test("an integer @sum that overflows in SQL is answered by the shared layer, which sums in floating point")
    func overflowingSum() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Account") { e in
                e.attribute("name", .string)
                e.toMany("entries", "Entry", inverse: "account")
            }
            m.entity("Entry") { e in
                e.attribute("amount", .integer64)
                e.toOne("account", "Account", inverse: "entries")
            }
        }
        let container = try PersistentContainer(model: model, stores: [.sqlite(at: try SQLiteStoreTests.temporaryFile())])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for (name, amounts) in [("huge", [Int64.max, 1]), ("small", [1, 2])] {
                let account = try context.insertObject(entityName: "Account")
                try account.setValue(name, forKey: "name")
                for amount in amounts {
                    let entry = try context.insertObject(entityName: "Entry")
                    try entry.setValue(amount, forKey: "amount")
                    try entry.setValue(account, forKey: "account")
                }
            }
            try context.save()
        }
        let store = try #require(container.coordinator.persistentStores.first)
        let request = StoreFetchRequest(entity: try model.requireEntity("Account"), predicate: try FetchPredicate(format: "entries.@sum.amount > 4"))
        let answer = try store.fetch(request)
        #expect(!answer.applied.contains(.predicate), "SQLite's SUM overflowed, so the predicate is left to the shared layer")
        #expect(answer.snapshots.count == 2, "every candidate row, for the shared layer to filter")
        try context.performAndWait {
            let found = try context.fetch(FetchRequest<ManagedObject>(entityName: "Account", predicate: try FetchPredicate(format: "entries.@sum.amount > 4")))
            #expect(try found.map { try $0.value(forKey: "name") as? String } == ["huge"])
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Account", predicate: try FetchPredicate(format: "entries.@sum.amount > 4"))) == 1)
        }
    }

    @Test("what SQL cannot express exactly is left to the shared layer, with the same answer")
    func fallback() throws {
        let (container, store, model) = try Self.store()
        let chats = try model.requireEntity("Chat")
        // A decimal compared with NaN is not compiled.
        let predicate = FetchPredicate.key("budget") != Double.nan
        let raw = try store.fetch(StoreFetchRequest(entity: chats, predicate: predicate))
        #expect(!raw.applied.contains(.predicate), "a decimal against NaN is left to the shared layer")
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let found = try context.fetch(FetchRequest<ManagedObject>(entityName: "Chat", predicate: predicate, sortKeys: [SortKey("title")]))
            #expect(try found.map { try $0.value(forKey: "title") as? String } == ["emile", "zed", "Émile"], "every budget differs from NaN")
        }
    }

    @Test("IN and BETWEEN with [c]/[d] and comparisons with NaN run in SQL, as in the shared evaluator")
    func optionsAndNaNInSQL() throws {
        let (container, store, model) = try Self.store()
        let messages = try model.requireEntity("Message")
        let chats = try model.requireEntity("Chat")
        func folded(_ op: ComparisonOperator, _ items: [AttributeValue], _ options: StringComparisonOptions) -> FetchPredicate {
            .comparison(PredicateComparison(.keyPath("text"), op, .list(items.map(PredicateOperand.constant)), options: options))
        }
        let cases: [(EntityDescription, FetchPredicate, String, [String])] = [
            (messages, folded(.in, ["a", "X"], [.caseInsensitive]), "text", ["A", "x"]),
            (messages, folded(.between, ["b", "C"], [.caseInsensitive]), "text", ["b", "c"]),
            (chats, .comparison(PredicateComparison(.keyPath("title"), .in, .list([.constant("EMILE"), .constant(nil)]), options: [.caseInsensitive, .diacriticInsensitive])), "title", ["emile", "Émile"]),
            (messages, .key("rank") == Double.nan, "text", []),
            (messages, .key("rank") != Double.nan, "text", ["A", "b", "c", "x"]),
            (messages, .key("rank") < Double.nan, "text", []),
            (messages, .comparison(PredicateComparison(.keyPath("rank"), .in, .list([.constant(.double(.nan)), .constant(2)]))), "text", ["c"]),
        ]
        for (entity, predicate, key, expected) in cases {
            try Self.expectInSQL(predicate, on: entity, store, container, key: key, answers: expected)
        }
    }

    /// Checks that `store` runs `predicate` on `entity` in SQL, and that a context's fetch of it
    /// answers the values of `key`, sorted by it, that `answers` lists.
    static func expectInSQL(
        _ predicate: FetchPredicate, on entity: EntityDescription, _ store: any PersistentStore, _ container: PersistentContainer,
        key: String, answers expected: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let answer = try store.fetch(StoreFetchRequest(entity: entity, predicate: predicate))
        #expect(answer.applied == .all, "\(predicate) runs in SQL", sourceLocation: sourceLocation)
        let context = container.newBackgroundContext()
        let found = try context.performAndWait {
            try context.fetch(FetchRequest<ManagedObject>(entityName: entity.name, predicate: predicate, sortKeys: [SortKey(key)])).map { try $0.value(forKey: key) as? String }
        }
        #expect(found == expected, "\(predicate)", sourceLocation: sourceLocation)
    }

    /// Found by review: an `IN` list of more than 126 decimals made one `og_decimal` call of
    /// too many arguments, an `IN[c]` list of 1,000 strings an expression nested too deep (both
    /// failed the fetch), and a decimal NaN was refused where other decimals of its shape
    /// compiled (the cached query then did not fit, an assertion in debug builds).
    @Test("long IN lists of decimals or with options, and decimal NaN, answer as the evaluator")
    func longListsAndDecimalNaN() throws {
        let (container, store, model) = try Self.store()
        let chats = try model.requireEntity("Chat")
        func decimals(_ count: Int) -> FetchPredicate {
            .comparison(PredicateComparison(.keyPath("budget"), .in, .list((0..<count).map { .constant(.decimal(Decimal($0 + 2))) })))
        }
        let compiled = try store.fetch(StoreFetchRequest(entity: chats, predicate: decimals(200)))
        #expect(compiled.applied == .all, "200 decimals run in SQL, in calls of at most 100")
        #expect(compiled.objectIDs.compactMap(\.primaryKey) == [1], "Émile's budget, 3, is in the list")
        let strings = FetchPredicate.comparison(PredicateComparison(
            .keyPath("text"), .in, .list((0..<1_000).map { .constant(.string("T\($0)")) } + [.constant("B")]), options: [.caseInsensitive]))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Chat", predicate: decimals(600))) == 1)
            let found = try context.fetch(FetchRequest<ManagedObject>(entityName: "Message", predicate: strings))
            #expect(try found.map { try $0.value(forKey: "text") as? String } == ["b"], "1,001 strings, left to the shared layer")
            // One shape, a decimal NaN and a decimal, in both orders: the same compiled query.
            for constants in [[Decimal.nan, Decimal(2)], [Decimal(2), Decimal.nan]] {
                for constant in constants {
                    let predicate = FetchPredicate.comparison(PredicateComparison(.keyPath("budget"), .lessThan, .constant(.decimal(constant))))
                    let found = try context.fetch(FetchRequest<ManagedObject>(entityName: "Chat", predicate: predicate, sortKeys: [SortKey("title")]))
                    // Budgets: Émile 3, emile 1, zed 0; nothing is below NaN.
                    #expect(try found.map { try $0.value(forKey: "title") as? String } == (constant.isNaN ? [] : ["emile", "zed"]), "budget < \(constant)")
                }
            }
        }
    }

    @Test("two attributes compared with each other run in SQL, by the evaluator's rules")
    func attributesAgainstAttributes() throws {
        let (container, store, model) = try Self.store()
        let messages = try model.requireEntity("Message")
        let chats = try model.requireEntity("Chat")
        // Émile's budget is 3: ranks 0 and 2 are below it (nil is not); emile's 1: rank 0.
        let cases: [(EntityDescription, String, [String])] = [
            (messages, "rank < chat.budget", ["b", "c", "x"]),
            (messages, "rank >= chat.budget", []),
            (messages, "text ==[c] chat.title", []),
            (messages, "text <[cd] chat.title", ["A", "b", "c"]),  // "x" is after "emile"
            (messages, "text < chat.title", ["A", "b", "c"]),  // and "c" before "Émile" in Unicode order
            (chats, "title == title", ["emile", "zed", "Émile"]),
            (messages, "rank != rank", []),  // nil equals nil, as in the evaluator
        ]
        for (entity, format, expected) in cases {
            try Self.expectInSQL(try FetchPredicate(format: format), on: entity, store, container, key: entity.name == "Chat" ? "title" : "text", answers: expected)
        }
    }

    @Test("decimals, stored as text, compare and sort by value in SQL, as in the shared evaluator")
    func decimalsInSQL() throws {
        let (container, store, model) = try Self.store()
        let chats = try model.requireEntity("Chat")
        let messages = try model.requireEntity("Message")
        // Budgets: Émile 3, emile 1, zed 0 (as text, "3" > "10" would hold).
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let zed = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Chat", predicate: .key("title") == "zed")).first)
            try zed.setValue(Decimal(10), forKey: "budget")
            try context.save()
        }
        let cases: [(FetchPredicate, [Int64])] = [
            (try FetchPredicate(format: "budget > 2"), [1, 3]),
            (.key("budget") < Decimal(string: "3.5")!, [1, 2]),
            (try FetchPredicate(format: "budget BETWEEN {1, 3}"), [1, 2]),
            (try FetchPredicate(format: "budget IN {1, 10, nil}"), [2, 3]),
            (try FetchPredicate(format: "budget != 3"), [2, 3]),
            (try FetchPredicate(format: "budget == 1.0"), [2]),
            (try FetchPredicate(format: "budget == nil"), []),
        ]
        for (predicate, keys) in cases {
            let answer = try store.fetch(StoreFetchRequest(entity: chats, predicate: predicate, sortKeys: [SortKey("budget", ascending: false)]))
            #expect(answer.applied == .all, "\(predicate) runs in SQL")
            #expect(answer.objectIDs.compactMap(\.primaryKey).sorted() == keys, "\(predicate)")
        }
        let sorted = try store.fetch(StoreFetchRequest(entity: chats, sortKeys: [SortKey("budget")]))
        #expect(sorted.applied == .all)
        #expect(sorted.objectIDs.map(\.primaryKey) == [2, 1, 3], "1 < 3 < 10 by value, not as text")
        // A number compared with a decimal constant, exactly: rank 2 < 2.5 (a decimal).
        let mixed = try store.fetch(StoreFetchRequest(entity: messages, predicate: .key("rank") < Decimal(string: "2.5")!))
        #expect(mixed.applied.contains(.predicate))
        #expect(mixed.objectIDs.count == 3, "ranks 0, 2 and 0; nil is not below")
    }
}

@Suite("SQLite grouped fetches")
struct SQLiteGroupTests {
    @Test("group-by and aggregates run as one SQL query; what SQL cannot match exactly falls back")
    func groupsInSQL() throws {
        let (container, _, _) = try SQLitePushdownTests.store()
        let context = container.newBackgroundContext()
        try context.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Message", sortKeys: [SortKey("n", ascending: false)])
            request.propertiesToFetch = [.key("chat.title", as: "chat"), .count(as: "n"), .maximum("rank", as: "top")]
            request.propertiesToGroupBy = ["chat.title"]
            context.resetStatistics()
            let rows = try context.fetchDictionaries(request)
            #expect(rows == [["chat": "Émile", "n": 3, "top": 2], ["chat": "emile", "n": 1, "top": 0]])
            #expect(context.statistics.storeRoundTrips == 1, "one query, no objects loaded")
            #expect(context.registeredObjects.isEmpty, "no object was materialized")

            // An average runs in SQL too, through og_avg (the shared function).
            request.propertiesToFetch = [.key("chat.title", as: "chat"), .count(as: "n"), .average("rank", as: "mean")]
            context.resetStatistics()
            let averaged = try context.fetchDictionaries(request)
            #expect(averaged == [["chat": "Émile", "n": 3, "mean": 1.0], ["chat": "emile", "n": 1, "mean": 0.0]])
            #expect(context.statistics.storeRoundTrips == 1 && context.registeredObjects.isEmpty, "one query, no objects")
        }
    }

    @Test("grouping by a to-one runs in SQL, grouped by the foreign key and keyed by the destination's ID")
    func groupsByToOneInSQL() throws {
        let (container, store, model) = try SQLitePushdownTests.store()
        let messages = try model.requireEntity("Message")
        for predicate in [nil, try FetchPredicate(format: "text != 'b'")] {
            let grouping = StoreGrouping(keys: ["chat"], aggregates: [.count, .function(.sum, "rank")])
            let native = try store.fetch(StoreFetchRequest(entity: messages, predicate: predicate, resultType: .groups(grouping)))
            #expect(native.applied.contains(.predicate), "answered in SQL")
            let context = container.newBackgroundContext()
            let chats = try context.performAndWait {
                try context.fetch(FetchRequest<ManagedObject>(entityName: "Chat", sortKeys: [SortKey("title", ascending: false)])).map(\.objectID)
            }
            // Émile (first by title, descending) has the first messages; zed (second) has none.
            let counts: [Int64] = predicate == nil ? [3, 1] : [2, 1]
            #expect(native.groups?.map(\.array) == [[.uri(chats[0].uriRepresentation), .integer(counts[0]), .integer(2)], [.uri(chats[2].uriRepresentation), .integer(counts[1]), .integer(0)]])
        }
    }
}
