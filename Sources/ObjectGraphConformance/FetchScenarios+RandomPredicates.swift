import Foundation
import ObjectGraph

/// Random predicates, answered twice: by the shared evaluator, while every object is an
/// unsaved insert (the store holds nothing, so the context evaluates each one itself), and by
/// the store after the save, in a fresh context (SQL on SQLite, indexes or scans on LMDB).
/// One model layer, many stores, identical answers: every store must agree with the evaluator
/// on every predicate — comparisons of every attribute type with nil, mixed numeric kinds, the
/// string operators with `[c]`, `[d]` and `[cd]`, `LIKE` and `MATCHES`, `IN`, `BETWEEN`,
/// key paths through to-one relationships, `ANY`/`ALL`/`NONE`, `@count`, `SUBQUERY`, and
/// `AND`/`OR`/`NOT` nested — with the same order under random sort keys.
extension FetchScenarios {
    static let randomPredicates: [ConformanceScenario] = [
        ConformanceScenario("fetch.randomPredicates.storeAnswersAsTheEvaluator") { env in
            var random = SeededRandom(seed: 2026_11_28)
            var generator = RandomPredicates()
            let context = env.newContext()
            var requests: [(FetchRequest<ManagedObject>, entity: String)] = []
            var pending: [[ManagedObject]] = []
            var pendingKeys: [[String]] = []
            var pendingCounts: [Int] = []
            var dictionaryRequests: [FetchRequest<ManagedObject>] = []
            var pendingRows: [String] = []
            try context.performAndWait {
                try insertAllTypes(context, &random)
                try insertSchool(context, &random)
                for index in 0..<600 {
                    let entity = index % 2 == 0 ? "AllTypes" : "IndexedTypes"
                    var request = FetchRequest<ManagedObject>(entityName: entity, predicate: generator.allTypes(&random, depth: 0))
                    if random.next(3) == 0 {
                        request.sortKeys = generator.allTypesSort(&random)
                        // A page of the sorted answer: ties are broken alike (by primary key,
                        // the order the objects were inserted in), so the same objects.
                        if random.next(2) == 0 { request.fetchLimit = 1 + random.next(8); request.fetchOffset = random.next(6) }
                    }
                    requests.append((request, entity))
                }
                for _ in 0..<300 {
                    var request = FetchRequest<ManagedObject>(entityName: "Student", predicate: generator.student(&random, depth: 0))
                    if random.next(3) == 0 { request.sortKeys = [SortKey("name", ascending: random.next(2) == 0), SortKey("age")] }
                    requests.append((request, "Student"))
                }
                for index in 0..<200 {
                    let entity = index % 2 == 0 ? "AllTypes" : "IndexedTypes"
                    dictionaryRequests.append(generator.dictionaryRequest(entity, predicate: generator.allTypes(&random, depth: 1), &random))
                }
                for (request, _) in requests {
                    let objects = try context.fetch(request)
                    pending.append(objects)
                    pendingKeys.append(try objects.map { try sortValues($0, request.sortKeys) })
                    pendingCounts.append(try context.count(for: request))
                }
                pendingRows = try dictionaryRequests.map { "\(try context.fetchDictionaries($0))" }
                try context.save()
            }
            // The objects the evaluator returned, by their permanent IDs (given by the save).
            let expected = context.performAndWait { pending.map { $0.map(\.objectID) } }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                for (index, (request, _)) in requests.enumerated() {
                    let objects = try fresh.fetch(request)
                    let stored = objects.map(\.objectID)
                    let what = "\(requests[index].entity) where \(request.predicate.map { "\($0)" } ?? "all") sorted by \(request.sortKeys.map { "\($0.keyPath)\($0.ascending ? "" : " desc")" })"
                    try check(Set(stored) == Set(expected[index]) && stored.count == expected[index].count,
                              "\(what): the store answered \(stored.count) objects, the evaluator \(expected[index].count); only the store's: \(Set(stored).subtracting(expected[index]).count), only the evaluator's: \(Set(expected[index]).subtracting(stored).count)")
                    // Objects that tie on every key may come in either order; their keys may not.
                    let keys = try objects.map { try sortValues($0, request.sortKeys) }
                    try check(keys == pendingKeys[index], "\(what): the store's order \(keys) differs from the evaluator's \(pendingKeys[index])")
                    if request.fetchLimit > 0 {
                        try check(stored == expected[index], "\(what), limit \(request.fetchLimit) offset \(request.fetchOffset): the store's page differs from the evaluator's")
                    }
                    try checkEqual(try fresh.count(for: request), pendingCounts[index], "count(for:) of \(what)")
                }
                for (request, rows) in zip(dictionaryRequests, pendingRows) {
                    let stored = "\(try fresh.fetchDictionaries(request))"
                    try check(stored == rows, "\(request.entityName ?? "?") \(request.propertiesToFetch) grouped by \(request.propertiesToGroupBy) where \(request.predicate.map { "\($0)" } ?? "all"): the store's rows \(stored), the evaluator's \(rows)")
                }
            }
        },
    ]

    /// The values of `object` that `keys` sort by, as text.
    static func sortValues(_ object: ManagedObject, _ keys: [SortKey]) throws -> String {
        try keys.map { "\(try object.value(forKey: $0.keyPath) ?? "nil")" }.joined(separator: "|")
    }

    /// 48 AllTypes objects, every attribute drawn from a small pool with nil in it, and an
    /// IndexedTypes object with the same values for each.
    static func insertAllTypes(_ context: ManagedObjectContext, _ random: inout SeededRandom) throws {
        for _ in 0..<48 {
            let object = try context.insertObject(entityName: "AllTypes")
            let indexed = try context.insertObject(entityName: "IndexedTypes")
            for (key, pool) in RandomPredicates.pools {
                let value = pool[random.next(pool.count)]
                try object.setValue(value.anyValue, forKey: key)
                try indexed.setValue(value.anyValue, forKey: key)
            }
        }
    }

    /// Classes, subjects and 40 students with random names, ages, classes and subjects.
    static func insertSchool(_ context: ManagedObjectContext, _ random: inout SeededRandom) throws {
        let classes = RandomPredicates.titles.map { title in
            let schoolClass = SchoolClass(context: context)
            schoolClass.title = title
            return schoolClass
        }
        let subjects = RandomPredicates.subjectNames.map { name in
            let subject = Subject(context: context)
            subject.name = name
            return subject
        }
        for index in 0..<40 {
            let student = Student(context: context)
            student.name = RandomPredicates.names[random.next(RandomPredicates.names.count)] + (index % 3 == 0 ? "" : "\(index)")
            student.age = random.next(4) == 0 ? nil : Int16(random.next(90))
            student.schoolClass = random.next(4) == 0 ? nil : classes[random.next(classes.count)]
            for _ in 0..<random.next(4) { student.$subjects.add(subjects[random.next(subjects.count)]) }
        }
    }
}
