import Foundation
import ObjectGraph

/// `refreshAllObjects()` and `refresh(_:mergeChanges:)`, and the fault hooks around an object turned back into a fault.
extension ContextScenarios {
    static let refresh: [ConformanceScenario] = [
        ConformanceScenario("context.refreshAllObjects.keepsChangesOverStoredValues") { env in
            // As refresh(_:mergeChanges: true) on every registered object: an object with
            // unsaved changes keeps them over what the store holds now, one without becomes a
            // fault that reads what the store holds now.
            let seeded = try env.seed { setup in
                let ann = Student(context: setup); ann.name = "Ann"; ann.age = 20
                let bob = Student(context: setup); bob.name = "Bob"; bob.age = 30
                return [ann, bob]
            }
            let (annID, bobID) = (seeded[0], seeded[1])
            let context = env.newContext()
            let (ann, bob) = try context.performAndWait {
                let ann = try context.existingObject(with: annID) as! Student
                let bob = try context.existingObject(with: bobID) as! Student
                ann.name = "Mine"
                return (ann, bob)
            }
            let other = env.newContext()
            try other.performAndWait {
                (try other.existingObject(with: annID) as! Student).age = 21
                (try other.existingObject(with: bobID) as! Student).name = "Robert"
                try other.save()
            }
            try context.performAndWait {
                try check(ann.age == 20 && bob.name == "Bob", "before the refresh, loaded values are what this context read")
                context.refreshAllObjects()
                try check(bob.isFault, "an object without changes becomes a fault")
                try checkEqual(bob.name, "Robert", "and reads what the store holds now")
                try check(!ann.isFault && ann.isUpdated && context.hasChanges, "an object with changes keeps them (and stays loaded)")
                try checkEqual(ann.name, "Mine", "its own change")
                try checkEqual(ann.age, 21, "the stored value of what it did not change")
                try context.save()  // its read version is the stored one now: no conflict
            }
            let fresh = env.newContext()
            try fresh.performAndWait {
                let stored = try fresh.existingObject(with: annID) as! Student
                try check(stored.name == "Mine" && stored.age == 21, "the kept change and the refreshed value were saved together")
            }
        },
        ConformanceScenario("context.refreshAllObjects.dropsCachedRows") { env in
            // A registered fault must not fire from a row the coordinator's cache kept: here a
            // stale row (as one replaced in the store by another coordinator or process).
            let id = try env.seed { setup in
                let tag = Tag(context: setup); tag.label = "stored"
                return [tag]
            }[0]
            let cache = env.container.coordinator.rowCache
            cache.store([RowSnapshot(objectID: id, version: 1, attributes: [.string("stale")], toOne: [])])
            let context = env.newContext()
            try context.performAndWait {
                let tag = context.object(with: id) as! Tag
                try check(tag.isFault, "registered, not loaded")
                let peek = env.newContext()
                let seen = peek.performAndWait { (peek.object(with: id) as! Tag).label }
                try checkEqual(seen, cache.isBypassed ? "stored" : "stale", "the cache serves its row, stale or not")
                context.refreshAllObjects()
                try checkEqual(tag.label, "stored", "after refreshAllObjects the fault reads what the store holds")
            }
        },
        ConformanceScenario("context.hooks.willTurnIntoFaultPairsWithDidTurnIntoFault") { env in
            let ids = try env.seed { setup in
                (0..<3).map { index in
                    let probe = Probe(context: setup); probe.name = "p\(index)"
                    return probe
                }
            }
            let context = env.newContext()
            try context.performAndWait {
                let probes = try ids.map { try context.existingObject(with: $0) as! Probe }
                context.refresh(probes[0], mergeChanges: false)
                try checkEqual(probes[0].hooks, ["awakeFromFetch", "willTurnIntoFault", "didTurnIntoFault"], "refresh calls both, will first")
                try checkEqual(probes[0].nameBeforeFault, "p0", "willTurnIntoFault still sees the values")
                context.refresh(probes[0], mergeChanges: false)
                try checkEqual(probes[0].hooks.count, 3, "a fault is not turned into one again: no hooks")
                probes[1].name = "changed"
                context.rollback()
                try checkEqual(Array(probes[1].hooks.suffix(2)), ["willTurnIntoFault", "didTurnIntoFault"], "rollback turns a changed object into a fault")
                try checkEqual(probes[1].nameBeforeFault, "changed", "its unsaved value is still there in willTurnIntoFault")
                _ = probes[0].name
                _ = probes[1].name
                probes[2].name = "kept"
                context.refreshAllObjects()
                try checkEqual(Array(probes[0].hooks.suffix(2)), ["willTurnIntoFault", "didTurnIntoFault"], "refreshAllObjects turns an unchanged object into a fault")
                try checkEqual(probes[2].hooks, ["awakeFromFetch"], "but not one with changes")
                try checkEqual(probes[2].name, "kept", "which keeps them")
                for probe in probes {
                    let will = probe.hooks.filter { $0 == "willTurnIntoFault" }.count
                    try checkEqual(will, probe.hooks.filter { $0 == "didTurnIntoFault" }.count, "will and did come in pairs (\(probe.hooks))")
                }
            }
        },
        ConformanceScenario("context.refreshAllObjects.leavesPendingDeletionsToTheSave") { env in
            // Another context adds a member to a class deleted here, unsaved. The deletion's
            // rules ran on the members read before; refreshing must not take the stored version
            // as read (the save's conflict check is what catches the new member), or the save
            // deleted the class and left the new member naming it.
            let ids = try env.seed { setup in
                let math = SchoolClass(context: setup); math.title = "Math"
                let ann = Student(context: setup); ann.name = "Ann"; ann.schoolClass = math
                return [math]
            }
            let context = env.newContext()
            try context.performAndWait {
                let math = try context.existingObject(with: ids[0]) as! SchoolClass
                _ = math.students.count
                context.delete(math)
                try context.processPendingChanges()
            }
            let other = env.newContext()
            let bobID = try other.performAndWait {
                let bob = Student(context: other); bob.name = "Bob"
                bob.schoolClass = try other.existingObject(with: ids[0]) as? SchoolClass
                try other.save()
                return bob.objectID
            }
            try context.performAndWait {
                context.refreshAllObjects()
                try check(context.deletedObjects.contains { $0.objectID == ids[0] }, "the deletion is still pending")
                _ = try checkThrows(MergeConflictError.self, "the deletion saved against the version read before the member was added") { try context.save() }
            }
            let fresh = env.newContext()
            try fresh.performAndWait {
                let bob = try fresh.existingObject(with: bobID) as! Student
                let classes = try fresh.fetch(FetchRequest<SchoolClass>())
                try check(bob.schoolClass == nil || classes.contains { $0 === bob.schoolClass }, "no member names a deleted class (stored: \(classes.count) classes, Bob's class \(String(describing: bob.schoolClass?.objectID)))")
            }
        },
        ConformanceScenario("context.refresh.rereadsTheMembersOfAFaultWithChanges") { env in
            // Reading a to-many does not fire the object's own fault, so an object can be a
            // fault holding loaded members and, through an inverse, membership changes. A
            // refresh keeping those changes must read the members again as it does for a
            // loaded object (and as a merge does): kept, they showed what another context's
            // save had changed since, and this context's save stored its changes over them.
            let ids = try FaultingScenarios.seedFourStudents(env)  // A: s0, s2; B: s1, s3
            let context = env.newContext()
            let (a, b) = try FaultingScenarios.classesWithLoadedMembers(context)
            try context.performAndWait {
                (try context.existingObject(with: ids[0]) as! Student).schoolClass = b
                try check(a.isFault && b.isFault && a.hasChanges && b.hasChanges, "both classes are faults with membership changes")
            }
            try FaultingScenarios.moveStudent(env, ids[1], to: "A")
            try FaultingScenarios.moveStudent(env, ids[2], to: "B")
            try context.performAndWait {
                context.refreshAllObjects()
                try checkEqual(Set(a.students.map(\.objectID)), [ids[1]], "A after refreshAllObjects: stored (s0, s1) less its own removal of s0")
                try checkEqual(Set(b.students.map(\.objectID)), [ids[0], ids[2], ids[3]], "B after refreshAllObjects: stored (s2, s3) and its own addition of s0")
            }
            try FaultingScenarios.moveStudent(env, ids[3], to: "A")
            try context.performAndWait {
                context.refresh(a, mergeChanges: true)
                try checkEqual(Set(a.students.map(\.objectID)), [ids[1], ids[3]], "A after refresh(_:mergeChanges: true)")
                try context.save()
            }
            let fresh = env.newContext()
            try fresh.performAndWait {
                let classes = try fresh.fetch(FetchRequest<SchoolClass>(sortKeys: [SortKey("title")]))
                try checkEqual(Set(classes[0].students.map(\.objectID)), [ids[1], ids[3]], "A as stored")
                try checkEqual(Set(classes[1].students.map(\.objectID)), [ids[0], ids[2]], "B as stored")
            }
        },
    ]
}
