import Foundation
import ObjectGraph

/// Which objects come back and in what order: sorting, paging, pending changes, sub-entities
/// and counts.
extension FetchScenarios {
    static let results: [ConformanceScenario] = [
        ConformanceScenario("fetch.sort.nilsFirstAndTiesByPrimaryKey") { env in
            try seedPeople(env)
            let context = env.newContext()
            try context.performAndWait {
                try checkEqual(try names(context, nil, [SortKey("age")]), ["Barbara", "Ada", "Linus", "alan", "Edsger", "Grace"], "ascending: nil first, the tie at 36 in primary-key order")
                try checkEqual(try names(context, nil, [SortKey("age", ascending: false)]), ["Grace", "Edsger", "alan", "Ada", "Linus", "Barbara"], "descending: nil last, ties still in primary-key order")
                try checkEqual(try names(context, nil, [SortKey("age"), SortKey("name", ascending: false)]), ["Barbara", "Linus", "Ada", "alan", "Edsger", "Grace"], "a second key breaks the tie")
                for _ in 0..<3 {
                    try checkEqual(try names(context, nil, [SortKey("age")]), ["Barbara", "Ada", "Linus", "alan", "Edsger", "Grace"], "the same fetch gives the same order every time")
                }
                let ids = try context.fetchObjectIDs(FetchRequest<Student>())
                let sortedIDs = ids.sorted { ObjectID.storageOrder($0, $1) }
                try checkEqual(ids, sortedIDs, "without sort keys, results come in primary-key order")
            }
        },
        ConformanceScenario("fetch.sort.stringComparisonsAndKeyPaths") { env in
            try seedPeople(env)
            let context = env.newContext()
            try context.performAndWait {
                try checkEqual(try names(context, nil, [SortKey("name")]), ["Ada", "Barbara", "Edsger", "Grace", "Linus", "alan"], "natural: by Unicode scalars, upper case first")
                try checkEqual(try names(context, nil, [SortKey("name", comparison: .caseInsensitive)]), ["Ada", "alan", "Barbara", "Edsger", "Grace", "Linus"], "case-insensitive")
                try checkEqual(try names(context, nil, [SortKey("name", ascending: false, comparison: .caseInsensitive)]), ["Linus", "Grace", "Edsger", "Barbara", "alan", "Ada"], "case-insensitive descending")
                try checkEqual(try names(context, nil, [SortKey("schoolClass.title"), SortKey("name")]), ["Barbara", "Edsger", "Linus", "Ada", "alan", "Grace"], "through a to-one, students without a class first")
                try checkEqual(try names(context, nil, [SortKey("schoolClass.title", ascending: false), SortKey("age")]), ["Grace", "Ada", "alan", "Barbara", "Linus", "Edsger"], "through a to-one, descending")
                for label in ["file10", "file2", "File1", "fïle3"] { let tag = Tag(context: context); tag.label = label }
                try context.save()
                let tags = try context.fetch(FetchRequest<Tag>(sortKeys: [SortKey("label", comparison: .localizedStandard)])).map(\.label)
                try checkEqual(tags, ["File1", "file2", "fïle3", "file10"], "localized standard: folded, digits as numbers")
                let natural = try context.fetch(FetchRequest<Tag>(sortKeys: [SortKey("label")])).map(\.label)
                try checkEqual(natural, ["File1", "file10", "file2", "fïle3"], "natural order of the same labels")
            }
        },
        ConformanceScenario("fetch.paging.coversEveryRowOnce") { env in
            let context = env.newContext()
            let ages: [Int16?] = [nil, 1, 2, 2, 3]
            try context.performAndWait {
                for i in 0..<14 { let s = Student(context: context); s.name = "p\(i % 4)"; s.age = ages[i % ages.count] }
                try context.save()
            }
            try context.performAndWait {
                for pending in [false, true] {
                    if pending {
                        // Unsaved changes send the fetch through the in-memory merge: same rules.
                        for i in 0..<3 { let s = Student(context: context); s.name = "q\(i)"; s.age = 2 }
                        let doomed = try context.fetch(FetchRequest<Student>(predicate: .key("age") == 3))[0]
                        context.delete(doomed)
                        try context.fetch(FetchRequest<Student>(predicate: .key("age") == 1))[0].age = nil
                    }
                    for order in [[SortKey("age")], [SortKey("age", ascending: false), SortKey("name")], [SortKey("name", ascending: false)], []] {
                        let full = try context.fetchObjectIDs(FetchRequest<Student>(sortKeys: order))
                        try checkEqual(full.count, pending ? 16 : 14, "rows (pending: \(pending))")
                        for size in [1, 3, 4, 5] {
                            var paged: [ObjectID] = []
                            var offset = 0
                            while offset <= full.count {
                                var request = FetchRequest<Student>(sortKeys: order)
                                request.fetchLimit = size
                                request.fetchOffset = offset
                                let page = try context.fetchObjectIDs(request)
                                try check(page.count <= size, "a page holds at most \(size)")
                                paged += page
                                offset += size
                            }
                            try checkEqual(paged, full, "pages of \(size) by \(order.map(\.keyPath)) (pending: \(pending)) cover every row once, in order")
                        }
                        var tail = FetchRequest<Student>(sortKeys: order)
                        tail.fetchOffset = full.count - 2
                        try checkEqual(try context.fetchObjectIDs(tail), Array(full.suffix(2)), "an offset without a limit")
                        var beyond = FetchRequest<Student>(sortKeys: order)
                        beyond.fetchOffset = full.count + 5
                        beyond.fetchLimit = 3
                        try checkEqual(try context.fetchObjectIDs(beyond), [], "an offset past the end")
                        // Limits and offsets up to Int.max are valid requests (adding them overflowed).
                        for (offset, limit, expected) in [(1, Int.max, Array(full.dropFirst())), (Int.max, 1, []), (Int.max, Int.max, []), (full.count - 1, Int.max, Array(full.suffix(1)))] {
                            var huge = FetchRequest<Student>(sortKeys: order)
                            huge.fetchOffset = offset
                            huge.fetchLimit = limit
                            try checkEqual(try context.fetchObjectIDs(huge), expected, "offset \(offset), limit \(limit) by \(order.map(\.keyPath)) (pending: \(pending))")
                            try checkEqual(try context.count(for: huge), expected.count, "counted: offset \(offset), limit \(limit)")
                        }
                        var objects = FetchRequest<Student>(sortKeys: order)
                        objects.fetchLimit = 4
                        objects.fetchOffset = 2
                        try checkEqual(try context.fetch(objects).map(\.objectID), Array(full[2..<6]), "fetch and fetchObjectIDs page alike")
                    }
                }
            }
        },
        ConformanceScenario("fetch.pendingChanges.reflected") { env in
            try seedPeople(env)
            let context = env.newContext()
            try context.performAndWait {
                let students = try context.fetch(FetchRequest<Student>(sortKeys: [SortKey("name")]))
                let byName = Dictionary(uniqueKeysWithValues: students.map { ($0.name, $0) })
                let zed = Student(context: context); zed.name = "Zed"; zed.age = 30
                byName["Ada"]!.name = "Adaline"
                byName["Grace"]!.age = 20
                byName["Linus"]!.schoolClass = byName["Ada"]!.schoolClass
                context.delete(byName["Edsger"]!)
                try checkEqual(try names(context, nil), ["Adaline", "Barbara", "Grace", "Linus", "Zed", "alan"], "inserts, renames and deletes are reflected")
                try checkEqual(try names(context, .key("age") < 40), ["Adaline", "Grace", "Linus", "Zed"], "changed values are matched")
                try checkEqual(try names(context, .key("name") == "Ada"), [], "the old value no longer matches")
                try checkEqual(try names(context, .key("name") == "Edsger"), [], "a deleted object is not returned")
                try checkEqual(try names(context, .key("schoolClass.title") == "Math"), ["Adaline", "Linus", "alan"], "a changed relationship is matched")
                try checkEqual(try names(context, nil, [SortKey("age")]), ["Barbara", "Grace", "Zed", "Adaline", "Linus", "alan"], "and sorted by current values")
                try checkEqual(try context.count(for: FetchRequest<Student>()), 6, "count(for:) reflects them too")
                try checkEqual(try context.count(for: FetchRequest<Student>(predicate: .key("age") < 40)), 4, "count(for:) with a predicate")
                var limited = FetchRequest<Student>(sortKeys: [SortKey("name")])
                limited.fetchLimit = 2
                limited.fetchOffset = 3
                try checkEqual(try context.fetch(limited).map(\.name), ["Linus", "Zed"], "a page over pending changes")
                let math = try context.fetch(FetchRequest<SchoolClass>(predicate: .key("title") == "Math"))[0]
                try checkEqual(Set(math.students.map(\.name)), ["Adaline", "Linus", "alan"], "the inverse side agrees")
                try context.save()
                try checkEqual(try names(context, nil), ["Adaline", "Barbara", "Grace", "Linus", "Zed", "alan"], "the same answer after the save, from the store")
                try checkEqual(try names(context, .key("schoolClass.title") == "Math"), ["Adaline", "Linus", "alan"], "relationships too")
            }
        },
        ConformanceScenario("fetch.pendingChanges.ignoredWhenDisabled") { env in
            try seedPeople(env)
            let context = env.newContext()
            try context.performAndWait {
                let stored = try context.fetchObjectIDs(FetchRequest<Student>(sortKeys: [SortKey("name")]))
                let students = try context.fetch(FetchRequest<Student>(sortKeys: [SortKey("name")]))
                let zed = Student(context: context); zed.name = "Zed"; zed.age = 30
                students[0].name = "Adaline"
                context.delete(students[2])
                var request = FetchRequest<Student>(sortKeys: [SortKey("name")])
                request.includesPendingChanges = false
                try checkEqual(try context.fetchObjectIDs(request), stored, "the store's rows, in the store's order: no insert, the deleted one still there")
                request.predicate = .key("name") == "Ada"
                try checkEqual(try context.fetchObjectIDs(request), [stored[0]], "matched on the stored value")
                request.predicate = .key("name") == "Adaline"
                try checkEqual(try context.fetchObjectIDs(request), [], "not on the unsaved one")
                request.predicate = nil
                try checkEqual(try context.count(for: request), 6, "count(for:) ignores pending changes too")
                let objects = try context.fetch(request)
                try check(objects[0] === students[0], "the objects are the context's own instances")
                try checkEqual(objects[0].name, "Adaline", "which show their unsaved values")
                try check(!objects.contains(zed), "an unsaved insert is not returned")
                try checkEqual(try context.count(for: FetchRequest<Student>()), 6, "with pending changes: 6 + 1 - 1")
            }
        },
        ConformanceScenario("fetch.subentities.includedUnlessDisabled") { env in
            let context = env.newContext()
            try context.performAndWait {
                for (entity, name) in [("Car", "c1"), ("Truck", "t1"), ("Car", "c2")] {
                    try context.insertObject(entityName: entity).setValue(name, forKey: "name")
                }
                try context.save()
                func fetch(_ entity: String, _ predicate: FetchPredicate? = nil, subentities: Bool = true) throws -> [ManagedObject] {
                    var request = FetchRequest<ManagedObject>(entityName: entity, predicate: predicate, sortKeys: [SortKey("name")])
                    request.includesSubentities = subentities
                    return try context.fetch(request)
                }
                func count(_ entity: String, subentities: Bool = true) throws -> Int {
                    var request = FetchRequest<ManagedObject>(entityName: entity)
                    request.includesSubentities = subentities
                    return try context.count(for: request)
                }
                try checkEqual(try fetch("Vehicle").map(\.entity.name), ["Car", "Car", "Truck"], "the abstract parent returns every sub-entity")
                try checkEqual(try fetch("Vehicle", subentities: false).count, 0, "an abstract entity has no objects of its own")
                try checkEqual(try fetch("Car").count, 2, "a sub-entity")
                try checkEqual(try fetch("Car", subentities: false).count, 2, "a leaf entity without sub-entities")
                try checkEqual(try fetch("Vehicle", key("name").beginsWith("c")).map(\.entity.name), ["Car", "Car"], "a predicate on an inherited attribute")
                try checkEqual(try count("Vehicle"), 3, "count(for:) with sub-entities")
                try checkEqual(try count("Vehicle", subentities: false), 0, "count(for:) without")
                try context.insertObject(entityName: "Truck").setValue("t2", forKey: "name")
                try checkEqual(try fetch("Vehicle").count, 4, "a pending insert of a sub-entity")
                try checkEqual(try count("Vehicle"), 4, "counted")
                try checkEqual(try fetch("Vehicle", subentities: false).count, 0, "but not without sub-entities")
                try checkEqual(try fetch("Truck").map { try $0.value(forKey: "name") as? String }, ["t1", "t2"], "a sub-entity with a pending insert")
            }
        },
        ConformanceScenario("fetch.count.agreesWithFetch") { env in
            try seedPeople(env)
            let context = env.newContext()
            var predicates: [FetchPredicate?] = [nil]
            predicates.append(ObjectGraph.PredicateOperand.key("age") > 40)
            predicates.append(ObjectGraph.PredicateOperand.key("age") == nil)
            predicates.append(ObjectGraph.PredicateOperand.key("schoolClass.title") == "Math")
            predicates.append(FetchPredicate.any("subjects.name", .equal, "Logic"))
            predicates.append(.falsePredicate)
            try context.performAndWait {
                for pending in [false, true] {
                    if pending {
                        let s = Student(context: context); s.name = "New"; s.age = 50
                        context.delete(try context.fetch(FetchRequest<Student>(predicate: .key("name") == "Grace"))[0])
                    }
                    for predicate in predicates {
                        let request = FetchRequest<Student>(predicate: predicate)
                        try checkEqual(try context.count(for: request), try context.fetch(request).count, "count(for:) of \(predicate.map { "\($0)" } ?? "all") (pending: \(pending))")
                    }
                }
                try checkEqual(try context.count(for: FetchRequest<Student>()), 6, "6 - 1 + 1")
                try checkEqual(try context.count(for: FetchRequest<Tag>()), 0, "an empty entity counts 0")
            }
        },
    ]
}
