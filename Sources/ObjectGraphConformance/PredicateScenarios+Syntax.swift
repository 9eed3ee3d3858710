import Foundation
import ObjectGraph

/// Format-string spellings, `$VARIABLE`s and `%K`, and requests every store must refuse
/// (operators on attribute types they do not apply to, malformed formats) — on the typed rows
/// of ``PredicateScenarios/typedRows``.
extension PredicateScenarios {
    /// Fails unless parsing `format` throws a ``PredicateParseError`` at `position`.
    static func expectParseError(_ format: String, _ arguments: Any?..., at position: Int, file: String = #filePath, line: Int = #line) throws {
        let error = try checkThrows(PredicateParseError.self, "parsing '\(format)'", file: file, line: line) {
            _ = try FetchPredicate(format: format, argumentArray: arguments)
        }
        try checkEqual(error.position, position, "position of the parse error in '\(format)' (\(error))", file: file, line: line)
    }

    static let errors: [ConformanceScenario] = [
        ConformanceScenario("predicates.syntax.alternativeSpellings") { env in
            let rows = try Fixture.allTypes(env)
            try rows.expect("int16 =< 2", rows: [0, 1, 4], "=< is <=")
            try rows.expect("int16 => 2", rows: [1, 2, 5], "=> is >=")
            try rows.expect("int16 > 1 && int16 < 3", rows: [1], "&& is AND")
            try rows.expect("int16 == 1 || int16 == 3", rows: [0, 2], "|| is OR")
            try rows.expect("!(int16 == 1)", rows: [1, 2, 3, 4, 5], "! is NOT")
            try rows.expect("NOT NOT int16 == 1", rows: [0], "double negation")
            try rows.expect("int16 == 1 and int32 == -5", rows: [0], "keywords in lower case")
            try rows.expect("int16 == 1 OR int16 == 2 AND int32 == 0", rows: [0, 1], "AND binds tighter than OR")
            try rows.expect("(int16 == 1 OR int16 == 2) AND int32 == 0", rows: [1], "parentheses")
            try rows.expect("{1, 3} CONTAINS int16", rows: [0, 2], "a list CONTAINS a value is IN")
            try rows.expect("TRUEPREDICATE", rows: [0, 1, 2, 3, 4, 5])
            try rows.expect("FALSEPREDICATE", rows: [])
            try rows.expect("  int16\n  ==\t1  ", rows: [0], "whitespace and newlines")
            try rows.expect("int16 == %@", nil, rows: [3], "a nil argument is nil")
            try rows.expect("%K BEGINSWITH %@", "string", "al", rows: [0], "%K names the key")
            try rows.expect("%K IN %@", "uuid", [uuidA, uuidC], rows: [0, 2, 4], "%K with a collection argument")
            try rows.expect("int64 == %ld OR int64 == %lld", -1, Int64(3), rows: [1, 2], "several specifiers, consumed in order")
        },
        ConformanceScenario("predicates.syntax.variables") { env in
            let rows = try Fixture.allTypes(env)
            try rows.expect("$LOW <= int16 AND int16 <= $HIGH", rows: [0, 1, 2], variables: ["LOW": 1, "HIGH": 3])
            try rows.expect("$LOW <= int16 AND int16 <= $HIGH", rows: [1, 2, 5], "the same format, other values", variables: ["LOW": 2, "HIGH": .integer(Int64(Int16.max))])
            try rows.expect("string BEGINSWITH[c] $PREFIX", rows: [0, 5], variables: ["PREFIX": "AL"])
            try rows.expect("%K == $V", "int32", rows: [2, 4], "%K with a variable", variables: ["V": 7])
            try rows.expect("int16 == $V", rows: [3], "a variable holding nil", variables: ["V": .null])
            try rows.expect("date > $WHEN", rows: [1, 4], "a date variable", variables: ["WHEN": .date(base)])
            try rows.expect("decimal == $D", rows: [1], variables: ["D": .decimal(Decimal(string: "2.5")!)])
            try rows.expect("uuid == $U OR uri == $L", rows: [0, 1, 4], "UUID and URI variables", variables: ["U": .uuid(uuidB), "L": .uri(urlA)])
            try rows.expect("string IN {$A, $B}", rows: [1, 2], "variables inside a list", variables: ["A": "Beta", "B": "gamma ray"])
            try rows.expectInvalid("int16 == $MISSING")
            for context in [rows.clean, rows.dirty] {
                let error = try checkThrows(ObjectGraphError.self, "a variable without a value") {
                    _ = try rows.rows(context, "int16 > $LOW AND int16 < $HIGH", [], variables: ["LOW": 1])
                }
                try checkEqual(error.code, .invalidFetch, "code")
                try check(error.message.contains("HIGH"), "the error names the variable: \(error.message)")
            }
        },
        ConformanceScenario("predicates.errors.operatorsOnWrongTypes") { env in
            let rows = try Fixture.allTypes(env)
            // String operators need a string attribute; a URI is not a string.
            for format in [
                "int16 BEGINSWITH '1'", "double ENDSWITH '5'", "date LIKE '*'", "uuid MATCHES '.*'",
                "bool BEGINSWITH 'Y'", "uri BEGINSWITH 'https'", "data LIKE '*'", "decimal MATCHES '1.*'",
                "int16 CONTAINS 1", "int32 CONTAINS '7'", "date CONTAINS 'x'", "uri CONTAINS 'example'", "data CONTAINS 'a'",
            ] {
                try rows.expectInvalid(format)
            }
            // Constants of a kind the attribute cannot hold.
            for format in [
                "date > 5", "uuid == 'x'", "uri == 'https://example.com/a'", "data == 'ab'", "int32 == 'seven'",
                "string < 3", "bool == 2", "decimal == 'x'", "int16 IN {'a'}", "string BETWEEN {1, 2}", "float >= YES",
            ] {
                try rows.expectInvalid(format)
            }
            try rows.expectInvalid("date == %@", urlA)
            try rows.expectInvalid("string LIKE %@", 5)
            try rows.expectInvalid("string MATCHES '(['")
            try rows.expectInvalid("nothing == 1")
            // Key paths on both sides must meet too (numbers across their kinds).
            for format in ["string == int16", "date < double", "string ENDSWITH decimal", "uuid == string", "data != string", "'a' BEGINSWITH int32"] {
                try rows.expectInvalid(format)
            }
            try rows.expect("int16 < double", rows: [0, 4, 5], "numbers of different kinds still compare")
            try rows.expect("int16 == 1", rows: [0], "a well-formed fetch still works afterwards")
        },
        // Every predicate the parser accepts (up to 200 levels, 100 000 characters) has an
        // answer: a store whose query language has lower limits (SQLite's parser stack, its
        // expression depth of 1000) must leave what it cannot take to the shared layer.
        ConformanceScenario("predicates.syntax.deepAndWide") { env in
            let rows = try Fixture.allTypes(env)
            try rows.expect(String(repeating: "NOT ", count: 61) + "int16 == 1", rows: [1, 2, 3, 4, 5], "61 NOTs")
            try rows.expect(String(repeating: "NOT (", count: 40) + "int16 == 1" + String(repeating: ")", count: 40), rows: [0], "40 parenthesized NOTs")
            let nested = String(repeating: "(int16 == 1 OR ", count: 60) + "int16 == 3" + String(repeating: ")", count: 60)
            try rows.expect(nested, rows: [0, 2], "60 nested ORs")
            let alternating = String(repeating: "(int16 == 1 OR NOT (int16 != 3 AND ", count: 30) + "int16 == 3" + String(repeating: "))", count: 30)
            try rows.expect(alternating, rows: [0, 2], "30 nested OR NOT AND")
            let wideOr = Array(repeating: "int16 == 1", count: 1_200).joined(separator: " OR ") + " OR int16 == 3"
            try rows.expect(wideOr, rows: [0, 2], "1 201 comparisons joined by OR")
            let wideAnd = Array(repeating: "int16 > 0", count: 1_200).joined(separator: " AND ") + " AND int16 < 2"
            try rows.expect(wideAnd, rows: [0], "1 201 comparisons joined by AND")
            let manyValues = (1...4_000).map { "int16 == \($0)" }.joined(separator: " OR ")
            try rows.expect(manyValues, rows: [0, 1, 2], "4 000 comparisons joined by OR")
        },
        // Core Data's SQLite store refuses a fetch on a transient property ("keypath not found
        // in entity") while its in-memory store answers from live objects. Transients are never
        // stored, so a store could only ever see nil: every store refuses them, the same way.
        ConformanceScenario("predicates.errors.transientKeys") { env in
            let rows = try Fixture.allTypes(env)
            for context in [rows.clean, rows.dirty] {
                try context.performAndWait {
                    for object in try context.fetch(FetchRequest<ManagedObject>(entityName: "AllTypes")) {
                        try object.setValue("live", forKey: "scratch")
                    }
                }
            }
            try rows.expectInvalid("scratch == 'live'")
            try rows.expectInvalid("scratch == nil")
            try rows.expectInvalid("string == 'Beta' OR scratch BEGINSWITH 'l'")
            for context in [rows.clean, rows.dirty] {
                try context.performAndWait {
                    let sorted = try checkThrows(ObjectGraphError.self, "sorting by a transient attribute") {
                        _ = try context.fetch(FetchRequest<ManagedObject>(entityName: "AllTypes", sortKeys: [SortKey("scratch")]))
                    }
                    try checkEqual(sorted.code, .invalidFetch, "code (\(sorted.message))")
                    try check(sorted.message.contains("scratch") && sorted.message.contains("transient"), "the error names the transient attribute: \(sorted.message)")
                    var dictionaries = FetchRequest<ManagedObject>(entityName: "AllTypes")
                    dictionaries.propertiesToFetch = [.key("scratch")]
                    let fetched = try checkThrows(ObjectGraphError.self, "a dictionary fetch of a transient attribute") {
                        _ = try context.fetchDictionaries(dictionaries)
                    }
                    try checkEqual(fetched.code, .invalidFetch, "code (\(fetched.message))")
                    var grouped = FetchRequest<ManagedObject>(entityName: "AllTypes")
                    grouped.propertiesToFetch = [.key("string"), .count(as: "n")]
                    grouped.propertiesToGroupBy = ["string", "scratch"]
                    let group = try checkThrows(ObjectGraphError.self, "grouping by a transient attribute") {
                        _ = try context.fetchDictionaries(grouped)
                    }
                    try checkEqual(group.code, .invalidFetch, "code (\(group.message))")
                }
            }
            try rows.expect("string == 'Beta'", rows: [1], "a fetch without the transient still works")
        },
        // NSComparisonPredicate's `in`: "For strings, returns true if the left hand side is a
        // substring of the right hand side. For collections, returns true if the left hand side
        // is in the right hand side"; a dictionary's values are its collection. string: alpha,
        // Beta, gamma ray, nil, "", Alpha.
        ConformanceScenario("predicates.syntax.inWithAStringOrADictionary") { env in
            let rows = try Fixture.allTypes(env)
            try rows.expect("string IN 'alphabet soup'", rows: [0, 4], "a substring of the constant (the empty string is in every string, as CONTAINS '' holds)")
            try rows.expect("string IN[c] %@", "ALPHABET", rows: [0, 4, 5], "[c] folds both")
            try rows.expect("'et' IN string", rows: [1], "a constant in the attribute: string CONTAINS 'et'")
            try rows.expect("'A' IN[c] string", rows: [0, 1, 2, 5])
            try rows.expect("NOT ('ray' IN string)", rows: [0, 1, 3, 4, 5])
            try rows.expect("string IN %@", nil, rows: [], "nil holds nothing")
            try rows.expect("string IN %@", ["x": "Beta", "y": "alpha"], rows: [0, 1], "a dictionary's values")
            try rows.expect("int16 IN %@", ["one": 1, "three": 3], rows: [0, 2])
            // Neither a collection nor a string: refused, not read as ==.
            try rows.expectInvalid("int16 IN 1")
            try rows.expectInvalid("int16 IN %@", 1)
            try rows.expectInvalid("date IN %@", base)
            try rows.expectInvalid("'a' IN int16")
            try rows.expectInvalid("3 IN string")
            try rows.expectInvalid("SELF IN SELF")
            try rows.expect("string IN {'Beta', 'alphabet'}", rows: [1], "a list is still a list")
        },
        ConformanceScenario("predicates.errors.malformedFormats") { env in
            // Store-independent, but a store must never see these: they fail while parsing.
            try expectParseError("int16 BETWEEN {1}", at: 16)
            try expectParseError("int16 ==", at: 8)
            try expectParseError("int16 == 1 AND", at: 14)
            try expectParseError("(int16 == 1", at: 11)
            try expectParseError("int16 ~ 1", at: 6)
            try expectParseError("string == 'open", at: 10)
            try expectParseError("int16 == %d", at: 9)
            try expectParseError("int16 == %d", "seven", at: 9)
            try expectParseError("int16 == 1", 5, at: 10)
            try expectParseError("string BEGINSWITH[x] 'a'", at: 18)
            try expectParseError("SUBQUERY(x, $v, $v.a == 1) > 0", at: 27)
            let rows = try Fixture.allTypes(env)
            try rows.expect("int16 == 1", rows: [0], "the store is untouched")
        },
    ]
}
