import Foundation
import ObjectGraph

/// `shouldRefreshRefetchedObjects`: a fetch returning objects this context already loaded
/// leaves their values alone by default, as Core Data does, and with the option gives them the
/// stored values under their unsaved changes.
extension FetchScenarios {
    static let refetch: [ConformanceScenario] = [
        ConformanceScenario("fetch.shouldRefreshRefetchedObjects") { env in
            let (adaID, bobID) = try FaultingScenarios.seedAdaAndBob(env)
            let context = env.newContext()
            let (ada, bob) = try context.performAndWait {
                var request = FetchRequest<Student>(sortKeys: [SortKey("name")])
                request.returnsObjectsAsFaults = false
                let students = try context.fetch(request)
                students[1].age = 50  // Bob: an unsaved change
                return (students[0], students[1])
            }
            try rename(env, [adaID: "Ann", bobID: "Robert"])
            try context.performAndWait {
                var request = FetchRequest<Student>(sortKeys: [SortKey("age")])
                request.returnsObjectsAsFaults = false
                _ = try context.fetch(request)
                try checkEqual([ada.name, bob.name], ["Ada", "Bob"], "by default a refetch leaves loaded objects alone")
                request.shouldRefreshRefetchedObjects = true
                let refreshed = try context.fetch(request)
                try check(refreshed.count == 2 && refreshed[0] === ada && refreshed[1] === bob, "the same objects, in order")
                try checkEqual([ada.name, bob.name], ["Ann", "Robert"], "with the option they take the stored values")
                try checkEqual(bob.age, 50, "unsaved changes stay on top")
                try check(bob.isUpdated && !ada.isUpdated && !ada.hasChanges, "change flags as before")
            }
            try rename(env, [adaID: "Anna"])
            try context.performAndWait {
                var request = FetchRequest<Student>(predicate: .key("age") == 30)
                request.shouldRefreshRefetchedObjects = true  // faults requested: IDs only
                let found = try context.fetch(request)
                try check(found.count == 1 && found[0] === ada, "Ada found")
                try checkEqual(ada.name, "Anna", "refreshed when the fetch returns faults too")
                // The refreshed read versions are the stored ones: the save conflicts with nothing.
                try context.save()
            }
            let reader = env.newContext()
            try reader.performAndWait {
                let stored = try reader.existingObject(with: bobID) as! Student
                try checkEqual(stored.name, "Robert", "the other context's change kept")
                try checkEqual(stored.age, 50, "this context's change saved")
            }
        },
        ConformanceScenario("fetch.shouldRefreshRefetchedObjects.batched") { env in
            // A batched fetch honours the option too, when each batch loads (it ignored it:
            // loaded objects kept the values read before another context's save).
            let (adaID, bobID) = try FaultingScenarios.seedAdaAndBob(env)
            let context = env.newContext()
            let (ada, bob) = try context.performAndWait {
                let ada = try context.existingObject(with: adaID) as! Student
                let bob = try context.existingObject(with: bobID) as! Student
                bob.age = 50
                return (ada, bob)
            }
            try rename(env, [adaID: "Ann", bobID: "Robert"])
            try context.performAndWait {
                var request = FetchRequest<Student>(sortKeys: [SortKey("name")])
                request.fetchBatchSize = 1
                let plain = try context.fetchBatched(request)
                try check(plain[0] === ada && plain[1] === bob, "the same objects")
                try checkEqual([ada.name, bob.name], ["Ada", "Bob"], "by default loaded objects are left alone")
                request.shouldRefreshRefetchedObjects = true
                let refreshed = try context.fetchBatched(request)
                try check(refreshed[0] === ada && refreshed[1] === bob, "the same objects, in order")
                try checkEqual([ada.name, bob.name], ["Ann", "Robert"], "with the option they take the stored values")
                try checkEqual(bob.age, 50, "unsaved changes stay on top")
                try check(bob.isUpdated && !ada.hasChanges, "change flags as before")
                try context.save()
            }
        },
        ConformanceScenario("fetch.shouldRefreshRefetchedObjects.rereadsTheMembersOfAFault") { env in
            // Reading a to-many does not fire its object's fault: a refetched object can be a
            // fault holding loaded members. Refreshing refetched objects must read those again
            // too (fetch with or without faults, and fetchBatched), or they keep showing
            // students another context's save moved since.
            let ids = try FaultingScenarios.seedFourStudents(env)  // A: s0, s2; B: s1, s3
            let context = env.newContext()
            let (a, b) = try FaultingScenarios.classesWithLoadedMembers(context)
            func refetching(_ title: String, asFaults: Bool = true) -> FetchRequest<SchoolClass> {
                var request = FetchRequest<SchoolClass>(predicate: .key("title") == title)
                request.shouldRefreshRefetchedObjects = true
                request.returnsObjectsAsFaults = asFaults
                return request
            }
            try FaultingScenarios.moveStudent(env, ids[0], to: "B")
            try context.performAndWait {
                _ = try context.fetch(refetching("A"))
                try checkEqual(Set(a.students.map(\.objectID)), [ids[2]], "A refetched as a fault")
                _ = try context.fetch(refetching("B", asFaults: false))
                try checkEqual(Set(b.students.map(\.objectID)), [ids[0], ids[1], ids[3]], "B refetched with its values")
                context.refresh(a, mergeChanges: false)
                _ = a.students.count
                try check(a.isFault, "A is again a fault with loaded members")
            }
            try FaultingScenarios.moveStudent(env, ids[3], to: "A")
            try context.performAndWait {
                _ = try context.fetchBatched(refetching("A")).first
                try checkEqual(Set(a.students.map(\.objectID)), [ids[2], ids[3]], "A refetched by fetchBatched")
            }
        },
        ConformanceScenario("fetch.shouldRefreshRefetchedObjects.notificationListsThemAsRefreshed") { env in
            // Core Data lists the objects a refetch refreshed in the objects-did-change
            // notification's refreshed set, as a refresh(_:mergeChanges:) does.
            let (adaID, bobID) = try FaultingScenarios.seedAdaAndBob(env)
            let context = env.newContext()
            let notes = SharedValue<[Set<ObjectID>]>([])
            let observer = NotificationCenter.default.addObserver(forName: .objectGraphObjectsDidChange, object: context, queue: nil) { note in
                guard let changes = note.userInfo?[ObjectsDidChange.key] as? ObjectsDidChange else { return }
                let refreshed = Set(changes.refreshed.map(\.objectID))
                notes.update { $0.append(refreshed) }
            }
            defer { NotificationCenter.default.removeObserver(observer) }
            let ada = try context.performAndWait {
                let ada = try context.existingObject(with: adaID) as! Student
                ada.age = 50  // loaded, with an unsaved change; Bob not registered
                return ada
            }
            try rename(env, [adaID: "Ann", bobID: "Robert"])
            notes.update { $0 = [] }
            try context.performAndWait {
                _ = try context.fetch(FetchRequest<Student>())
            }
            try check(notes.get().allSatisfy(\.isEmpty), "a plain refetch refreshes nothing: \(notes.get())")
            notes.update { $0 = [] }
            try context.performAndWait {
                var request = FetchRequest<Student>()
                request.shouldRefreshRefetchedObjects = true
                _ = try context.fetch(request)
                try checkEqual(ada.name, "Ann", "Ada refreshed")
            }
            try checkEqual(notes.get().last, [adaID], "the notification lists the refetched loaded object, not one the fetch first loaded")
            notes.update { $0 = [] }
            try context.performAndWait {
                var request = FetchRequest<Student>(sortKeys: [SortKey("name")])
                request.fetchBatchSize = 1
                request.shouldRefreshRefetchedObjects = true
                let batched = try context.fetchBatched(request)
                _ = batched.map(\.name)
            }
            try checkEqual(notes.get().last, [adaID], "fetchBatched's refreshed objects too (Bob, still a fault, was loaded, not refreshed)")
        },
    ]

    /// Renames the students `names` names through a context of its own, and saves.
    private static func rename(_ env: ScenarioEnvironment, _ names: [ObjectID: String]) throws {
        let other = env.newContext()
        try other.performAndWait {
            for (id, name) in names { (try other.existingObject(with: id) as! Student).name = name }
            try other.save()
        }
    }
}
