import Foundation
import ObjectGraph

/// Predicate formats a careless or hostile caller could write — keys that do not exist,
/// attributes compared with lists, relationships with strings, `MATCHES` with a broken
/// pattern, aggregates of text, quantifiers over to-ones, transient and transformable keys,
/// numbers no type holds, and plain junk — parsed, then fetched, counted and grouped on every
/// store, with unsaved inserts for the evaluator to answer beside it. Each must end in an
/// answer or a typed error (user input never stops the process), and a fetch and a count of
/// one request must agree: on the number, or on refusing.
extension FetchScenarios {
    static let predicateSoup: [ConformanceScenario] = [
        ConformanceScenario("fetch.predicateSoup.answersOrTypedErrors") { env in
            // PREDICATE_SOUP_SEED draws other formats, to look further.
            let seed = ProcessInfo.processInfo.environment["PREDICATE_SOUP_SEED"].flatMap { UInt64($0) } ?? 1128
            var random = SeededRandom(seed: seed)
            var formats: [(entity: String, format: String, predicate: FetchPredicate)] = []
            for index in 0..<1_500 {
                let entity = index % 2 == 0 ? "Student" : "AllTypes"
                let format = index % 5 == 4 ? PredicateSoup.junk(&random) : PredicateSoup.format(for: entity, &random, depth: 0)
                do {
                    formats.append((entity, format, try FetchPredicate(format: format)))
                } catch is PredicateParseError {
                    continue
                } catch {
                    throw ScenarioFailure(message: "parsing \(format) threw \(type(of: error)): \(error)", file: #filePath, line: #line)
                }
            }
            // Every object an unsaved insert: the context's evaluator answers alone.
            let context = env.newContext()
            let pending = try context.performAndWait {
                try insertAllTypes(context, &random)
                try insertSchool(context, &random)
                let answers = try formats.map { try PredicateSoup.answers($0.entity, $0.format, $0.predicate, in: context) }
                try context.save()
                return answers
            }
            // The same objects saved, in a fresh context: the store answers.
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                for (index, (entity, format, predicate)) in formats.enumerated() {
                    let stored = try PredicateSoup.answers(entity, format, predicate, in: fresh)
                    try check(stored == pending[index], "seed \(seed): \(entity) where \(format): the store answers \(stored), the evaluator answered \(pending[index])")
                }
            }
            let answered = pending.filter { if case .answer = $0.fetched { true } else { false } }.count
            // Enough of them get through the parser, and through the fetch, to test anything.
            try check(formats.count > 900 && answered > 450, "parsed \(formats.count), answered \(answered) of 1,500")
        },
    ]
}

/// The formats ``FetchScenarios/predicateSoup`` draws.
enum PredicateSoup {
    /// How a call ended: a number, or a typed error.
    enum Outcome: Equatable, CustomStringConvertible {
        case answer(Int)
        case refused

        var description: String {
            switch self {
            case .answer(let count): "\(count)"
            case .refused: "a typed error"
            }
        }
    }

    /// What one predicate gets: a fetch, a count, a fetch of IDs and a grouped dictionary fetch.
    struct Answers: Equatable, CustomStringConvertible {
        var fetched: Outcome
        var counted: Outcome
        var ids: Outcome
        var groups: Outcome

        var description: String { "fetch \(fetched), count \(counted), IDs \(ids), groups \(groups)" }
    }

    /// Fetches, counts and groups `entity` where `predicate` in `context`; fails the scenario
    /// on an untyped error, or when the fetch, the count and the IDs disagree.
    static func answers(_ entity: String, _ format: String, _ predicate: FetchPredicate, in context: ManagedObjectContext) throws -> Answers {
        let request = FetchRequest<ManagedObject>(entityName: entity, predicate: predicate)
        let key = entity == "Student" ? "name" : "string"
        var grouped = request
        grouped.propertiesToFetch = [.key(key, as: "key"), .count(as: "count")]
        grouped.propertiesToGroupBy = [key]
        let answers = Answers(
            fetched: try outcome(format, "fetch") { try context.fetch(request).count },
            counted: try outcome(format, "count") { try context.count(for: request) },
            ids: try outcome(format, "IDs") { try context.fetchObjectIDs(request).count },
            groups: try outcome(format, "grouped") { try context.fetchDictionaries(grouped).count })
        try check(answers.fetched == answers.counted && answers.fetched == answers.ids, "\(entity) where \(format): \(answers)")
        if case .answer(let count) = answers.fetched, case .answer(let groups) = answers.groups {
            try check(groups <= count, "\(entity) where \(format): \(groups) groups of \(count) objects")
        }
        return answers
    }

