import Foundation
import ObjectGraph

/// Predicates written as NSPredicate format strings, so the parser runs on every store: every
/// operator against every attribute type of `AllTypes`, with `nil` values in the data set.
///
/// Each check runs twice: in a context without changes (the store answers) and in a context
/// where every row has an unsaved change and one unsaved all-`nil` row was inserted (the
/// context answers over live objects). Both must agree. Non-ASCII text is in
/// PredicateScenarios+Text.swift, relationships and aggregates in PredicateScenarios+Graph.swift,
/// sorting and paging in PredicateScenarios+Results.swift, prefetching and pending changes in
/// PredicateScenarios+Pending.swift, formats and errors in PredicateScenarios+Syntax.swift.
enum PredicateScenarios {
    static let all: [ConformanceScenario] = typed + errors + text + graph + results + pending + numbers

    static let base = Date(timeIntervalSinceReferenceDate: 700_000_000)
    static let uuidA = UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!
    static let uuidB = UUID(uuidString: "00000000-0000-0000-0000-00000000000B")!
    static let uuidC = UUID(uuidString: "C0000000-0000-0000-0000-000000000000")!
    static let urlA = URL(string: "https://example.com/a")!
    static let urlB = URL(string: "https://example.com/b")!
    static let urlC = URL(string: "ftp://example.org/x")!
    /// 2^53 + 1: the first integer a Double cannot hold.
    static let beyondDouble: Int64 = 9_007_199_254_740_993

    /// The `AllTypes` rows of the typed scenarios (row 3 is all `nil`):
    ///
    /// | row | int16 | int32 | int64     | double | float | decimal   | string      | bool  | date       | data   | uuid | uri  |
    /// |-----|-------|-------|-----------|--------|-------|-----------|-------------|-------|------------|--------|------|------|
    /// | 0   | 1     | -5    | 2^53 + 1  | 1.5    | 0.5   | 1.25      | "alpha"     | true  | base       | 01 02  | A    | a    |
    /// | 1   | 2     | 0     | -1        | -2.0   | 2.25  | 2.50      | "Beta"      | false | base + 0.5 | 01 03  | B    | b    |
    /// | 2   | 3     | 7     | 3         | 3.0    | -1.0  | -0.1      | "gamma ray" | true  | base − 1 d | 00     | C    | ftp  |
    /// | 3   | nil   | nil   | nil       | nil    | nil   | nil       | nil         | nil   | nil        | nil    | nil  | nil  |
    /// | 4   | -4    | 7     | 0         | 0.0    | 0.5   | 0         | ""          | false | base + 1 d | (empty)| A    | a    |
    /// | 5   | 32767 | nil   | Int64.min | 1e300  | nil   | 1.2…e19+.5| "Alpha"     | nil   | nil        | FF     | nil  | nil  |
    static var typedRows: [[String: Any]] {
        [
            ["int16": 1, "int32": -5, "int64": beyondDouble, "double": 1.5, "float": Float(0.5), "decimal": Decimal(string: "1.25")!,
             "string": "alpha", "bool": true, "date": base, "data": Data([1, 2]), "uuid": uuidA, "uri": urlA],
            ["int16": 2, "int32": 0, "int64": -1, "double": -2.0, "float": Float(2.25), "decimal": Decimal(string: "2.50")!,
             "string": "Beta", "bool": false, "date": base.addingTimeInterval(0.5), "data": Data([1, 3]), "uuid": uuidB, "uri": urlB],
            ["int16": 3, "int32": 7, "int64": 3, "double": 3.0, "float": Float(-1), "decimal": Decimal(string: "-0.1")!,
             "string": "gamma ray", "bool": true, "date": base.addingTimeInterval(-86_400), "data": Data([0]), "uuid": uuidC, "uri": urlC],
            [:],
            ["int16": -4, "int32": 7, "int64": 0, "double": 0.0, "float": Float(0.5), "decimal": Decimal(0),
             "string": "", "bool": false, "date": base.addingTimeInterval(86_400), "data": Data(), "uuid": uuidA, "uri": urlA],
            ["int16": Int16.max, "int64": Int64.min, "double": 1e300, "decimal": Decimal(string: "12345678901234567890.5")!,
             "string": "Alpha", "data": Data([255])],
        ]
    }

