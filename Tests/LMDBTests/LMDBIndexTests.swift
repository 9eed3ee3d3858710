import CLMDB
import Foundation
import ObjectGraph
import ObjectGraphInMemory
import ObjectGraphLMDB
import Testing

/// Fetches that the secondary indexes serve (lookups, ranges, IN, index-ordered sorts with
/// offsets and limits) must answer exactly as the in-memory store, which scans, does — on
/// values chosen to stress the order-preserving encoding: negative and signed-zero doubles,
/// NaN-free extremes, nil, strings in both normalization forms, with NUL bytes, longer than a
/// key, and dates before and after the reference date.
@Suite("LMDB secondary indexes")
struct LMDBIndexTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Item") { e in
                e.attribute("count", .integer64, optional: true, indexed: true)
                e.attribute("score", .double, optional: true, indexed: true)
                e.attribute("name", .string, optional: true, indexed: true)
                e.attribute("when", .date, optional: true, indexed: true)
                e.attribute("flag", .boolean, optional: true, indexed: true)
                e.attribute("code", .string, optional: true)
                e.unique("code")
            }
            m.entity("Special", parent: "Item") { e in e.attribute("extra", .integer16, optional: true) }
        }
    }

    static let longPrefix = String(repeating: "k", count: 600)
    static let counts: [Int64?] = [nil, .min, -5, -1, 0, 1, 2, 2, 5, 1 << 40, .max]
    static let scores: [Double?] = [nil, -.infinity, -1e300, -2.5, -0.0, 0.0, 1e-300, 2.5, 3, 1e300, .infinity]
    static let names: [String?] = [nil, "", "a", "a\u{0}", "a\u{0}b", "B", "b", "e\u{301}", "\u{E9}", "\u{E9}1", "z", longPrefix + "a", longPrefix + "b", longPrefix]
    static let dates: [Date?] = [nil, Date(timeIntervalSinceReferenceDate: -1e9), Date(timeIntervalSinceReferenceDate: -0.5), Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: 7e8)]

    static func fill(_ context: ManagedObjectContext) throws {
        for index in 0..<60 {
            let item = try context.insertObject(entityName: index % 4 == 0 ? "Special" : "Item")
            try item.setValue(counts[index % counts.count], forKey: "count")
            try item.setValue(scores[(index * 7) % scores.count], forKey: "score")
            try item.setValue(names[(index * 5) % names.count], forKey: "name")
            try item.setValue(dates[(index * 3) % dates.count], forKey: "when")
            try item.setValue(index % 3 == 0 ? nil : index % 3 == 1, forKey: "flag")
            try item.setValue("code-\(index)", forKey: "code")
        }
        try context.save()
        // Updates and deletes must move and drop index entries.
        let items = try context.fetch(FetchRequest<ManagedObject>(entityName: "Item", sortKeys: [SortKey("code")]))
        for (offset, item) in items.enumerated() where offset % 5 == 0 {
            try item.setValue(scores[(offset + 3) % scores.count], forKey: "score")
            try item.setValue(names[(offset + 1) % names.count], forKey: "name")
        }
        for (offset, item) in items.enumerated() where offset % 11 == 0 { context.delete(item) }
        try context.save()
    }

    static var formats: [(String, [Any?])] { [
        ("count == %@", [2]), ("count == nil", []), ("count != nil", []), ("count < %@", [1]), ("count >= %@", [0]),
        ("count BETWEEN {%@, %@}", [-5, 5]), ("count IN {%@, %@, %@}", [2, 2, -1]), ("count > %@ AND flag == YES", [-2]),
        ("score == %@", [0.0]), ("score == %@", [-0.0]), ("score < %@", [0]), ("score > %@", [-3]), ("score <= %@", [2.5]),
        ("score BETWEEN {%@, %@}", [-1e301, 3]), ("score == nil", []),
        ("name == %@", ["\u{E9}"]), ("name == %@", ["e\u{301}"]), ("name == %@", ["a\u{0}"]), ("name < %@", ["b"]),
        ("name > %@", ["a"]), ("name >= %@", [longPrefix]), ("name == %@", [longPrefix + "b"]), ("name IN %@", [["z", "B", "nope"]]),
        ("name == nil", []), ("name BEGINSWITH %@", ["a"]),
        ("when < %@", [Date(timeIntervalSinceReferenceDate: 0)]), ("when >= %@", [Date(timeIntervalSinceReferenceDate: -0.5)]),
        ("flag == NO", []), ("flag == nil", []), ("code == %@", ["code-7"]), ("count == %@ OR score == %@", [2, 2.5]),
    ] }
    static let sorts: [[SortKey]] = [
        [SortKey("count")], [SortKey("count", ascending: false)], [SortKey("score")], [SortKey("score", ascending: false)],
        [SortKey("name")], [SortKey("name", ascending: false), SortKey("count")], [SortKey("when"), SortKey("score", ascending: false)],
        [SortKey("flag", ascending: false)], [SortKey("name", comparison: .caseInsensitive)],
    ]

    @Test("lookups, ranges and index-ordered sorts answer as the scanning in-memory store does")
    func indexAnswersMatchScan() throws {
        let url = try LMDBFixture.temporaryFile()
        let lmdb = try PersistentContainer(model: try Self.model(), stores: [.lmdb(at: url)])
        let memory = try PersistentContainer(model: try Self.model(), stores: [.inMemory()])
        let contexts = [lmdb.newBackgroundContext(), memory.newBackgroundContext()]
        for context in contexts { try context.performAndWait { try Self.fill(context) } }
        func codes(_ context: ManagedObjectContext, _ request: FetchRequest<ManagedObject>) throws -> ([String?], Int) {
            try context.performAndWait {
                (try context.fetch(request).map { try $0.value(forKey: "code") as? String }, try context.count(for: request))
            }
        }
        var compared = 0
        for entity in ["Item", "Special"] {
            for (format, arguments) in Self.formats {
                for (sortIndex, sortKeys) in ([[]] + Self.sorts).enumerated() {
                    for (offset, limit) in [(0, 0), (1, 3), (0, 1)] where sortIndex > 0 || (offset, limit) == (0, 0) {
                        var request = FetchRequest<ManagedObject>(entityName: entity, predicate: try FetchPredicate(format: format, argumentArray: arguments), sortKeys: sortKeys)
                        request.fetchOffset = offset
                        request.fetchLimit = limit
                        let fromLMDB = try codes(contexts[0], request)
                        let fromMemory = try codes(contexts[1], request)
                        #expect(fromLMDB.0 == fromMemory.0, "\(entity) '\(format)' \(arguments) sorted by \(sortKeys.map(\.keyPath)) offset \(offset) limit \(limit)")
                        #expect(fromLMDB.1 == fromMemory.1, "count of \(entity) '\(format)' \(arguments)")
                        compared += 1
                    }
                }
            }
        }
        #expect(compared > 1000)
        lmdb.close()
        memory.close()
    }

    @Test("equality, range and both sorted fetches on an indexed attribute are answered from its index, not by a scan")
    func indexPathIsTaken() throws {
        let url = try LMDBFixture.temporaryFile()
        let titles = ["d1", "d2", "d3", "d4", "d5"]
        let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for (index, title) in titles.enumerated() {
                let doc = try context.insertObject(entityName: "Doc")
                try doc.setValue(title, forKey: "title")
                try doc.setValue(Double(index + 1), forKey: "rank")
            }
            try context.save()
        }
        container.close()
        // Each fetch's titles, in the answer's order. The `rank` ones are those the index
        // serves; the `title` ones (no index) and the unsorted fetch of all scan the rows.
        func answers() throws -> [String: [String]] {
            let reopened = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
            defer { reopened.close() }
            let context = reopened.newBackgroundContext()
            let requests: [String: FetchRequest<ManagedObject>] = [
                "rank ==": FetchRequest(entityName: "Doc", predicate: key("rank") == 3.0),
                "rank >": FetchRequest(entityName: "Doc", predicate: key("rank") > 1.0, sortKeys: [SortKey("title")]),
                "by rank": FetchRequest(entityName: "Doc", sortKeys: [SortKey("rank")]),
                "by rank descending": FetchRequest(entityName: "Doc", sortKeys: [SortKey("rank", ascending: false)]),
                "all": FetchRequest(entityName: "Doc"),
                "title ==": FetchRequest(entityName: "Doc", predicate: key("title") == "d3"),
                "by title": FetchRequest(entityName: "Doc", sortKeys: [SortKey("title", ascending: false)]),
            ]
            return try context.performAndWait {
                var answers = try requests.mapValues { request in
                    try context.fetch(request).map { try $0.value(forKey: "title") as? String ?? "?" }
                }
                // A count with the index's predicate takes the index too.
                answers["count rank =="] = [String(try context.count(for: requests["rank =="]!))]
                return answers
            }
        }
        // With the index intact every fetch is right, so an empty answer below can only be
        // the index's.
        #expect(try answers() == [
            "rank ==": ["d3"], "rank >": ["d2", "d3", "d4", "d5"], "by rank": titles, "by rank descending": titles.reversed(),
            "all": titles, "title ==": ["d3"], "by title": titles.reversed(), "count rank ==": ["1"],
        ])
        // Empty the index's database, keeping the database and the metadata listing it as
        // maintained (so the next open does not rebuild it) and every row.
        try LMDBFixture.withRawEnvironment(url) { _, txn in
            var index: MDB_dbi = 0, rows: MDB_dbi = 0
            #expect(mdb_dbi_open(txn, "og:i:Doc.rank", UInt32(MDB_DUPSORT), &index) == MDB_SUCCESS)
            #expect(mdb_dbi_open(txn, "og:rows:Doc", 0, &rows) == MDB_SUCCESS)
            var stat = MDB_stat()
            #expect(mdb_stat(txn, index, &stat) == MDB_SUCCESS && stat.ms_entries == titles.count)
            #expect(mdb_drop(txn, index, 0) == MDB_SUCCESS)
            #expect(mdb_stat(txn, rows, &stat) == MDB_SUCCESS && stat.ms_entries == titles.count)
        }
        #expect(try answers() == [
            "rank ==": [], "rank >": [], "by rank": [], "by rank descending": [], "count rank ==": ["0"],
            "all": titles, "title ==": ["d3"], "by title": titles.reversed(),
        ])
    }
}
