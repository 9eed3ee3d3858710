import Foundation
import ObjectGraph
import ObjectGraphInMemory
import ObjectGraphSQLite
import Testing

/// `@sum` and `@avg` over doubles, floats and dates, compiled to SQL through `og_sum` and
/// `og_avg`, which call the shared layer's own function: answers identical to the in-memory
/// store's, including where the order of the terms, an infinity or a NaN decides them.
@Suite("SQLite floating-point aggregates")
struct SQLiteFloatingAggregateTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Account") { e in
                e.attribute("name", .string)
                e.toMany("entries", "Entry", inverse: "account")
            }
            m.entity("Entry") { e in
                e.attribute("amount", .double, optional: true)
                e.attribute("weight", .float, optional: true)
                e.attribute("at", .date, optional: true)
                e.toOne("account", "Account", inverse: "entries")
            }
        }
    }

    /// Accounts and their entries' amounts (each entry's weight and date follow its amount).
    static let accounts: [(String, [Double?])] = [
        ("order", [-1e16, 1e16, 1]),            // 0 added in ascending order, 1 in this one
        ("infinite", [.infinity, -.infinity]),  // NaN in any order
        ("plain", [1.5, nil, 2.5]),
        ("blank", [nil, nil]),                  // no values: a sum of 0, no mean
        ("none", []),
    ]

    /// A container on `store` holding ``accounts``, each account's entries made and joined in
    /// order (so SQL steps through them in that order: keys ascend).
    /// The accounts' store in a file, changed behind the store's back by `sql`, then opened
    /// again: the file and its container.
    static func damagedStore(_ sql: String) throws -> (url: URL, container: PersistentContainer) {
        let url = try SQLiteStoreTests.temporaryFile()
        try container(.sqlite(at: url)).close()
        try SQLiteDamagedStoreTests.execute(url, sql)
        return (url, try PersistentContainer(model: try model(), stores: [.sqlite(at: url)]))
    }

    static func container(_ store: StoreDescription) throws -> PersistentContainer {
        let container = try PersistentContainer(model: try model(), stores: [store])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for (name, amounts) in accounts {
                let account = try context.insertObject(entityName: "Account")
                try account.setValue(name, forKey: "name")
                for amount in amounts {
                    let entry = try context.insertObject(entityName: "Entry")
                    try entry.setValue(amount, forKey: "amount")
                    try entry.setValue(amount.map { Float($0) }, forKey: "weight")
                    try entry.setValue(amount.map { Date(timeIntervalSinceReferenceDate: $0) }, forKey: "at")
                    try entry.setValue(account, forKey: "account")
                }
            }
            try context.save()
        }
        return container
    }

    static let formats = [
        "entries.@sum.amount == 0", "entries.@sum.amount == 1", "entries.@sum.amount > 0", "entries.@sum.amount != 0",
        "entries.@sum.amount == nil", "entries.@sum.amount BETWEEN {-1, 5}", "entries.@sum.amount IN {0, 4}",
        "entries.@avg.amount == 2", "entries.@avg.amount >= 0", "entries.@avg.amount == nil", "entries.@avg.amount < 1",
        "entries.@sum.weight == 0", "entries.@avg.weight > 1", "entries.@sum.at == 0", "entries.@avg.at <= 2",
    ]

    @Test("@sum and @avg over doubles, floats and dates run in SQL and answer as the in-memory store does, term order, infinities and NaN included", arguments: formats)
    func sameAnswers(format: String) throws {
        let sqlite = try Self.container(.sqlite(at: try SQLiteStoreTests.temporaryFile()))
        let memory = try Self.container(.inMemory())
        let predicate = try FetchPredicate(format: format)
        func names(_ container: PersistentContainer, entity: String = "Account", through path: String = "") throws -> [String] {
            let context = container.newBackgroundContext()
            return try context.performAndWait {
                let predicate = path.isEmpty ? predicate : try FetchPredicate(format: format.replacingOccurrences(of: "entries.", with: path))
                let found = try context.fetch(FetchRequest<ManagedObject>(entityName: entity, predicate: predicate))
                return try found.map { object in
                    guard !path.isEmpty else { return try object.value(forKey: "name") as? String ?? "nil" }
                    let account = try (object.value(forKey: "account") as? ManagedObject)?.value(forKey: "name") as? String
                    return "\(account ?? "nil"): \(try object.value(forKey: "amount") as? Double ?? .nan)"
                }.sorted()
            }
        }
        let store = try #require(sqlite.coordinator.persistentStores.first)
        let answer = try store.fetch(StoreFetchRequest(entity: try Self.model().requireEntity("Account"), predicate: predicate))
        #expect(answer.applied.contains(.predicate), "\(format) runs in SQL")
        #expect(try names(sqlite) == names(memory), "\(format)")
        // Through a to-one first: each entry's account's entries.
        #expect(try names(sqlite, entity: "Entry", through: "account.entries.") == names(memory, entity: "Entry", through: "account.entries."), "\(format) through a to-one")
    }

    @Test("grouped @sum and @avg over doubles, floats and dates run in SQL and give the in-memory store's rows, a group without values included")
    func grouped() throws {
        let sqlite = try Self.container(.sqlite(at: try SQLiteStoreTests.temporaryFile()))
        let memory = try Self.container(.inMemory())
        let aggregates: [StoreAggregate] = [.count, .function(.sum, "amount"), .function(.average, "amount"), .function(.sum, "weight"),
                                                     .function(.average, "at"), .function(.sum, "at")]
        let grouping = StoreGrouping(keys: ["account.name"], aggregates: aggregates)
        let entries = try Self.model().requireEntity("Entry")
        let native = try #require(sqlite.coordinator.persistentStores.first).fetch(StoreFetchRequest(entity: entries, resultType: .groups(grouping)))
        #expect(native.applied.contains(.predicate), "answered in SQL")
        func rows(_ container: PersistentContainer) throws -> [String] {
            let context = container.newBackgroundContext()
            return try context.performAndWait {
                var request = FetchRequest<ManagedObject>(entityName: "Entry", sortKeys: [SortKey("name")])
                request.propertiesToFetch = [.key("account.name", as: "name"), .count(as: "n"), .sum("amount", as: "sum"), .average("amount", as: "mean"),
                                             .sum("weight", as: "weights"), .average("at", as: "when"), .sum("at", as: "seconds")]
                request.propertiesToGroupBy = ["account.name"]
                // (NaN equals nothing, so rows are compared by their descriptions.)
                return try context.fetchDictionaries(request).map(\.description)
            }
        }
        let expected = try rows(memory)
        #expect(expected.count == 4, "order, infinite, plain and blank have entries")
        let found = try rows(sqlite)
        #expect(found == expected)
    }

    @Test("the order of the terms does not decide a sum: -1e16, 1e16 and 1 sum to 0, as in ascending order, not to 1 as added in key order")
    func orderOfTerms() throws {
        let sqlite = try Self.container(.sqlite(at: try SQLiteStoreTests.temporaryFile()))
        let context = sqlite.newBackgroundContext()
        let names = try context.performAndWait {
            try context.fetch(FetchRequest<ManagedObject>(entityName: "Account", predicate: try FetchPredicate(format: "entries.@sum.amount == 0")))
                .compactMap { try $0.value(forKey: "name") as? String }.sorted()
        }
        #expect(names == ["blank", "none", "order"], "infinite sums to NaN, plain to 4, blank (no values) and none (no entries) to 0: \(names)")
    }

    @Test("a member value the row reader reads (text '5' in a double column) is the same number to og_sum; one it reports as damage ('abc', a blob) fails the fetch as corrupt, naming the file", arguments: ["'5'", "'abc'", "X'0102'"])
    func damagedMemberValue(literal: String) throws {
        let (url, container) = try Self.damagedStore("UPDATE \"Entry\" SET \"a:Entry.amount\" = \(literal) WHERE \"a:Entry.amount\" = 1.5")
        defer { container.close() }
        let context = container.newBackgroundContext()
        let predicate = try FetchPredicate(format: "entries.@sum.amount == 7.5")
        try context.performAndWait {
            let fetch = { try context.fetch(FetchRequest<ManagedObject>(entityName: "Account", predicate: predicate)).map { try $0.value(forKey: "name") as? String } }
            if literal == "'5'" {
                // plain: 5 (read from the text), nil and 2.5.
                let amounts = try context.fetch(FetchRequest<ManagedObject>(entityName: "Entry")).map { try $0.value(forKey: "amount") as? Double }
                #expect(amounts.contains(5))
                let names = try fetch()
                #expect(names == ["plain"])
            } else {
                let error = #expect(throws: StoreError.self) { _ = try fetch() }
                #expect(error?.code == .corrupt && error?.message.contains(url.path) == true, "\(String(describing: error))")
            }
        }
    }
}

