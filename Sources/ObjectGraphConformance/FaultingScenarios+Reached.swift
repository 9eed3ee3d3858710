import Foundation
import ObjectGraph

/// Objects reached through relationships after the app let go of them. The context keeps the
/// most recently reached ones alive (so a traversal does not make and fire the same few faults
/// again and again), but that must not change what the app sees: an object the app let go of
/// comes back with what the store holds now, as a new one would (Core Data deallocates it),
/// while one the app still holds keeps the values it read until it is refreshed or merged.
extension FaultingScenarios {
    static let reached: [ConformanceScenario] = [
        ConformanceScenario("faulting.reachedObjectLetGoComesBackWithTheStoredValues") { env in
            let ids = try seedFourStudents(env)  // A: s0, s2; B: s1, s3
            let context = env.newContext()
            // Class A is reached through s0 and read, then let go of; class B is kept.
            let (aID, b) = try context.performAndWait {
                let s0 = try context.existingObject(with: ids[0]) as! Student
                let s1 = try context.existingObject(with: ids[1]) as! Student
                guard let a = s0.schoolClass, let b = s1.schoolClass else {
                    throw ScenarioFailure(message: "the seeded students have classes", file: #filePath, line: #line)
                }
                try check(a.title == "A" && b.title == "B", "both classes read through the relationship")
                return (a.objectID, b)
            }
            let other = env.newContext()
            try other.performAndWait {
                for schoolClass in try other.fetch(FetchRequest<SchoolClass>()) { schoolClass.title += "2" }
                try other.save()
            }
            try context.performAndWait {
                let s0 = try context.existingObject(with: ids[0]) as! Student
                try checkEqual(s0.schoolClass?.title, "A2", "A, reached again after the app let go of it, shows the stored title")
                try checkEqual((context.object(with: aID) as! SchoolClass).title, "A2", "and so does a lookup by ID")
                try checkEqual(b.title, "B", "B, which the app held, keeps the title it read (no merge, no refresh)")
                let titles = try context.fetch(FetchRequest<SchoolClass>()).map(\.title)
                try checkEqual(Set(titles), ["A2", "B"], "a fetch returns the held object as it is and the other with its stored values")
                context.refresh(b, mergeChanges: false)
                try checkEqual(b.title, "B2", "until refreshed")
            }
        },
    ]
}
