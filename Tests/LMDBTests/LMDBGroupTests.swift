import Foundation
import ObjectGraph
import ObjectGraphInMemory
import ObjectGraphLMDB
import Testing

/// Grouped counts the LMDB store answers from a relationship's members database must equal
/// the shared grouping's (checked against the in-memory store, which never groups natively),
/// and every shape it cannot answer exactly must be declined, not guessed.
@Suite("LMDB grouped fetches")
struct LMDBGroupTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Chat") { e in
                // Values of every stored kind before the grouping key: the store skips them
                // without decoding to reach it.
                e.attribute("count", .integer64, optional: true)
                e.attribute("score", .double, optional: true)
                e.attribute("price", .decimal, optional: true)
                e.attribute("topic", .string, optional: true)
                e.attribute("pinned", .boolean, optional: true)
                e.attribute("opened", .date, optional: true)
                e.attribute("blob", .binaryData, optional: true)
                e.attribute("uid", .uuid, optional: true)
                e.attribute("link", .uri, optional: true)
                e.attribute("title", .string, optional: true)
                e.toMany("messages", "Message", inverse: "chat")
            }
            m.entity("Message") { e in
                e.attribute("n", .integer64)
                e.toOne("chat", "Chat", inverse: "messages", optional: true)
            }
        }
    }

    /// Chats whose titles repeat (equal strings in both normalization forms, and nil), each with
    /// messages inserted interleaved, so groups are met out of key order. With `orphans`, some
    /// messages have no chat.
    static func fill(_ context: ManagedObjectContext, orphans: Bool) throws {
        let titles: [String?] = ["b", "e\u{301}", nil, "a", "\u{E9}", "b", nil]
        let chats = try titles.map { title in
            let chat = try context.insertObject(entityName: "Chat")
            try chat.setValue(title, forKey: "title")
            if title != nil {
                let seed = Int64(title?.utf8.count ?? 0)
                try chat.setValue(seed * 7, forKey: "count")
                try chat.setValue(Double(seed) / 3, forKey: "score")
                try chat.setValue(Decimal(string: "12.5"), forKey: "price")
                try chat.setValue("topic \(seed) with ; and \u{0}", forKey: "topic")
                try chat.setValue(seed % 2 == 0, forKey: "pinned")
                try chat.setValue(Date(timeIntervalSinceReferenceDate: Double(seed)), forKey: "opened")
                try chat.setValue(Data(repeating: UInt8(seed), count: Int(seed) * 3), forKey: "blob")
                try chat.setValue(UUID(), forKey: "uid")
                try chat.setValue(URL(string: "https://example.com/\(seed)"), forKey: "link")
            }
            return chat
        }
        for index in 0..<90 {
            let message = try context.insertObject(entityName: "Message")
            try message.setValue(Int64(index), forKey: "n")
            let chat = chats[(index * 5 + index / 7) % chats.count]
            if !(orphans && index % 13 == 4) { try message.setValue(chat, forKey: "chat") }
        }
        try context.save()
    }

    static func grouped(_ container: PersistentContainer) throws -> [ManagedObjectContext.FetchedRow] {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Message")
            request.propertiesToFetch = [.key("chat.title", as: "title"), .count(as: "count")]
            request.propertiesToGroupBy = ["chat.title"]
            return try context.fetchDictionaries(request)
        }
    }

    static func containers(orphans: Bool) throws -> (lmdb: PersistentContainer, memory: PersistentContainer) {
        let model = try model()
        let lmdb = try PersistentContainer(model: model, stores: [.lmdb(at: try LMDBFixture.temporaryFile())])
        let memory = try PersistentContainer(model: model, stores: [.inMemory()])
        for container in [lmdb, memory] {
            let context = container.newBackgroundContext()
            try context.performAndWait { try fill(context, orphans: orphans) }
        }
        return (lmdb, memory)
    }

    static func nativeAnswer(_ container: PersistentContainer, key: String = "chat.title") throws -> StoreFetchResult {
        let store = try #require(container.coordinator.persistentStores.first)
        let messages = try container.coordinator.model.requireEntity("Message")
        return try store.fetch(StoreFetchRequest(entity: messages, resultType: .groups(StoreGrouping(keys: [key], aggregates: [.count]))))
    }

    @Test("counts grouped by a to-one itself come from the members database, keyed by each owner's ID")
    func countsByOwnerMatchTheOwners() throws {
        let (lmdb, memory) = try Self.containers(orphans: false)
        defer { lmdb.close(); memory.close() }
        let native = try Self.nativeAnswer(lmdb, key: "chat")
        #expect(native.applied.contains(.predicate), "the store answered natively")
        let groups = try #require(native.groups)
        let context = lmdb.newBackgroundContext()
        try context.performAndWait {
            // Each group is one chat: its URI names it, its count is its number of messages,
            // and groups come in the order of their first message.
            var expected: [(AttributeValue, AttributeValue, Int64)] = []
            for chat in try context.fetch(FetchRequest<ManagedObject>(entityName: "Chat")) {
                let members = try #require(chat.value(forKey: "messages") as? Set<ManagedObject>)
                guard let first = members.compactMap(\.objectID.primaryKey).min() else { continue }
                expected.append((.uri(chat.objectID.uriRepresentation), .integer(Int64(members.count)), first))
            }
            expected.sort { $0.2 < $1.2 }
            #expect(groups.map(\.array) == expected.map { [$0.0, $0.1] })
            #expect(groups.count == 7, "every chat has messages")
        }
        #expect(try Self.nativeAnswer(try Self.containers(orphans: true).lmdb, key: "chat").groups == nil, "messages without a chat: declined")
    }

    @Test("counts grouped by a to-one's attribute come from the members database, equal to the shared grouping")
    func groupedCountsMatchTheSharedGrouping() throws {
        let (lmdb, memory) = try Self.containers(orphans: false)
        defer { lmdb.close(); memory.close() }
        let native = try Self.nativeAnswer(lmdb)
        #expect(native.applied.contains(.predicate), "the store answered natively")
        let groups = try #require(native.groups)
        #expect(groups.count == 4, "b, é (both forms), nil and a: \(groups)")
        #expect(groups.map { $0[1] }.reduce(0) { total, value in if case .integer(let n) = value { return total + n } else { return total } } == 90)
        #expect(try Self.grouped(lmdb) == Self.grouped(memory))
        // The groups share one array of values; each row still changes alone.
        var rows = try Self.grouped(lmdb)
        let second = rows[1]
        rows[0]["count"] = .integer(-1)
        rows[0]["extra"] = .null
        #expect(rows[1] == second && rows[0]["count"] == .integer(-1) && rows[0].count == 3)
        #expect(try Self.grouped(lmdb)[0]["count"] != .integer(-1))
    }

    @Test("rows without an owner, predicates and other aggregates are declined and grouped by the shared layer")
    func otherShapesAreDeclined() throws {
        let (lmdb, memory) = try Self.containers(orphans: true)
        defer { lmdb.close(); memory.close() }
        #expect(try Self.nativeAnswer(lmdb).groups == nil, "messages without a chat: declined")
        #expect(try Self.grouped(lmdb) == Self.grouped(memory))

        let store = try #require(lmdb.coordinator.persistentStores.first)
        let messages = try lmdb.coordinator.model.requireEntity("Message")
        let filtered = StoreFetchRequest(entity: messages, predicate: try FetchPredicate(format: "n > 3"), resultType: .groups(StoreGrouping(keys: ["chat.title"], aggregates: [.count])))
        #expect(try store.fetch(filtered).groups == nil)
        let summed = StoreFetchRequest(entity: messages, resultType: .groups(StoreGrouping(keys: ["chat.title"], aggregates: [.function(.sum, "n")])))
        #expect(try store.fetch(summed).groups == nil)
    }
}
