import Foundation
import ObjectGraph

/// Fetch requests a careless caller could build — sort keys through to-manys, transient,
/// transformable or missing keys; aggregates of text; grouping by relationships; `having`
/// without grouping; negative and huge limits, offsets and batch sizes; prefetching through
/// attributes — answered first by the evaluator (every object an unsaved insert), then by the
/// store (saved, in a fresh context). Each must end in an answer or a typed error, and both
/// must end alike: the same objects with the same sort values, the same counts, the same rows.
extension FetchScenarios {
    static let requestSoup: [ConformanceScenario] = [
        ConformanceScenario("fetch.requestSoup.answersOrTypedErrors") { env in
            // REQUEST_SOUP_SEED draws other requests, to look further.
            let seed = ProcessInfo.processInfo.environment["REQUEST_SOUP_SEED"].flatMap { UInt64($0) } ?? 1128
            var random = SeededRandom(seed: seed)
            let requests = (0..<600).map { index in RequestSoup.request(index % 2 == 0 ? "Student" : "AllTypes", dictionaries: index % 3 == 2, &random) }
            let context = env.newContext()
            let pending = try context.performAndWait {
                try insertAllTypes(context, &random)
                try insertSchool(context, &random)
                let answers = try requests.map { try RequestSoup.answer($0, in: context) }
                try context.save()
                // The evaluator's objects by the permanent IDs the save gave them.
                return answers.map { $0.resolvingIDs(in: context) }
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                for (request, expected) in zip(requests, pending) {
                    let stored = try RequestSoup.answer(request, in: fresh).resolvingIDs(in: fresh)
                    try check(stored.matches(expected), "seed \(seed): \(RequestSoup.describe(request)): the store answered \(stored), the evaluator \(expected)")
                }
            }
            let answered = pending.filter(\.isAnswer).count
            try check(answered > 150 && answered < 550, "answered \(answered) of 600: the soup must mix answers and refusals")
        },
    ]
}

/// The requests ``FetchScenarios/requestSoup`` draws, and how their answers compare.
enum RequestSoup {
    /// What a request got.
    enum Answer: CustomStringConvertible {
        /// Objects (their IDs while unsaved), with their sort values, and `count(for:)`.
        case objects([ManagedObject], ids: [ObjectID], sortValues: [String], count: Int, limited: Bool)
        /// Dictionary rows, as text, in order when sorted.
        case rows([String], sorted: Bool)
        case refused

        var isAnswer: Bool { if case .refused = self { false } else { true } }

        /// The same answer with each object's current (permanent, after the save) ID.
        func resolvingIDs(in context: ManagedObjectContext) -> Answer {
            guard case .objects(let objects, _, let values, let count, let limited) = self else { return self }
            return .objects([], ids: objects.map(\.objectID), sortValues: values, count: count, limited: limited)
        }

        /// Whether two answers agree: the same objects (tied objects may come in either order,
        /// their sort values may not), counts and rows, or both refused.
        func matches(_ other: Answer) -> Bool {
            switch (self, other) {
            case (.refused, .refused): return true
            case (.objects(_, let a, let valuesA, let countA, let limited), .objects(_, let b, let valuesB, let countB, _)):
                // A page of tied objects may hold other ones of the tie.
                return countA == countB && valuesA == valuesB && a.count == b.count && (limited || Set(a) == Set(b))
            case (.rows(let a, let sorted), .rows(let b, _)):
                return sorted ? a == b : a.sorted() == b.sorted()
            default: return false
            }
        }

        var description: String {
            switch self {
            case .objects(_, let ids, let values, let count, _): "\(ids.count) objects (count \(count)) sorted as \(values.prefix(6))"
            case .rows(let rows, _): "\(rows.count) rows \(rows.prefix(4))"
            case .refused: "a typed error"
            }
        }
    }

    static let studentKeys = [
        "name", "age", "address.street", "schoolClass.title", "subjects.name", "subjects", "subjects.@count", "locker.number",
        "address", "nonexistent", "", "name.", "schoolClass.students.name", "SELF", "age.@sum",
    ]
    static let allTypesKeys = [
        "int16", "int32", "int64", "double", "float", "decimal", "string", "bool", "date", "data", "uuid", "uri",
        "palette", "scratch", "defaulted", "nonexistent", "string.@count",
    ]

