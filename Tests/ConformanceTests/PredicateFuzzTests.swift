import Foundation
import ObjectGraph
import ObjectGraphConformance
import Testing

/// Deterministic fuzzing of the predicate parser, compiler and every store's evaluation:
/// random comparisons over an entity with every comparable attribute type (all indexed, so
/// LMDB's index plans run), a to-one, a to-many and a many-to-many, with extreme numbers,
/// odd strings, lists, aggregates and SUBQUERY, some mutated into malformed formats, with
/// random sort keys, offsets and limits. Each format must parse or throw a
/// ``PredicateParseError``, and each fetch must give the same IDs and count on every store —
/// or the same ``ObjectGraphError`` code. Nothing may stop the process (the first run found
/// `double == -9223372036854775808` trapping in LMDB's index plan).
@Suite("Predicate fuzzing")
struct PredicateFuzzTests {
    static let cases = 1_500

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("T") { e in
                for (name, type) in [("s", AttributeType.string), ("i", .integer64), ("h", .integer16), ("d", .double), ("f", .float),
                                     ("b", .boolean), ("dt", .date)] {
                    e.attribute(name, type, optional: true, indexed: true)
                }
                e.attribute("dec", .decimal, optional: true)
                e.toOne("o", "O", inverse: "ts")
                e.toMany("ms", "M", inverse: "t")
                e.toMany("tags", "Tag", inverse: "ts")
            }
            m.entity("O") { e in
                e.attribute("name", .string, optional: true)
                e.toMany("ts", "T", inverse: "o")
            }
            m.entity("M") { e in
                e.attribute("v", .integer32, optional: true)
                e.attribute("t2", .string, optional: true)
                e.toOne("t", "T", inverse: "ms")
            }
            m.entity("Tag") { e in
                e.attribute("label", .string, optional: true)
                e.toMany("ts", "T", inverse: "tags")
            }
        }
    }

    static let strings: [String?] = ["a%b", "a_b", "a*b", "a\\b", "ab", "AB", "é", "e\u{301}", "ß", "SS", nil, "", "İ", "ı", "ﬁ", "👍🏽", "10", "9"]

    /// Saves the same graph in `context`'s store: 18 rows of T with owners, members and tags.
    static func populate(_ context: ManagedObjectContext) throws {
        try context.performAndWait {
            let owners = try (0..<3).map { k in
                let owner = try context.insertObject(entityName: "O")
                try owner.setValue(k == 2 ? nil : ["Émile", "zed"][k], forKey: "name")
                return owner
            }
            let tags = try ["red", "Red", nil].map { label in
                let tag = try context.insertObject(entityName: "Tag")
                try tag.setValue(label, forKey: "label")
                return tag
            }
            let doubles: [Double?] = [0, -0.0, 1.5, -9_223_372_036_854_775_808, .infinity, -.infinity, nil, 1e300, 2.5]
            let integers: [Int64?] = [0, 1, -1, .max, .min, nil, 3]
            for (n, s) in strings.enumerated() {
                let t = try context.insertObject(entityName: "T")
                try t.setValue(s, forKey: "s")
                try t.setValue(integers[n % integers.count], forKey: "i")
                try t.setValue(n % 5 == 0 ? nil : Int16(n % 7 - 3), forKey: "h")
                try t.setValue(doubles[n % doubles.count], forKey: "d")
                try t.setValue(n % 6 == 0 ? nil : Float(n % 4) / 2, forKey: "f")
                try t.setValue(n % 3 == 0 ? nil : n % 2 == 0, forKey: "b")
                try t.setValue(n % 7 == 0 ? nil : Date(timeIntervalSinceReferenceDate: Double(n % 5)), forKey: "dt")
                try t.setValue(n % 4 == 0 ? nil : Decimal(n % 5) - 2, forKey: "dec")
                if n % 5 != 4 { try t.setValue(owners[n % 3], forKey: "o") }
                for (k, tag) in tags.enumerated() where (n + k) % 3 == 0 { try t.add(tag, to: "tags") }
                for k in 0..<(n % 3) {
                    let m = try context.insertObject(entityName: "M")
                    try m.setValue(k == 1 ? nil : Int32(n % 4 + k), forKey: "v")
                    try m.setValue(strings[(n + k) % strings.count], forKey: "t2")
                    try m.setValue(t, forKey: "t")
                }
            }
            try context.save()
        }
    }

    static let operands = ["s", "i", "h", "d", "f", "b", "dt", "dec", "o", "o.name", "ms", "ms.v", "ms.t2", "tags", "tags.label",
                           "ms.@count", "ms.@sum.v", "ms.@avg.v", "ms.@max.t2", "o.ts.@count", "o.ts.@sum.d", "o.ts.@avg.dt", "tags.ts.@avg.f", "SELF", "nil", "YES", "0", "1", "-1", "2.5",
                           "1e308", "-1e400", "'a'", "'é'", "''", "'a*'", "'?%_'", "9223372036854775807", "-9223372036854775808",
                           "{}", "{1, 2}", "{'a', nil}", "{1.5, 'x'}", "%@", "%K", "%d", "SUBQUERY(ms, $m, $m.v > 1).@count"]
    static let operators = ["==", "!=", "<", "<=", ">", ">=", "IN", "BETWEEN", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE",
                            "MATCHES", "LIKE[c]", "==[cd]", "CONTAINS[d]", "IN[c]", "<[c]"]
    /// Substitution arguments (a function: `[Any?]` is not `Sendable`, so not a stored static).
    static func arguments() -> [Any?] { [nil, "s", "o.name", 3, 2.5, "x", [1, 2], Date(timeIntervalSinceReferenceDate: 0), Double.nan,
                                    Decimal(1), NSNull(), Int64.min, ["k": "a"]] }
    static let sortPaths = ["s", "d", "f", "b", "dt", "h", "i", "o.name", "dec", "ms.@count"]

    @Test("random predicates, sorts and ranges: a parse error or the same answer on every store, never a crash")
    func everyStoreAgrees() throws {
        var random = SplitMix64(seed: 20_261_127)
        let arguments = Self.arguments()
        func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &random)] }
        func comparison() -> String {
            // A number attribute against an extreme number, often (index plans and exact
            // integer-double comparisons live there).
            if Int.random(in: 0..<6, using: &random) == 0 {
                return pick(["d", "f", "i", "h", "dec"]) + " " + pick(["==", "<", ">=", "IN", "BETWEEN", "!="]) + " "
                    + pick(["-9223372036854775808", "9223372036854775807", "{-9223372036854775808, 0}", "1e308", "-1e400", "2.5"])
            }
            return (Int.random(in: 0..<8, using: &random) == 0 ? pick(["ANY ", "ALL ", "NONE "]) : "") + pick(Self.operands) + " " + pick(Self.operators) + " " + pick(Self.operands)
        }
        let model = try Self.model()
        let names = ["memory", "sqlite", "lmdb-indexed", "memory-no-pushdown"]
        var contexts: [(String, ManagedObjectContext)] = []
        var containers: [PersistentContainer] = []
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("objectgraph-fuzz-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        for backend in allBackends where names.contains(backend.name) {
            let directory = root.appendingPathComponent(backend.name)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let container = try PersistentContainer(model: model, stores: [backend.makeStore(directory)])
            try Self.populate(container.newBackgroundContext())
            containers.append(container)
            contexts.append((backend.name, container.newBackgroundContext()))
        }
        defer { containers.forEach { $0.close() } }
        #expect(contexts.count == names.count)
        var answered = 0
        for _ in 0..<Self.cases {
            var format = comparison()
            if Bool.random(using: &random) { format = "(\(format)) \(pick(["AND", "OR", "AND NOT"])) \(comparison())" }
            if Int.random(in: 0..<4, using: &random) == 0 {
                var words = format.split(separator: " ").map(String.init)
                let at = Int.random(in: 0..<words.count, using: &random)
                if Bool.random(using: &random) { words.remove(at: at) } else { words.insert(pick(["(", ")", "AND", "'", "{", "%", "[c]", "$x"]), at: at) }
                format = words.joined(separator: " ")
            }
            let specifiers = format.filter { $0 == "%" }.count
            let values = (0..<specifiers).map { _ in pick(arguments) }
            let predicate: FetchPredicate
            do { predicate = try FetchPredicate(format: format, argumentArray: values) } catch is PredicateParseError { continue }
            var request = FetchRequest<ManagedObject>(entityName: "T", predicate: predicate)
            request.sortKeys = (0..<Int.random(in: 0...2, using: &random)).map { _ in
                SortKey(pick(Self.sortPaths), ascending: Bool.random(using: &random), comparison: pick([.natural, .caseInsensitive, .localizedStandard]))
            }
            request.fetchOffset = pick([0, 0, 2])
            request.fetchLimit = pick([0, 0, 3])
            var answers: [String: String] = [:]
            for (name, context) in contexts {
                do {
                    let ids = try context.performAndWait { try context.fetchObjectIDs(request) }
                    let count = try context.performAndWait { try context.count(for: request) }
                    answers[name] = ids.map { "\($0.primaryKey ?? -1)" }.joined(separator: ",") + " (\(count))"
                } catch let error as ObjectGraphError {
                    answers[name] = "\(error.code)"
                } catch {
                    answers[name] = "untyped error \(error)"
                }
            }
            if !answers.values.contains(where: { $0 == "\(ObjectGraphError.Code.invalidFetch)" }) { answered += 1 }
            #expect(Set(answers.values).count == 1 && !answers.values.contains { $0.hasPrefix("untyped") }, "'\(format)' \(values): \(answers.sorted { $0.key < $1.key })")
        }
        #expect(answered >= Self.cases / 10, "only \(answered) of \(Self.cases) formats were answered: the generator drifted into errors")
    }
}
