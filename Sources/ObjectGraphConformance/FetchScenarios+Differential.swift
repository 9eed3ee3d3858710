import Foundation
import ObjectGraph

/// A differential check of pending changes: a context full of random unsaved inserts, edits
/// and deletes answers fetches, counts and dictionary fetches, then saves; a fresh context
/// asks the store the same questions. `includesPendingChanges` promises the answers a save
/// would give, so both must agree — the in-memory merge (predicates on changed and related
/// objects, sorts, limits, offsets, groups) against every store's own evaluation.
extension FetchScenarios {
    static let differential: [ConformanceScenario] = [
        ConformanceScenario("fetch.pendingChanges.answerAsTheSaveWill") { env in
            let predicates: [FetchPredicate?] = [
                nil, .key("age") > 30, .key("age") == nil, .key("schoolClass.title") == "A", .key("schoolClass") == nil,
                try FetchPredicate(format: "ANY subjects.name == 'Math'"), try FetchPredicate(format: "subjects.@count >= 2"),
                try FetchPredicate(format: "name BEGINSWITH[c] 'S1'"), try FetchPredicate(format: "schoolClass.students.@count > 3"),
            ]
            let orders: [[SortKey]] = [
                [], [SortKey("age")], [SortKey("age", ascending: false), SortKey("name")],
                [SortKey("schoolClass.title"), SortKey("age")], [SortKey("name", comparison: .localizedStandard)],
            ]
            var random = SeededRandom(seed: 42)
            for round in 0..<12 {
                let context = env.newContext()
                var requests: [FetchRequest<Student>] = []
                var dictionaryRequests: [FetchRequest<Student>] = []
                var answers: [String] = []
                try context.performAndWait {
                    try makeRandomChanges(context, &random)
                    for predicate in predicates {
                        for order in orders {
                            var request = FetchRequest<Student>(predicate: predicate, sortKeys: order)
                            if random.next(2) == 0 { request.fetchLimit = 1 + random.next(5); request.fetchOffset = random.next(4) }
                            requests.append(request)
                        }
                        dictionaryRequests += dictionaryFetches(predicate, distinct: random.next(2) == 0)
                    }
                    answers = try requests.map { try answer(context, $0) } + dictionaryRequests.map { "\(try context.fetchDictionaries($0))" }
                    try context.save()
                }
                try env.reopen()
                let fresh = env.newContext()
                try fresh.performAndWait {
                    let stored = try requests.map { try answer(fresh, $0) } + dictionaryRequests.map { "\(try fresh.fetchDictionaries($0))" }
                    for (index, (pending, saved)) in zip(answers, stored).enumerated() where pending != saved {
                        let request = index < requests.count ? requests[index] : dictionaryRequests[index - requests.count]
                        throw ScenarioFailure(message: "round \(round): \(request.predicate.map { "\($0)" } ?? "all") by \(request.sortKeys.map(\.keyPath)) (limit \(request.fetchLimit), offset \(request.fetchOffset)): with pending changes \(pending), after the save \(saved)", file: #filePath, line: #line)
                    }
                }
            }
        },
    ]

    /// Names and ages of the students `request` returns, and its count(for:).
    private static func answer(_ context: ManagedObjectContext, _ request: FetchRequest<Student>) throws -> String {
        let students = try context.fetch(request).map { "\($0.name)/\($0.age.map(String.init) ?? "-")" }
        return "\(students) count \(try context.count(for: request))"
    }

    /// Grouped aggregates by class title, plain columns (distinct or not) and aggregates over
    /// every match, each filtered by `predicate`.
    private static func dictionaryFetches(_ predicate: FetchPredicate?, distinct: Bool) -> [FetchRequest<Student>] {
        var grouped = FetchRequest<Student>(predicate: predicate, sortKeys: [SortKey("title")])
        grouped.propertiesToFetch = [.key("schoolClass.title", as: "title"), .count(as: "n"), .maximum("age", as: "oldest"), .sum("age", as: "years")]
        grouped.propertiesToGroupBy = ["schoolClass.title"]
        var plain = FetchRequest<Student>(predicate: predicate, sortKeys: [SortKey("name"), SortKey("age"), SortKey("title")])
        plain.propertiesToFetch = [.key("name"), .key("age"), .key("schoolClass.title", as: "title")]
        plain.returnsDistinctResults = distinct
        var totals = FetchRequest<Student>(predicate: predicate)
        totals.propertiesToFetch = [.count(as: "n"), .minimum("name", as: "first"), .average("age", as: "mean")]
        return [grouped, plain, totals]
    }

    /// Classes A–C and subjects Math and Art on the first call; then new students, and
    /// deletes, new ages, classes, subjects and names for some of the stored ones, sometimes
    /// a class renamed.
    private static func makeRandomChanges(_ context: ManagedObjectContext, _ random: inout SeededRandom) throws {
        var classes = try context.fetch(FetchRequest<SchoolClass>(sortKeys: [SortKey("title")]))
        if classes.isEmpty { classes = ["A", "B", "C"].map { let c = SchoolClass(context: context); c.title = $0; return c } }
        var subjects = try context.fetch(FetchRequest<Subject>(sortKeys: [SortKey("name")]))
        if subjects.isEmpty { subjects = ["Math", "Art"].map { let s = Subject(context: context); s.name = $0; return s } }
        func age() -> Int16? { random.next(3) == 0 ? nil : Int16(10 + random.next(50)) }
        for student in try context.fetch(FetchRequest<Student>(sortKeys: [SortKey("name")])) {
            switch random.next(10) {
            case 0: context.delete(student)
            case 1: student.age = age()
            case 2: student.schoolClass = random.next(3) == 0 ? nil : classes[random.next(classes.count)]
            case 3: student.$subjects.add(subjects[random.next(subjects.count)])
            case 4: student.name = "s\(random.next(40))"
            default: break
            }
        }
        for _ in 0..<(2 + random.next(5)) {
            let student = Student(context: context)
            student.name = "s\(random.next(40))"
            student.age = age()
            if random.next(2) == 0 { student.schoolClass = classes[random.next(classes.count)] }
            if random.next(2) == 0 { student.$subjects.add(subjects[random.next(subjects.count)]) }
        }
        if random.next(4) == 0 { classes[random.next(classes.count)].title = ["A", "B", "C", "D"][random.next(4)] }
    }
}
