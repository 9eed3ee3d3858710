import Foundation
import ObjectGraph
import ObjectGraphConformance
import Testing

/// Unsaved changes to *related* objects count in fetches whose predicate, sort or group keys
/// read them through relationships: a class renamed without saving changes which students
/// match `schoolClass.title == …`, on every store (an audit).
@Suite("AuditY related pending changes")
struct AuditYRelatedPendingTests {
    @Test("rename a class without saving, fetch its students by the new title", arguments: allBackends)
    func relatedRenameCounts(_ backend: ConformanceBackend) {
        let scenario = ConformanceScenario("audit.relatedPending") { env in
            let seed = env.newContext()
            try seed.performAndWait {
                let math = try seed.insertObject(entityName: "SchoolClass"); try math.setValue("Math", forKey: "title")
                for name in ["Ada", "Bob"] {
                    let s = try seed.insertObject(entityName: "Student"); try s.setValue(name, forKey: "name")
                    try s.setValue(math, forKey: "schoolClass")
                }
                try seed.save()
            }
            let context = env.newContext()
            try context.performAndWait {
                let math = try context.fetch(FetchRequest<ManagedObject>(entityName: "SchoolClass"))[0]
                try math.setValue("Algebra", forKey: "title")  // unsaved; no Student changed
                let request = FetchRequest<ManagedObject>(
                    entityName: "Student", predicate: try FetchPredicate(format: "schoolClass.title == 'Algebra'"), sortKeys: [SortKey("name")])
                try checkEqual(try context.fetch(request).map { try $0.value(forKey: "name") as! String }, ["Ada", "Bob"], "fetch")
                try checkEqual(try context.count(for: request), 2, "count(for:)")
                var grouped = FetchRequest<ManagedObject>(entityName: "Student")
                grouped.propertiesToFetch = [.key("schoolClass.title"), .count(as: "n")]
                grouped.propertiesToGroupBy = ["schoolClass.title"]
                try checkEqual(try context.fetchDictionaries(grouped).map { $0["schoolClass.title"] ?? .null }, [.string("Algebra")], "grouped")
            }
        }
        let outcome = ConformanceKit.run(scenario, on: backend)
        #expect(outcome == .passed, "\(backend.name): \(outcome)")
    }
}
