import Foundation
import ObjectGraph

/// `includesPropertyValues = false`: the matching objects as faults whose values were never
/// read, in the order and with the unsaved changes of an ordinary fetch.
extension FetchScenarios {
    static let propertyValues: [ConformanceScenario] = [
        ConformanceScenario("fetch.includesPropertyValues.falseGivesUnloadedFaults") { env in
            try seedPeople(env)
            try env.reopen()
            let loading = env.newContext()
            try loading.performAndWait {
                var request = FetchRequest<Student>(sortKeys: [SortKey("name")])
                request.returnsObjectsAsFaults = false
                try check(try loading.fetch(request).allSatisfy { !$0.isFault }, "with values (the default), objects come back loaded")
            }
            let context = env.newContext()
            try context.performAndWait {
                var request = FetchRequest<Student>(predicate: .key("age") > 40, sortKeys: [SortKey("age", ascending: false)])
                request.includesPropertyValues = false
                request.returnsObjectsAsFaults = false  // ignored without values
                let students = try context.fetch(request)
                try checkEqual(students.map(\.objectID), try context.fetchObjectIDs(request), "the matching objects, in order")
                try checkEqual(students.count, 3, "Grace, Edsger and alan")
                try check(students.allSatisfy(\.isFault), "every object is a fault")
                try checkEqual(context.statistics.faultsFired, 0, "no fault fired")
                try checkEqual(students.map(\.name), ["Grace", "Edsger", "alan"], "touched, they fire as any fault")
                try check(students.allSatisfy { !$0.isFault }, "and are loaded then")
                try checkEqual(context.statistics.faultsFired, 3, "one fault fired per object touched")
            }
        },
        ConformanceScenario("fetch.includesPropertyValues.registeredObjectsKeepTheirState") { env in
            try seedPeople(env)
            try env.reopen()
            let context = env.newContext()
            try context.performAndWait {
                var loaded = FetchRequest<Student>(predicate: .key("name") == "Grace")
                loaded.returnsObjectsAsFaults = false
                let grace = try context.fetch(loaded)[0]
                grace.age = 1
                var request = FetchRequest<Student>(sortKeys: [SortKey("age"), SortKey("name")])
                request.includesPropertyValues = false
                let students = try context.fetch(request)
                try checkEqual(students.map(\.objectID), try context.fetchObjectIDs(request), "the same objects and order as the IDs")
                try check(students[1] === grace, "Grace, aged 1 without saving, sorts second: \(students.map(\.objectID))")
                try check(!grace.isFault && grace.hasChanges, "the loaded, changed object keeps its state")
                try checkEqual(grace.age, 1, "and its unsaved value")
                let others = students.filter { $0 !== grace }
                try checkEqual(others.count, 5, "the other students")
                try check(others.allSatisfy(\.isFault), "sorted with unsaved changes, the others stay faults")
                try checkEqual(others.map(\.name), ["Barbara", "Ada", "Linus", "alan", "Edsger"], "in age order")

                var filtered = FetchRequest<Student>(predicate: .key("age") < 40)
                filtered.includesPropertyValues = false
                let young = try context.fetch(filtered)
                try checkEqual(Set(young.map(\.objectID)), Set(try context.fetchObjectIDs(filtered)), "a predicate with unsaved changes")
                try checkEqual(young.count, 3, "Ada, Linus and Grace")

                let inserted = Student(context: context); inserted.name = "Zed"; inserted.age = 0
                let withNew = try context.fetch(request)
                try check(withNew[1] === inserted, "an unsaved object is fetched as itself, after Barbara (no age)")
                try check(!inserted.isFault, "and is no fault")

                var prefetching = request
                prefetching.relationshipKeyPathsForPrefetching = ["schoolClass"]
                try checkEqual(try checkInvalidFetch("prefetching without values") { _ = try context.fetch(prefetching) }.key, "schoolClass", "the error names the key path")
            }
        },
    ]
}
