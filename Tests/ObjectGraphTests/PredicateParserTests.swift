import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Testing

@Suite("Predicate format parser")
struct PredicateParserTests {
    @Test("comparisons, compounds and literals parse into the same tree the builder makes")
    func parsesIntoBuilderTrees() throws {
        #expect(try FetchPredicate(format: "name == 'Ada'") == (key("name") == "Ada"))
        #expect(try FetchPredicate(format: "age > 30 AND age < 40") == (key("age") > 30 && key("age") < 40))
        #expect(try FetchPredicate(format: "age >= 1 && age <= 2 || !(name = \"x\")")
            == .or([key("age") >= 1 && key("age") <= 2, .not(key("name") == "x")]))
        #expect(try FetchPredicate(format: "chat.title BEGINSWITH[cd] 're'") == key("chat.title").beginsWith("re", options: [.caseInsensitive, .diacriticInsensitive]))
        #expect(try FetchPredicate(format: "TRUEPREDICATE") == .constant(true))
        #expect(try FetchPredicate(format: "NOT FALSEPREDICATE") == .not(.constant(false)))
        #expect(try FetchPredicate(format: "x == nil OR y = NULL") == .or([
            .comparison(PredicateComparison(.keyPath("x"), .equal, .constant(.null))),
            .comparison(PredicateComparison(.keyPath("y"), .equal, .constant(.null))),
        ]))
        #expect(try FetchPredicate(format: "flag == YES") == (key("flag") == true))
        #expect(try FetchPredicate(format: "n <> 2.5") == (key("n") != 2.5))
        #expect(try FetchPredicate(format: "n BETWEEN {1, 5}") == key("n").between(1, 5))
        #expect(try FetchPredicate(format: "name LIKE 'a*b?'") == key("name").like("a*b?"))
        #expect(try FetchPredicate(format: "name MATCHES '[a-z]+'") == key("name").matches("[a-z]+"))
        #expect(try FetchPredicate(format: "ANY subjects.name == 'Math'") == .any("subjects.name", .equal, "Math"))
        #expect(try FetchPredicate(format: "ALL scores.points > 3") == .all("scores.points", .greaterThan, 3))
        #expect(try FetchPredicate(format: "NONE tags.label CONTAINS[c] 'x'") == .none("tags.label", .contains, "x", options: .caseInsensitive))
        #expect(try FetchPredicate(format: "members.@count > 2") == (key("members.@count") > 2))
        #expect(try FetchPredicate(format: "#AND == 1") == (key("AND") == 1), "# escapes a reserved word")
    }

    @Test("format arguments: %@ %K %d %i %ld %lld %f %lf, objects, IDs and collections")
    func substitutesArguments() throws {
        #expect(try FetchPredicate(format: "%K == %@", "name", "Ada") == (key("name") == "Ada"))
        #expect(try FetchPredicate(format: "a == %d AND b == %i AND c == %ld AND d == %lld", 1, 2, Int64(3), 4)
            == (key("a") == 1 && key("b") == 2 && key("c") == 3 && key("d") == 4))
        #expect(try FetchPredicate(format: "x == %f OR y == %lf", 1.5, 2) == (key("x") == 1.5 || key("y") == 2.0))
        #expect(try FetchPredicate(format: "status IN %@", ["a", "b"]) == key("status").isIn(["a", "b"]))
        let date = Date(timeIntervalSince1970: 1000)
        #expect(try FetchPredicate(format: "sentAt BETWEEN {%@, %@}", date, date)
            == key("sentAt").between(date, date))
        let id = ObjectID(entityName: "Chat", storeIdentifier: "S", primaryKey: 4)
        #expect(try FetchPredicate(format: "chat == %@", id) == .comparison(PredicateComparison(.keyPath("chat"), .equal, .object(id))))
        #expect(try FetchPredicate(format: "chat == %@", nil as String?) == .comparison(PredicateComparison(.keyPath("chat"), .equal, .constant(.null))))
        #expect(try FetchPredicate(format: "text CONTAINS[c] $query") == .comparison(PredicateComparison(.keyPath("text"), .contains, .variable("query"), options: .caseInsensitive)))
    }

    @Test("malformed formats throw a parse error with the position and what was expected", arguments: [
        ("name ==", 7, "a value"),
        ("name 'Ada'", 5, "comparison operator"),
        ("(age > 3", 8, "')'"),
        ("age > 3 AND", 11, "a value"),
        ("name == 'unterminated", 8, "closing"),
        ("name == %x", 8, "format specifier"),
        ("age > 3 age < 4", 8, "AND, OR"),
        ("name BEGINSWITH[q] 'a'", 16, "comparison options"),
        ("n BETWEEN {1, 2, 3}", 18, "two bounds"),
        ("SUBQUERY(items, $i, $i.n > 1) > 0", 30, ".@count"),
        ("name == AND", 8, "a value"),
        ("== 3", 0, "a value"),
        ("age > 3 ^", 8, "a predicate"),
    ])
    func reportsPosition(_ format: String, _ position: Int, _ expected: String) {
        let error = #expect(throws: PredicateParseError.self) { _ = try FetchPredicate(format: format) }
        #expect(error?.position == position, "\(format): \(String(describing: error))")
        #expect(error?.expected.contains(expected) == true, "\(format): \(String(describing: error))")
        #expect(error?.description.contains("^") == true, "the message points at the spot")
    }

    @Test("argument counts must match the specifiers")
    func argumentCounts() {
        let missing = #expect(throws: PredicateParseError.self) { _ = try FetchPredicate(format: "a == %@ AND b == %@", 1) }
        #expect(missing?.position == 17)
        #expect(throws: PredicateParseError.self) { _ = try FetchPredicate(format: "a == %@", 1, 2) }
        #expect(throws: PredicateParseError.self) { _ = try FetchPredicate(format: "%K == 1", 5) }
        #expect(throws: PredicateParseError.self) { _ = try FetchPredicate(format: "a == %d", "text") }
    }

    @Test("hostile input fails cleanly: deep nesting, huge formats, junk bytes")
    func hostileInput() {
        let deep = String(repeating: "(", count: 5_000) + "a == 1" + String(repeating: ")", count: 5_000)
        let deepError = #expect(throws: PredicateParseError.self) { _ = try FetchPredicate(format: deep) }
        #expect(deepError?.expected.contains("nesting") == true)
        let nots = String(repeating: "NOT ", count: 50_000) + "a == 1"
        #expect(throws: PredicateParseError.self) { _ = try FetchPredicate(format: nots) }
        let huge = "name == '" + String(repeating: "x", count: 2_000_000) + "'"
        let hugeError = #expect(throws: PredicateParseError.self) { _ = try FetchPredicate(format: huge) }
        #expect(hugeError?.description.count ?? .max < 1_000, "the message stays short")
        for junk in ["\u{0}", "''''", "{{{{", "%", "$", "a.", ".a == 1", "a == {1,", "@", "a == 1)"] {
            #expect(throws: PredicateParseError.self, "\(junk.debugDescription)") { _ = try FetchPredicate(format: junk) }
        }
        // A long but shallow predicate is fine.
        let wide = (0..<2_000).map { "n == \($0)" }.joined(separator: " OR ")
        #expect((try? FetchPredicate(format: wide)) != nil)
    }

    @Test("parsed predicates fetch: aggregates, SUBQUERY, variables, %K, objects")
    func parsedPredicatesFetch() throws {
        let (_, context) = try makeContext { m in
            m.entity("Team") { e in
                e.attribute("name", .string)
                e.toMany("players", "Player", inverse: "team")
            }
            m.entity("Player") { e in
                e.attribute("name", .string)
                e.attribute("points", .integer32)
                e.toOne("team", "Team", inverse: "players")
            }
        }
        try context.performAndWait {
            func team(_ name: String, _ points: [Int]) throws -> ManagedObject {
                let team = try context.insertObject(entityName: "Team")
                try team.setValue(name, forKey: "name")
                for (index, value) in points.enumerated() {
                    let player = try context.insertObject(entityName: "Player")
                    try player.setValue("\(name)\(index)", forKey: "name")
                    try player.setValue(value, forKey: "points")
                    try player.setValue(team, forKey: "team")
                }
                return team
            }
            let reds = try team("Reds", [10, 20, 30])
            _ = try team("Blues", [5])
            _ = try team("Greens", [])
            try context.save()
            func names(_ format: String, _ arguments: Any?..., variables: [String: AttributeValue] = [:]) throws -> [String] {
                var request = FetchRequest<ManagedObject>(entityName: "Team", predicate: try FetchPredicate(format: format, argumentArray: arguments), sortKeys: [SortKey("name")])
                request.substitutionVariables = variables
                return try context.fetch(request).map { try $0.value(forKey: "name") as! String }
            }
            #expect(try names("players.@count >= 1") == ["Blues", "Reds"])
            #expect(try names("players.@sum.points == 60") == ["Reds"])
            #expect(try names("players.@avg.points > 15") == ["Reds"])
            #expect(try names("players.@max.points == 5") == ["Blues"])
            #expect(try names("players.@min.points < 10") == ["Blues"])
            #expect(try names("SUBQUERY(players, $p, $p.points >= 20).@count == 2") == ["Reds"])
            #expect(try names("SUBQUERY(players, $p, $p.name BEGINSWITH $prefix).@count > 0", variables: ["prefix": "Bl"]) == ["Blues"])
            #expect(try names("%K CONTAINS[c] %@", "name", "EE") == ["Greens"])
            #expect(try names("ANY players.points > 25") == ["Reds"])
            #expect(try names("ALL players.points > 1") == ["Blues", "Greens", "Reds"], "ALL is vacuously true for none")
            #expect(try names("NONE players.points > 1") == ["Greens"])
            let redPlayers = try context.fetch(FetchRequest<ManagedObject>(entityName: "Player", predicate: try FetchPredicate(format: "team == %@", reds)))
            #expect(redPlayers.count == 3)
            let missingVariable = #expect(throws: ObjectGraphError.self) { _ = try names("name == $nobody") }
            #expect(missingVariable?.code == .invalidFetch)
            let badAggregate = #expect(throws: ObjectGraphError.self) { _ = try names("players.@sum.name > 1") }
            #expect(badAggregate?.code == .invalidFetch)
        }
    }

    @Test("NSNull in a substitution argument is nil, as NSPredicate has it")
    func nsNullArgumentIsNil() throws {
        // (It was refused: "expected a value, object, object ID or collection for %@".)
        let predicate = try FetchPredicate(format: "age IN %@", argumentArray: [[20, NSNull()] as [Any]])
        guard case .comparison(let comparison) = predicate else { Issue.record("not a comparison: \(predicate)"); return }
        #expect(comparison.right == .list([.constant(.integer(20)), .constant(.null)]))
        #expect(try FetchPredicate(format: "age == %@", NSNull()) == FetchPredicate(format: "age == nil"))
    }

    static let literalWords = ["nil", "NULL", "true", "YES", "false", "no", "self", "SUBQUERY"]

    // The words naming literals, SELF and SUBQUERY were read before the escape was looked at,
    // so `#yes == 1` meant `true == 1` and matched every row.
    @Test("# makes a literal's name, SELF or SUBQUERY a key path, as NSPredicate has it", arguments: literalWords)
    func escapedLiteralWordIsAKeyPath(_ word: String) throws {
        #expect(try FetchPredicate(format: "#\(word) == 1") == (key(word) == 1))
        #expect(try FetchPredicate(format: "x == #\(word)") == .comparison(PredicateComparison(.keyPath("x"), .equal, .keyPath(word))))
        #expect(try FetchPredicate(format: "#\(word).n > 2") == (key("\(word).n") > 2))
    }

    @Test("an escaped literal's name fetches its attribute's rows only")
    func escapedLiteralWordFetches() throws {
        let (_, context) = try makeContext { m in
            m.entity("Row") { e in
                e.attribute("label", .string)
                for word in Self.literalWords { e.attribute(word, .integer32) }
            }
        }
        try context.performAndWait {
            for (label, value) in [("one", 1), ("two", 2)] {
                let row = try context.insertObject(entityName: "Row")
                try row.setValue(label, forKey: "label")
                for word in Self.literalWords { try row.setValue(value, forKey: word) }
            }
            try context.save()
            for word in Self.literalWords {
                let request = FetchRequest<ManagedObject>(entityName: "Row", predicate: try FetchPredicate(format: "#\(word) == 1"))
                #expect(try context.fetch(request).map { try string($0, "label") } == ["one"], "#\(word)")
            }
        }
    }

    @Test("an escaped operator's name is a key, not the operator")
    func escapedOperatorIsNotAnOperator() {
        let error = #expect(throws: PredicateParseError.self) { _ = try FetchPredicate(format: "a #in {1}") }
        #expect(error?.expected.contains("comparison operator") == true, "\(String(describing: error))")
    }

    @Test("a quoted string may begin or end with a combining mark, a variation selector or a modifier")
    func stringsStartingWithMarks() throws {
        for text in ["\u{301}", "\u{FE0F}", "\u{1F3FB}", "a\u{301}", "\u{301}b\u{301}", "\u{E9}"] {
            for quote in ["'", "\""] {
                let parsed = try FetchPredicate(format: "name ENDSWITH \(quote)\(text)\(quote)")
                #expect(parsed == .comparison(PredicateComparison(.keyPath("name"), .endsWith, .constant(.string(text)))), "\(quote)\(text.unicodeScalars.map { String($0.value, radix: 16) })\(quote)")
            }
        }
        // Marks still continue a name: a decomposed letter is one key, not a key and junk.
        #expect(try FetchPredicate(format: "ne\u{301} == 1") == .comparison(PredicateComparison(.keyPath("ne\u{301}"), .equal, .constant(.integer(1)))))
    }
}
