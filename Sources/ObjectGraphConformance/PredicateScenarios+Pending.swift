import Foundation
import ObjectGraph

/// Prefetching round trips for format-string fetches, and unsaved changes combined with
/// sort keys, offsets and limits.
extension PredicateScenarios {
    /// Names of the students matching `format`, in `order`, from `offset` (at most `limit`, 0 for all).
    static func page(_ context: ManagedObjectContext, _ format: String, _ arguments: Any?..., order: [SortKey] = [SortKey("name")], offset: Int = 0, limit: Int = 0, pending: Bool = true) throws -> [String] {
        try context.performAndWait {
            var request = FetchRequest<Student>(predicate: try FetchPredicate(format: format, argumentArray: arguments), sortKeys: order)
            request.fetchOffset = offset
            request.fetchLimit = limit
            request.includesPendingChanges = pending
            let names = try context.fetch(request).map(\.name)
            try checkEqual(try context.count(for: request), names.count, "count(for:) of '\(format)' at offset \(offset), limit \(limit), pending: \(pending)")
            return names
        }
    }

    static let pending: [ConformanceScenario] = [
        ConformanceScenario("predicates.prefetch.roundTripsPerKeyPath") { env in
            try seedSchool(env)
            try seedChats(env)
            // With returnsObjectsAsFaults = false the fetch loads the rows it returns; then each
            // step costs one round trip for a to-one (the destination rows) and two for a to-many
            // (the member IDs, then their rows), however many objects there are.
            struct Case {
                let entity: String, format: String, sortKey: String, keyPath: String, roundTrips: Int
                let walk: (ManagedObject) -> String
            }
            let cases: [Case] = [
                Case(entity: "Student", format: "name != nil", sortKey: "name", keyPath: "schoolClass", roundTrips: 2) {
                    ($0 as! Student).schoolClass?.title ?? "-"
                },
                Case(entity: "Student", format: "age == nil OR age >= 0", sortKey: "name", keyPath: "subjects", roundTrips: 3) {
                    ($0 as! Student).subjects.map(\.name).sorted().joined(separator: "+")
                },
                Case(entity: "Address", format: "street BEGINSWITH[c] %@", sortKey: "street", keyPath: "student.schoolClass", roundTrips: 3) {
                    (($0 as! Address).student?.schoolClass?.title ?? "-")
                },
                Case(entity: "Chat", format: "title != 'none'", sortKey: "title", keyPath: "messages.author", roundTrips: 4) {
                    ($0 as! Chat).messages.map { $0.author?.name ?? "?" }.sorted().joined(separator: "+")
                },
            ]
            let walks: [String: [String]] = [
                "schoolClass": ["Math", "Math", "Physics", "-", "Math"],  // Ada, Bob, Grace, Zoe, alan
                "subjects": ["Logic+Math", "Math", "Logic", "", "Math"],
                "student.schoolClass": ["Math", "Physics", "Math", "-", "-"],  // streets 1…5
                "messages.author": ["Ann+Ben", "", "Ann"],  // General, Quiet, Random
            ]
            for testCase in cases {
                var tripsByLimit: [Int] = []
                for limit in [0, 2] {
                    try env.reopen()  // a cold row cache
                    let context = env.newContext()
                    try context.performAndWait {
                        let arguments: [Any?] = testCase.format.contains("%@") ? [""] : []
                        var request = FetchRequest<ManagedObject>(entityName: testCase.entity, predicate: try FetchPredicate(format: testCase.format, argumentArray: arguments), sortKeys: [SortKey(testCase.sortKey)])
                        request.relationshipKeyPathsForPrefetching = [testCase.keyPath]
                        request.returnsObjectsAsFaults = false
                        request.fetchLimit = limit
                        let objects = try context.fetch(request)
                        let afterFetch = context.statistics
                        try checkEqual(afterFetch.storeRoundTrips, testCase.roundTrips, "round trips to fetch \(testCase.entity) prefetching '\(testCase.keyPath)' (limit \(limit))")
                        let expected = walks[testCase.keyPath]!
                        try checkEqual(objects.map(testCase.walk), limit == 0 ? expected : Array(expected.prefix(limit)), "the prefetched graph of '\(testCase.keyPath)'")
                        try checkEqual(context.statistics.storeRoundTrips, afterFetch.storeRoundTrips, "walking '\(testCase.keyPath)' after prefetching costs no round trip")
                        tripsByLimit.append(afterFetch.storeRoundTrips)
                    }
                }
                try checkEqual(tripsByLimit[0], tripsByLimit[1], "round trips for '\(testCase.keyPath)' do not depend on how many objects are fetched")
            }
            // Faults (the default): at most one more trip, to load the sources for the first step.
            for limit in [0, 3] {
                try env.reopen()
                let context = env.newContext()
                try context.performAndWait {
                    var request = FetchRequest<Student>(predicate: try FetchPredicate(format: "name != nil"), sortKeys: [SortKey("name")])
                    request.relationshipKeyPathsForPrefetching = ["schoolClass", "subjects"]
                    request.fetchLimit = limit
                    let students = try context.fetch(request)
                    let trips = context.statistics.storeRoundTrips
                    try check(trips <= 5, "faulted fetch prefetching two key paths took \(trips) round trips (limit \(limit)); expected at most 5")
                    _ = students.map { ($0.schoolClass?.title, $0.subjects.map(\.name)) }
                    try checkEqual(context.statistics.storeRoundTrips, trips, "walking costs no round trip (limit \(limit))")
                }
            }
        },
        ConformanceScenario("predicates.pendingChanges.sortAndLimit") { env in
            let writer = env.newContext()
            try writer.performAndWait {
                for (name, age) in [("Bea", 30), ("Cid", 40), ("Dan", 50), ("Eve", 60), ("Fay", 70)] {
                    let student = Student(context: writer); student.name = name; student.age = Int16(age)
                }
                try writer.save()
            }
            let context = env.newContext()
            try checkEqual(try page(context, "age > %d", 0, limit: 2), ["Bea", "Cid"], "saved: the first page")
            try checkEqual(try page(context, "age > %d", 0, offset: 4, limit: 2), ["Fay"], "saved: the last, partial page")
            context.performAndWait { let abe = Student(context: context); abe.name = "Abe"; abe.age = 20 }
            try checkEqual(try page(context, "age > %d", 0, limit: 2), ["Abe", "Bea"], "an unsaved insert that sorts first appears at offset 0")
            try checkEqual(try page(context, "age > %d", 0, offset: 1, limit: 2), ["Bea", "Cid"], "and shifts the next page")
            try checkEqual(try page(context, "age > %d", 0, offset: 5, limit: 2), ["Fay"], "and the last one")
            try checkEqual(try page(context, "age > %d", 0, limit: 2, pending: false), ["Bea", "Cid"], "without pending changes, the store's page")
            try checkEqual(try page(context, "age > %d", 25, order: [SortKey("age")], limit: 1), ["Bea"], "the insert does not match: no change")
            try context.performAndWait {
                context.delete(try context.fetch(FetchRequest<Student>(predicate: try FetchPredicate(format: "name == 'Bea'")))[0])
            }
            try checkEqual(try page(context, "age > %d", 0, limit: 2), ["Abe", "Cid"], "an unsaved delete disappears from its page")
            try checkEqual(try page(context, "age > %d", 0, offset: 4, limit: 2), ["Fay"], "the pages after it move up")
            try checkEqual(try page(context, "name == 'Bea'", limit: 1), [], "the deleted object matches nothing")
            try checkEqual(try page(context, "age > %d", 0, limit: 2, pending: false), ["Bea", "Cid"], "the store still has it")
            try context.performAndWait {
                let students = try context.fetch(FetchRequest<Student>(predicate: try FetchPredicate(format: "name IN {'Fay', 'Dan'}"), sortKeys: [SortKey("name")]))
                students[1].name = "Aaron"  // Fay
                students[0].age = 10  // Dan
            }
            try checkEqual(try page(context, "age > %d", 0, limit: 2), ["Aaron", "Abe"], "an updated value moves its object to the first page")
            try checkEqual(try page(context, "age > %d", 0, order: [SortKey("age")], limit: 2), ["Dan", "Abe"], "by age: Dan moved from the middle to offset 0")
            try checkEqual(try page(context, "age > %d", 0, order: [SortKey("age", ascending: false)], offset: 4, limit: 1), ["Dan"], "and to the end when descending")
            try checkEqual(try page(context, "age >= 30", order: [SortKey("age")], limit: 2), ["Cid", "Eve"], "the update no longer matches: gone from the page")
            context.performAndWait { let ann = Student(context: context); ann.name = "Ann"; ann.age = 40 }
            try checkEqual(try page(context, "age == 40 OR name BEGINSWITH 'E'", order: [SortKey("age")], limit: 2), ["Cid", "Ann"], "a tie: the saved object first, then the unsaved one")
            try context.performAndWait { try context.save() }
            try checkEqual(try page(context, "age == 40 OR name BEGINSWITH 'E'", order: [SortKey("age")], limit: 2), ["Cid", "Ann"], "the same order after the save")
            try checkEqual(try page(context, "age > %d", 0, limit: 2), ["Aaron", "Abe"], "and the same first page")
            try checkEqual(try page(context, "age > %d", 0, order: [SortKey("age")], offset: 1, limit: 3), ["Abe", "Cid", "Ann"], "a middle page, from the store")
        },
        ConformanceScenario("predicates.pendingChanges.relationshipsAndAggregates") { env in
            try seedSchool(env)
            let context = env.newContext()
            let students = { (format: String, expected: [String]) in try expect(context, "Student", "name", format, are: expected) }
            let classes = { (format: String, expected: [String]) in try expect(context, "SchoolClass", "title", format, are: expected) }
            try context.performAndWait {
                let zoe = try context.fetch(FetchRequest<Student>(predicate: try FetchPredicate(format: "name == 'Zoe'")))[0]
                let music = Subject(context: context); music.name = "Music"
                zoe.$subjects.add(music)
                let grace = try context.fetch(FetchRequest<Student>(predicate: try FetchPredicate(format: "name == 'Grace'")))[0]
                let math = try context.fetch(FetchRequest<SchoolClass>(predicate: try FetchPredicate(format: "title == 'Math'")))[0]
                grace.schoolClass = math
            }
            try students("subjects.@count == 1", ["Bob", "Grace", "Zoe", "alan"])  // Zoe's unsaved subject counts
            try students("ANY subjects.name == 'Music'", ["Zoe"])
            try students("schoolClass.title == 'Physics'", [])  // Grace moved to Math
            try expect(context, "Subject", "name", "students.@count == 0", are: ["Art"])  // Music has Zoe
            try classes("students.@count == 4", ["Math"])  // the inverse side changed too
            try classes("students.@count == 0", ["Empty", "Physics"])
            try classes("SUBQUERY(students, $s, $s.age > 80).@count == 1", ["Math"])
            try classes("students.@max.age == 85", ["Math"])
            try classes("ALL students.age > 30", ["Empty", "Physics"])  // Physics is now vacuously true
            try context.performAndWait {
                let amy = Student(context: context); amy.name = "Amy"; amy.age = 50
                amy.schoolClass = try context.fetch(FetchRequest<SchoolClass>(predicate: try FetchPredicate(format: "title == 'Empty'")))[0]
            }
            try classes("ANY students.name == 'Amy'", ["Empty"])
            try checkEqual(try page(context, "schoolClass != nil", order: [SortKey("age", ascending: false)], limit: 2), ["Grace", "Amy"], "an insert on the first page, sorted by age")
            try checkEqual(try page(context, "schoolClass != nil", order: [SortKey("schoolClass.title"), SortKey("name")], limit: 3), ["Amy", "Ada", "Bob"], "sorted through a changed to-one")
            try context.performAndWait { try context.save() }
            try classes("students.@count == 4", ["Math"])
            try classes("students.@count == 0", ["Physics"])
            try students("ANY subjects.name == 'Music'", ["Zoe"])
        },
        ConformanceScenario("predicates.pendingChanges.unchangedObjectsMatchByStoredValues") { env in
            // A predicate reading related objects the context changed is evaluated here, not
            // by the store; an object without unsaved changes still matches by its stored
            // values, as the store (and Core Data) match it — not by older values it kept
            // from before another context's save.
            let (reader, loaded) = try FetchScenarios.seedPeopleLoadedBeforeAnotherSave(env)
            try reader.performAndWait {
                try checkEqual(loaded[0].age, 36, "Ada as loaded (no merge)")
                let old: FetchPredicate = .key("age") > 90 && .key("schoolClass.title") == "Math"
                try FetchScenarios.expectNames(reader, old, ["Ada"], "matched by the stored age")
                loaded[3].schoolClass?.title = "Optics"  // Grace's class, unsaved
                try FetchScenarios.expectNames(reader, old, ["Ada"], "still, with an unsaved change to another class")
                loaded[0].schoolClass?.title = "Maths"  // Ada's class, unsaved
                try FetchScenarios.expectNames(reader, old, [], "not under her class's old title")
                try FetchScenarios.expectNames(reader, .key("age") > 90 && .key("schoolClass.title") == "Maths", ["Ada"], "but under its unsaved one")
                try FetchScenarios.expectNames(reader, .key("age") < 40 && .key("schoolClass.title") == "Maths", [], "and not by her older loaded age")
            }
        },
        ConformanceScenario("predicates.pendingChanges.relatedValues") { env in
            // Unsaved values of related objects count, as a save would make them count: the
            // store's answer is about the saved ones (renaming a class left its students out
            // of `schoolClass.title == <new title>` on every store; an audit).
            try seedSchool(env)
            let context = env.newContext()
            let students = { (format: String, expected: [String]) in try expect(context, "Student", "name", format, are: expected) }
            let classes = { (format: String, expected: [String]) in try expect(context, "SchoolClass", "title", format, are: expected) }
            try context.performAndWait {
                let math = try context.fetch(FetchRequest<SchoolClass>(predicate: try FetchPredicate(format: "title == 'Math'")))[0]
                math.title = "Zebra"
            }
            try checkEqual(try page(context, "schoolClass.title == 'Zebra'"), ["Ada", "Bob", "alan"].sorted(), "a renamed class's students, no Student changed")
            try checkEqual(try page(context, "schoolClass.title == 'Math'"), [], "and none under the old title")
            try checkEqual(try page(context, "schoolClass != nil", order: [SortKey("schoolClass.title"), SortKey("name")], limit: 1), ["Grace"], "sorted by the new title: Physics first")
            try context.performAndWait {
                var grouped = FetchRequest<Student>()
                grouped.propertiesToFetch = [.key("schoolClass.title", as: "title"), .count(as: "n")]
                grouped.propertiesToGroupBy = ["schoolClass.title"]
                grouped.predicate = try FetchPredicate(format: "schoolClass != nil")
                let groups = try context.fetchDictionaries(grouped).map { "\($0["title"] ?? .null)=\($0["n"] ?? .null)" }.sorted()
                try checkEqual(groups, ["\(AttributeValue.string("Physics"))=\(AttributeValue.integer(1))", "\(AttributeValue.string("Zebra"))=\(AttributeValue.integer(3))"], "grouped by the new title")
                let logic = try context.fetch(FetchRequest<Subject>(predicate: try FetchPredicate(format: "name == 'Logic'")))[0]
                logic.name = "Logik"
                let grace = try context.fetch(FetchRequest<Student>(predicate: try FetchPredicate(format: "name == 'Grace'")))[0]
                grace.age = 20
            }
            try students("ANY subjects.name == 'Logik'", ["Ada", "Grace"])
            try students("ANY subjects.name == 'Logic'", [])
            try classes("students.@max.age == 85", [])
            try classes("SUBQUERY(students, $s, $s.age < 25).@count > 0", ["Physics"])
            // A related object of the fetched entity itself: the manager renamed, the report
            // unchanged.
            let writer = env.newContext()
            try writer.performAndWait {
                let kim = Employee(context: writer); kim.name = "Kim"
                let lee = Employee(context: writer); lee.name = "Lee"; lee.manager = kim
                try writer.save()
            }
            let employees = env.newContext()
            try employees.performAndWait {
                let kim = try employees.fetch(FetchRequest<Employee>(predicate: try FetchPredicate(format: "name == 'Kim'")))[0]
                kim.name = "Kai"
            }
            try expect(employees, "Employee", "name", "manager.name == 'Kai'", are: ["Lee"])
            try context.performAndWait { try context.save() }
            try students("schoolClass.title == 'Zebra'", ["Ada", "Bob", "alan"])
            try students("ANY subjects.name == 'Logik'", ["Ada", "Grace"])
            try classes("SUBQUERY(students, $s, $s.age < 25).@count > 0", ["Physics"])
        },
    ]
}