    /// Rows of one entity saved to the store under test, seen through two contexts: `clean`
    /// has no changes (the store evaluates predicates), `dirty` has an unsaved change on every
    /// row and one unsaved insert that copies the all-`nil` row (the context evaluates them).
    struct Fixture {
        let entityName: String
        let clean: ManagedObjectContext
        let dirty: ManagedObjectContext
        let ids: [ObjectID]
        /// The row the unsaved insert copies; the insert matches wherever this row does.
        let copiedRow: Int?

        /// Saves `AllTypes` rows (key → value), reopens the store and prepares both contexts.
        /// The dirty context bumps `defaulted` on every row (no scenario filters on it) and, when
        /// `rows` has an empty (all-`nil`) row, inserts an unsaved copy of it.
        static func allTypes(_ env: ScenarioEnvironment, _ rows: [[String: Any]] = typedRows) throws -> Fixture {
            let (clean, ids) = try AttributeScenarios.saveAndReopen(env, rows)
            let copiedRow = rows.firstIndex { $0.isEmpty }
            let dirty = env.newContext()
            try dirty.performAndWait {
                for object in try dirty.fetch(FetchRequest<ManagedObject>(entityName: "AllTypes")) {
                    try object.setValue(Int32(43), forKey: "defaulted")
                }
                if copiedRow != nil { _ = try dirty.insertObject(entityName: "AllTypes") }
                try checkEqual(dirty.updatedObjects.count, rows.count, "every row is an unsaved update in the dirty context")
            }
            return Fixture(entityName: "AllTypes", clean: clean, dirty: dirty, ids: ids, copiedRow: copiedRow)
        }

        /// ``allTypes(_:_:)`` with one row per string, in the `string` attribute.
        static func strings(_ env: ScenarioEnvironment, _ strings: [String]) throws -> Fixture {
            try allTypes(env, strings.map { ["string": $0] })
        }

        /// The rows matching `format` in `context`, as indices into ``ids`` (the unsaved insert
        /// is `ids.count`), in result order.
        func rows(_ context: ManagedObjectContext, _ format: String, _ arguments: [Any?], variables: [String: AttributeValue] = [:]) throws -> [Int] {
            let predicate = try FetchPredicate(format: format, argumentArray: arguments)
            var request = FetchRequest<ManagedObject>(entityName: entityName, predicate: predicate)
            request.substitutionVariables = variables
            return try context.performAndWait {
                let found = try context.fetchObjectIDs(request).map { id in ids.firstIndex(of: id) ?? ids.count }
                try checkEqual(try context.count(for: request), found.count, "count(for:) agrees with the fetch of '\(format)'")
                return found
            }
        }

        /// Checks that `format` (with `arguments`) matches exactly the rows `expected`, in
        /// both contexts.
        func expect(_ format: String, _ arguments: Any?..., rows expected: [Int], _ label: String = "", variables: [String: AttributeValue] = [:], file: String = #filePath, line: Int = #line) throws {
            let what = label.isEmpty ? format : "\(format) — \(label)"
            try checkEqual(try rows(clean, format, arguments, variables: variables), expected.sorted(), "\(what) [store]", file: file, line: line)
            var pending = expected.sorted()
            if let copiedRow, expected.contains(copiedRow) { pending.append(ids.count) }
            try checkEqual(try rows(dirty, format, arguments, variables: variables), pending, "\(what) [pending changes]", file: file, line: line)
        }

        /// Checks that `format` is refused with ``ObjectGraphError/Code/invalidFetch`` (or, if it
        /// does not parse, with a ``PredicateParseError``) in both contexts.
        func expectInvalid(_ format: String, _ arguments: Any?..., file: String = #filePath, line: Int = #line) throws {
            for context in [clean, dirty] {
                do {
                    _ = try rows(context, format, arguments)
                    throw ScenarioFailure(message: "'\(format)' was accepted; expected an invalid-fetch error", file: file, line: line)
                } catch let error as ObjectGraphError {
                    try checkEqual(error.code, .invalidFetch, "code for '\(format)' (\(error.message))", file: file, line: line)
                } catch is PredicateParseError {
                    continue
                }
            }
        }
    }