    /// A request of `entity` with random options, for objects or (`dictionaries`) rows.
    static func request(_ entity: String, dictionaries: Bool, _ random: inout SeededRandom) -> FetchRequest<ManagedObject> {
        let keys = entity == "Student" ? studentKeys : allTypesKeys
        func key() -> String { keys[random.next(keys.count)] }
        var request = FetchRequest<ManagedObject>(entityName: entity)
        if random.next(2) == 0 { request.sortKeys = (0...random.next(3)).map { _ in SortKey(key(), ascending: random.next(2) == 0) } }
        if random.next(4) == 0 { request.fetchLimit = [0, 1, 3, -1, Int.max][random.next(5)] }
        if random.next(4) == 0 { request.fetchOffset = [0, 2, -5, Int.max][random.next(4)] }
        if random.next(5) == 0 { request.fetchBatchSize = [0, 1, 7, -3][random.next(4)] }
        if random.next(6) == 0 { request.includesSubentities = false }
        if random.next(4) == 0 { request.relationshipKeyPathsForPrefetching = (0...random.next(2)).map { _ in key() } }
        if random.next(3) == 0 {
            let format = PredicateSoup.wellTyped(for: entity, &random)
            request.predicate = try? FetchPredicate(format: format)
        }
        if dictionaries {
            let names = ["a", "b", "c"]
            request.propertiesToFetch = (0...random.next(3)).map { index in
                let name = random.next(6) == 0 ? "a" : names[index]
                switch random.next(6) {
                case 0: return .sum(key(), as: name)
                case 1: return .average(key(), as: name)
                case 2: return .minimum(key(), as: name)
                case 3: return .maximum(key(), as: name)
                case 4: return .count(as: name)
                default: return .key(key(), as: random.next(3) == 0 ? nil : name)
                }
            }
            if random.next(2) == 0 { request.propertiesToGroupBy = (0...random.next(2)).map { _ in key() } }
            if random.next(4) == 0 { request.havingPredicate = try? FetchPredicate(format: ["a > 1", "c == 2", "b != nil", "nonexistent > 0"][random.next(4)]) }
            if random.next(3) == 0 { request.returnsDistinctResults = true }
        }
        return request
    }

    /// What `request` gets in `context`: rows for a request with properties to fetch, objects
    /// (and their count) otherwise; a typed error is ``Answer/refused``, any other fails.
    static func answer(_ request: FetchRequest<ManagedObject>, in context: ManagedObjectContext) throws -> Answer {
        let what = describe(request)
        do {
            if !request.propertiesToFetch.isEmpty {
                return .rows(try context.fetchDictionaries(request).map { "\($0)" }, sorted: !request.sortKeys.isEmpty)
            }
            let objects = Array(try context.fetch(request))
            let values = try objects.map { try FetchScenarios.sortValues($0, request.sortKeys) }
            let count = try context.count(for: request)
            try check(count == objects.count, "\(what): count(for:) \(count), fetch \(objects.count)")
            return .objects(objects, ids: [], sortValues: values, count: count, limited: request.fetchLimit > 0 || request.fetchOffset > 0)
        } catch where StoreDamageProbe.isTyped(error) {
            return .refused
        } catch let failure as ScenarioFailure {
            throw failure
        } catch {
            throw ScenarioFailure(message: "\(what) threw \(type(of: error)), not a typed error: \(error)", file: #filePath, line: #line)
        }
    }

    /// The request's options, for a failure's message.
    static func describe(_ request: FetchRequest<ManagedObject>) -> String {
        var parts = ["\(request.entityName ?? "?")"]
        if let predicate = request.predicate { parts.append("where \(predicate)") }
        if !request.sortKeys.isEmpty { parts.append("sorted by \(request.sortKeys.map { "\($0.keyPath)\($0.ascending ? "" : " desc")" })") }
        if request.fetchLimit != 0 { parts.append("limit \(request.fetchLimit)") }
        if request.fetchOffset != 0 { parts.append("offset \(request.fetchOffset)") }
        if request.fetchBatchSize != 0 { parts.append("batches of \(request.fetchBatchSize)") }
        if !request.includesSubentities { parts.append("without subentities") }
        if !request.relationshipKeyPathsForPrefetching.isEmpty { parts.append("prefetching \(request.relationshipKeyPathsForPrefetching)") }
        if !request.propertiesToFetch.isEmpty { parts.append("fetching \(request.propertiesToFetch)") }
        if !request.propertiesToGroupBy.isEmpty { parts.append("grouped by \(request.propertiesToGroupBy)") }
        if let having = request.havingPredicate { parts.append("having \(having)") }
        if request.returnsDistinctResults { parts.append("distinct") }
        return parts.joined(separator: " ")
    }
}