    /// `body`'s answer, or ``Outcome/refused`` for a typed error; anything else fails the scenario.
    static func outcome(_ format: String, _ what: String, _ body: () throws -> Int) throws -> Outcome {
        do {
            return .answer(try body())
        } catch where StoreDamageProbe.isTyped(error) {
            return .refused
        } catch {
            throw ScenarioFailure(message: "\(what) where \(format) threw \(type(of: error)), not a typed error: \(error)", file: #filePath, line: #line)
        }
    }

    static let studentKeys = [
        "name", "age", "address", "address.street", "schoolClass", "schoolClass.title", "schoolClass.students",
        "schoolClass.students.name", "subjects", "subjects.name", "subjects.@count", "tags.label", "tags", "locker",
        "locker.number", "SELF", "nonexistent", "name.count", "age.name", "@count", "subjects.@sum.name",
        "subjects.@avg.students", "subjects.@max.name", "address.student.address.street", "subjects.students.subjects.name",
        "SUBQUERY(subjects, $s, $s.name BEGINSWITH 'a').@count", "SUBQUERY(subjects, $s, $s.students.@count > 'x').@count",
        "SUBQUERY(name, $s, $s == 1).@count", "$VARIABLE", "tags.@min.label",
    ]
    static let allTypesKeys = [
        "int16", "int32", "int64", "double", "float", "decimal", "string", "bool", "date", "data", "uuid", "uri",
        "palette", "defaulted", "scratch", "string.@count", "data.@count", "int16.@sum", "string.length", "nonexistent",
    ]
    static let operators = [
        "==", "=", "!=", "<>", "<", "<=", "=<", ">", ">=", "=>", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES",
        "IN", "BETWEEN", "==[c]", "LIKE[cd]", "CONTAINS[d]", "MATCHES[c]", "BEGINSWITH[n]", "IN[c]", "BETWEEN[d]",
    ]
    static let literals = [
        "'text'", "'a*'", "'[a-z]+'", "'('", "'*?'", "''", "'\\u00e9'", "1", "0", "-1", "3.5", "1e308", "-1e400",
        "99999999999999999999999", "nil", "NULL", "TRUE", "FALSE", "YES", "{1, 2}", "{}", "{'a', nil}", "{{1}, 2}",
        "{1, 'a', 2.5}", "$VARIABLE", "CAST(0, 'NSDate')", "name", "subjects", "SELF", "{'x', 'y', 'z'}",
    ]

    /// `[NOT] [ANY|ALL|NONE|SOME] key op literal`, or two of those joined.
    static func format(for entity: String, _ random: inout SeededRandom, depth: Int) -> String {
        if depth < 2 && random.next(4) == 0 {
            let joiner = ["AND", "OR", "&&", "||"][random.next(4)]
            return "(\(format(for: entity, &random, depth: depth + 1))) \(joiner) \(format(for: entity, &random, depth: depth + 1))"
        }
        if random.next(2) == 0 { return wellTyped(for: entity, &random) }
        let keys = entity == "Student" ? studentKeys : allTypesKeys
        var parts: [String] = []
        if random.next(6) == 0 { parts.append(["NOT", "!"][random.next(2)]) }
        if random.next(4) == 0 { parts.append(["ANY", "ALL", "NONE", "SOME"][random.next(4)]) }
        parts.append(keys[random.next(keys.count)])
        parts.append(operators[random.next(operators.count)])
        parts.append(random.next(5) == 0 ? keys[random.next(keys.count)] : literals[random.next(literals.count)])
        return parts.joined(separator: " ")
    }

    /// A comparison that makes sense — a key, an operator for its type, a value of its type —
    /// so that enough of the compounds around it get through to the store.
    static func wellTyped(for entity: String, _ random: inout SeededRandom) -> String {
        let text = ["'Ada'", "'a*'", "'[A-Z].*'", "''", "'é'"], numbers = ["0", "1", "-1", "2.5", "40", "{1, 2}", "{0, 100}"]
        let textOperators = ["==", "!=", "<", ">=", "BEGINSWITH", "CONTAINS[cd]", "LIKE[c]", "MATCHES", "ENDSWITH[d]"]
        let numberOperators = ["==", "!=", "<", ">=", "<=", ">"]
        let (keys, isText): ([String], Bool) = entity == "Student"
            ? (random.next(2) == 0 ? (["name", "schoolClass.title", "ANY subjects.name", "NONE tags.label", "address.street"], true)
                                   : (["age", "subjects.@count", "locker.number", "ALL subjects.students.@count"], false))
            : (random.next(2) == 0 ? (["string"], true) : (["int16", "int32", "int64", "double", "float", "decimal", "defaulted"], false))
        let key = keys[random.next(keys.count)]
        if !isText && random.next(4) == 0 {
            return "\(key) \(["IN", "BETWEEN"][random.next(2)]) \(numbers[5 + random.next(2)])"
        }
        let operators = isText ? textOperators : numberOperators
        let values = isText ? text : Array(numbers.prefix(5))
        return "\(key) \(operators[random.next(operators.count)]) \(random.next(8) == 0 ? "nil" : values[random.next(values.count)])"
    }

    /// One to eight tokens of any kind, in any order.
    static func junk(_ random: inout SeededRandom) -> String {
        let tokens = studentKeys + operators + literals + ["(", ")", "AND", "OR", "NOT", "ANY", "ALL", "{", "}", ",", ".", "%K", "%@", "@"]
        return (0..<1 + random.next(8)).map { _ in tokens[random.next(tokens.count)] }.joined(separator: " ")
    }
}