    static let typed: [ConformanceScenario] = [
        ConformanceScenario("predicates.integers.everyOperator") { env in
            let rows = try Fixture.allTypes(env)
            // int16: 1, 2, 3, nil, -4, 32767 — nil is never <, >, == or BETWEEN anything, and is != every value.
            try rows.expect("int16 == 2", rows: [1])
            try rows.expect("int16 = 2", rows: [1], "= is ==")
            try rows.expect("int16 != 2", rows: [0, 2, 3, 4, 5], "nil != 2 holds")
            try rows.expect("int16 <> 2", rows: [0, 2, 3, 4, 5], "<> is !=")
            try rows.expect("int16 < 2", rows: [0, 4])
            try rows.expect("int16 <= 2", rows: [0, 1, 4])
            try rows.expect("int16 > 2", rows: [2, 5])
            try rows.expect("int16 >= 2", rows: [1, 2, 5])
            try rows.expect("int16 IN {1, 3, 99}", rows: [0, 2])
            try rows.expect("int16 IN %@", [Int16(1), Int16(-4)], rows: [0, 4], "IN with an array argument")
            try rows.expect("int16 BETWEEN {-4, 2}", rows: [0, 1, 4], "BETWEEN is inclusive at both ends")
            try rows.expect("int16 BETWEEN %@", [2, 3], rows: [1, 2])
            try rows.expect("int16 == 2.0", rows: [1], "an integer equals an integral double")
            try rows.expect("int16 < 1.5", rows: [0, 4], "and orders against a fractional one")
            try rows.expect("int16 == %d", 32767, rows: [5], "%d")
            try rows.expect("int16 >= %i", 3, rows: [2, 5], "%i")
            try rows.expect("3 > int16", rows: [0, 1, 4], "a constant on the left")
            try rows.expect("NOT int16 > 2", rows: [0, 1, 3, 4], "NOT of a comparison with nil holds")
            // int32: -5, 0, 7, nil, 7, nil
            try rows.expect("int32 == 7", rows: [2, 4])
            try rows.expect("int32 != 7", rows: [0, 1, 3, 5])
            try rows.expect("int32 < 0", rows: [0])
            try rows.expect("int32 <= 0", rows: [0, 1])
            try rows.expect("int32 > -5", rows: [1, 2, 4])
            try rows.expect("int32 >= -5", rows: [0, 1, 2, 4])
            try rows.expect("int32 IN {0, 7}", rows: [1, 2, 4])
            try rows.expect("int32 BETWEEN {-5, 0}", rows: [0, 1])
            try rows.expect("int32 == nil", rows: [3, 5])
            // int64: 2^53 + 1, -1, 3, nil, 0, Int64.min — compared exactly, never through Double.
            try rows.expect("int64 == %lld", beyondDouble, rows: [0], "%lld")
            try rows.expect("int64 > %f", 9_007_199_254_740_992.0, rows: [0], "2^53 + 1 > 2^53 although a Double cannot tell them apart")
            try rows.expect("int64 == %@", 9_007_199_254_740_992.0, rows: [], "and is not equal to it")
            try rows.expect("int64 < 0", rows: [1, 5])
            try rows.expect("int64 <= 0", rows: [1, 4, 5])
            try rows.expect("int64 >= 3", rows: [0, 2])
            try rows.expect("int64 != 0", rows: [0, 1, 2, 3, 5])
            try rows.expect("int64 IN {-1, 3}", rows: [1, 2])
            try rows.expect("int64 BETWEEN {-1, 3}", rows: [1, 2, 4])
            try rows.expect("int64 == %@", Int64.min, rows: [5], "Int64.min")
            try rows.expect("int64 < -9.2e18", rows: [5], "an integer against a large negative double")
            try rows.expect("%K > %ld", "int64", 2, rows: [0, 2], "%K and %ld")
        },
        ConformanceScenario("predicates.floatingPoint.everyOperator") { env in
            let rows = try Fixture.allTypes(env)
            // double: 1.5, -2.0, 3.0, nil, 0.0, 1e300
            try rows.expect("double == 1.5", rows: [0])
            try rows.expect("double != 1.5", rows: [1, 2, 3, 4, 5])
            try rows.expect("double < 0", rows: [1])
            try rows.expect("double <= 0", rows: [1, 4])
            try rows.expect("double > 1.5", rows: [2, 5])
            try rows.expect("double >= 1.5", rows: [0, 2, 5])
            try rows.expect("double IN {3, -2}", rows: [1, 2], "integer constants in a list")
            try rows.expect("double BETWEEN {0, 3}", rows: [0, 2, 4])
            try rows.expect("double == 3", rows: [2])
            try rows.expect("double > %f", 1e299, rows: [5], "%f")
            try rows.expect("double == -0.0", rows: [4], "-0.0 == 0.0")
            try rows.expect("double == %@", 1.5, rows: [0])
            // float (held as Double): 0.5, 2.25, -1.0, nil, 0.5, nil
            try rows.expect("float == 0.5", rows: [0, 4])
            try rows.expect("float != 0.5", rows: [1, 2, 3, 5])
            try rows.expect("float < 0.5", rows: [2])
            try rows.expect("float <= 0.5", rows: [0, 2, 4])
            try rows.expect("float > 0.5", rows: [1])
            try rows.expect("float >= -1", rows: [0, 1, 2, 4])
            try rows.expect("float IN {2.25, -1}", rows: [1, 2])
            try rows.expect("float BETWEEN {0, 1}", rows: [0, 4])
            try rows.expect("float == %@", Float(2.25), rows: [1], "a Float argument")
            try rows.expect("float == nil", rows: [3, 5])
        },
        ConformanceScenario("predicates.decimal.everyOperator") { env in
            let rows = try Fixture.allTypes(env)
            let d = { (text: String) in Decimal(string: text)! }
            // decimal: 1.25, 2.50, -0.1, nil, 0, 12345678901234567890.5
            try rows.expect("decimal == %@", d("2.5"), rows: [1], "2.50 == 2.5")
            try rows.expect("decimal == 2.5", rows: [1], "against a double")
            try rows.expect("decimal == 0", rows: [4], "against an integer")
            try rows.expect("decimal != 2.5", rows: [0, 2, 3, 4, 5])
            try rows.expect("decimal < 0", rows: [2])
            try rows.expect("decimal <= 0", rows: [2, 4])
            try rows.expect("decimal > 1.25", rows: [1, 5])
            try rows.expect("decimal >= %@", d("1.25"), rows: [0, 1, 5])
            try rows.expect("decimal IN {0, 2.5}", rows: [1, 4])
            try rows.expect("decimal BETWEEN %@", [d("-0.1"), d("1.25")], rows: [0, 2, 4])
            try rows.expect("decimal > %@", d("12345678901234567890"), rows: [5], "beyond Double precision, decimals compare exactly")
            try rows.expect("decimal == nil", rows: [3])
        },
        ConformanceScenario("predicates.strings.everyOperator") { env in
            let rows = try Fixture.allTypes(env)
            // string: "alpha", "Beta", "gamma ray", nil, "", "Alpha". Natural order is by Unicode
            // scalars: "" < "Alpha" < "Beta" < "alpha" < "gamma ray". nil is not the empty string.
            try rows.expect("string == 'alpha'", rows: [0])
            try rows.expect("string == \"alpha\"", rows: [0], "double quotes")
            try rows.expect("string != 'alpha'", rows: [1, 2, 3, 4, 5])
            try rows.expect("string ==[c] 'ALPHA'", rows: [0, 5])
            try rows.expect("string < 'alpha'", rows: [1, 4, 5])
            try rows.expect("string <= 'alpha'", rows: [0, 1, 4, 5])
            try rows.expect("string > 'Beta'", rows: [0, 2])
            try rows.expect("string >= 'Beta'", rows: [0, 1, 2])
            try rows.expect("string <[c] 'b'", rows: [0, 4, 5], "ordering with [c] compares folded strings")
            try rows.expect("string IN {'Beta', 'delta', ''}", rows: [1, 4])
            try rows.expect("string IN[c] {'BETA'}", rows: [1])
            try rows.expect("string BETWEEN {'Alpha', 'Beta'}", rows: [1, 5])
            try rows.expect("string BEGINSWITH 'al'", rows: [0])
            try rows.expect("string BEGINSWITH[c] 'AL'", rows: [0, 5])
            try rows.expect("string BEGINSWITH ''", rows: [0, 1, 2, 4, 5], "an empty prefix begins every present string, never nil")
            try rows.expect("string ENDSWITH 'a'", rows: [0, 1, 5])
            try rows.expect("string ENDSWITH 'ray'", rows: [2])
            try rows.expect("string CONTAINS 'ph'", rows: [0, 5])
            try rows.expect("string CONTAINS ' '", rows: [2])
            try rows.expect("string CONTAINS[c] 'ET'", rows: [1])
            try rows.expect("string CONTAINS ''", rows: [0, 1, 2, 4, 5])
            try rows.expect("string LIKE 'al*'", rows: [0])
            try rows.expect("string LIKE[c] 'al*'", rows: [0, 5])
            try rows.expect("string LIKE '*a'", rows: [0, 1, 5])
            try rows.expect("string LIKE '?eta'", rows: [1])
            try rows.expect("string LIKE '*'", rows: [0, 1, 2, 4, 5], "* matches the empty string too")
            try rows.expect("string LIKE ''", rows: [4])
            try rows.expect("string MATCHES '[a-z]+'", rows: [0], "the whole string must match")
            try rows.expect("string MATCHES '.*a'", rows: [0, 1, 5])
            try rows.expect("string MATCHES[c] 'ALPHA'", rows: [0, 5])
            try rows.expect("string MATCHES ''", rows: [4])
            try rows.expect("string MATCHES 'gamma|gamma ray'", rows: [2], "an alternation matches the whole string")
            try rows.expect("NOT string BEGINSWITH 'a'", rows: [1, 2, 3, 4, 5], "NOT of a string operator holds for nil")
            try rows.expect("string == nil", rows: [3])
            try rows.expect("string != nil", rows: [0, 1, 2, 4, 5], "the empty string is present")
        },
        ConformanceScenario("predicates.booleans.everyOperator") { env in
            let rows = try Fixture.allTypes(env)
            // bool: true, false, true, nil, false, nil
            try rows.expect("bool == YES", rows: [0, 2])
            try rows.expect("bool == TRUE", rows: [0, 2])
            try rows.expect("bool == true", rows: [0, 2], "keywords are case-insensitive")
            try rows.expect("bool == NO", rows: [1, 4])
            try rows.expect("bool != YES", rows: [1, 3, 4, 5], "nil is not YES")
            try rows.expect("bool == %@", true, rows: [0, 2])
            try rows.expect("bool IN {YES}", rows: [0, 2])
            try rows.expect("bool > NO", rows: [0, 2], "NO < YES")
            try rows.expect("bool <= NO", rows: [1, 4])
            try rows.expect("bool == 1", rows: [0, 2], "1 is YES, as NSNumber has it")
            try rows.expect("bool == 0", rows: [1, 4], "0 is NO")
            try rows.expect("1 == bool", rows: [0, 2], "on either side")
            try rows.expect("bool IN {0}", rows: [1, 4], "and in a list")
            try rows.expect("bool == nil", rows: [3, 5])
            try rows.expect("NOT bool == YES", rows: [1, 3, 4, 5])
        },
        ConformanceScenario("predicates.dates.everyOperator") { env in
            let rows = try Fixture.allTypes(env)
            let day: TimeInterval = 86_400
            // date: base, base + 0.5 s, base − 1 day, nil, base + 1 day, nil
            try rows.expect("date == %@", base, rows: [0])
            try rows.expect("date != %@", base, rows: [1, 2, 3, 4, 5])
            try rows.expect("date < %@", base, rows: [2])
            try rows.expect("date <= %@", base, rows: [0, 2])
            try rows.expect("date > %@", base, rows: [1, 4], "half a second later is later")
            try rows.expect("date >= %@", base, rows: [0, 1, 4])
            try rows.expect("date BETWEEN %@", [base.addingTimeInterval(-day), base.addingTimeInterval(0.5)], rows: [0, 1, 2])
            try rows.expect("date IN %@", [base, base.addingTimeInterval(day)], rows: [0, 4])
            try rows.expect("date == %@", base.addingTimeInterval(0.25), rows: [], "no rounding to seconds")
            try rows.expect("date == nil", rows: [3, 5])
        },
        ConformanceScenario("predicates.binaryUUIDAndURI.everyOperator") { env in
            let rows = try Fixture.allTypes(env)
            // data: 01 02, 01 03, 00, nil, (empty), FF — ordered bytewise, the empty one first.
            try rows.expect("data == %@", Data([1, 3]), rows: [1])
            try rows.expect("data != %@", Data([1, 3]), rows: [0, 2, 3, 4, 5])
            try rows.expect("data < %@", Data([1, 3]), rows: [0, 2, 4])
            try rows.expect("data >= %@", Data([1, 2]), rows: [0, 1, 5])
            try rows.expect("data IN %@", [Data([0]), Data([255])], rows: [2, 5])
            try rows.expect("data BETWEEN %@", [Data([0]), Data([1, 2])], rows: [0, 2])
            try rows.expect("data == %@", Data(), rows: [4], "empty data is present, not nil")
            try rows.expect("data == nil", rows: [3])
            // uuid: A, B, C, nil, A, nil — ordered by their string form.
            try rows.expect("uuid == %@", uuidA, rows: [0, 4])
            try rows.expect("uuid != %@", uuidA, rows: [1, 2, 3, 5])
            try rows.expect("uuid IN %@", [uuidB, uuidC], rows: [1, 2])
            try rows.expect("uuid > %@", uuidA, rows: [1, 2])
            try rows.expect("uuid == nil", rows: [3, 5])
            // uri: https://example.com/a, …/b, ftp://example.org/x, nil, …/a, nil — ordered by absolute string.
            try rows.expect("uri == %@", urlA, rows: [0, 4])
            try rows.expect("uri != %@", urlA, rows: [1, 2, 3, 5])
            try rows.expect("uri IN %@", [urlB, urlC], rows: [1, 2])
            try rows.expect("uri < %@", urlB, rows: [0, 2, 4])
            try rows.expect("uri == nil", rows: [3, 5])
        },
        ConformanceScenario("predicates.nil.everyAttributeType") { env in
            let rows = try Fixture.allTypes(env)
            let present: [String: [Int]] = [
                "int16": [0, 1, 2, 4, 5], "int32": [0, 1, 2, 4], "int64": [0, 1, 2, 4, 5], "double": [0, 1, 2, 4, 5],
                "float": [0, 1, 2, 4], "decimal": [0, 1, 2, 4, 5], "string": [0, 1, 2, 4, 5], "bool": [0, 1, 2, 4],
                "date": [0, 1, 2, 4], "data": [0, 1, 2, 4, 5], "uuid": [0, 1, 2, 4], "uri": [0, 1, 2, 4],
            ]
            for (key, presentRows) in present.sorted(by: { $0.key < $1.key }) {
                let missing = (0..<6).filter { !presentRows.contains($0) }
                try rows.expect("%K == nil", key, rows: missing, "\(key): == nil matches a missing value")
                try rows.expect("%K = NULL", key, rows: missing, "\(key): NULL is nil")
                try rows.expect("nil == %K", key, rows: missing, "\(key): nil on the left")
                try rows.expect("%K != nil", key, rows: presentRows, "\(key): != nil matches a present value")
                try rows.expect("NOT (%K == nil)", key, rows: presentRows, "\(key): NOT == nil")
                try rows.expect("%K == nil OR %K != nil", key, key, rows: Array(0..<6), "\(key): every row is one or the other")
            }
        },
    ]
}
