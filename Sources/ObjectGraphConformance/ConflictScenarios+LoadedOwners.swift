import Foundation
import ObjectGraph

/// A conflict resolution that takes the other save's to-one keeps the context's own graph
/// paired: the loaded to-many of the owner the object left, and of the one it joined, agree
/// with the object's to-one after the save, as they do in the store.
extension ConflictScenarios {
    static let loadedOwners: [ConformanceScenario] = [
        ConformanceScenario("conflicts.storedMoveLeavesLoadedOwnersPaired") { env in
            for policy in [MergePolicy.storeTrumps, .objectTrumps, .rollback] {
                let (ada, math, art, _) = try seedClasses(env)
                let (first, second) = (env.newContext(), env.newContext())
                second.mergePolicy = policy
                let a: Student = try load(ada, in: first)
                let b: Student = try load(ada, in: second)
                // The second context has both classes' students loaded.
                let (oldClass, newClass) = second.performAndWait {
                    let old = second.object(with: math) as! SchoolClass
                    let new = second.object(with: art) as! SchoolClass
                    _ = old.students.count
                    _ = new.students.count
                    return (old, new)
                }
                try first.performAndWait { a.schoolClass = (first.object(with: art) as! SchoolClass); try first.save() }
                try second.performAndWait {
                    b.name = "Ada L."
                    try second.save()
                    try checkEqual(b.schoolClass?.objectID, art, "\(policy): her class is the one the other save chose")
                    try checkEqual(oldClass.students.map(\.objectID), [], "\(policy): Math, which she left, lists her no more")
                    try checkEqual(newClass.students.map(\.objectID), [ada], "\(policy): Art lists her")
                }
                try checkOneOwner(env, ada: ada, expected: art, "\(policy)")
                let cleanup = env.newContext()
                try cleanup.performAndWait {
                    for object in try cleanup.fetch(FetchRequest<ManagedObject>(entityName: "SchoolClass")) { cleanup.delete(object) }
                    for object in try cleanup.fetch(FetchRequest<ManagedObject>(entityName: "Student")) { cleanup.delete(object) }
                    try cleanup.save()
                }
            }
        },
    ]
}
