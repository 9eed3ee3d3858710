import Foundation
import ObjectGraph

/// Faults and round trips, made visible by ``ContextStatistics``: what loads when, and how
/// prefetching and `returnsObjectsAsFaults` keep N+1 patterns away. Scenarios that count round
/// trips start after ``ScenarioEnvironment/reopen()``, so the row cache is cold.
enum FaultingScenarios {
    /// Saves students "s0"… with ages, two classes and three subjects: student i is in class
    /// i % 2 and takes subjects i % 3 and (i + 1) % 3.
    static func seedSchool(_ env: ScenarioEnvironment, students count: Int) throws {
        let context = env.newContext()
        try context.performAndWait {
            let classes = ["A", "B"].map { title -> SchoolClass in let c = SchoolClass(context: context); c.title = title; return c }
            let subjects = ["Math", "Logic", "Art"].map { name -> Subject in let s = Subject(context: context); s.name = name; return s }
            for i in 0..<count {
                let student = Student(context: context)
                student.name = "s\(i)"
                student.age = Int16(20 + i)
                student.schoolClass = classes[i % 2]
                student.$subjects.add(subjects[i % 3])
                student.$subjects.add(subjects[(i + 1) % 3])
            }
            try context.save()
        }
    }

    /// Whether every counter is zero.
    static func isZero(_ stats: ContextStatistics) -> Bool {
        stats.storeRoundTrips == 0 && stats.faultsFired == 0 && stats.relationshipFaultsFired == 0 && stats.rowCacheHits == 0
    }

    /// The ID of the saved student called `name`.
    static func studentID(_ env: ScenarioEnvironment, named name: String) throws -> ObjectID {
        let context = env.newContext()
        return try context.performAndWait {
            guard let id = try context.fetchObjectIDs(FetchRequest<Student>(predicate: .key("name") == name)).first else {
                throw ScenarioFailure(message: "no student named \(name) was saved", file: #filePath, line: #line)
            }
            return id
        }
    }

    /// Seeds the school with four students (class A: s0, s2; class B: s1, s3) and returns
    /// their IDs in name order.
    static func seedFourStudents(_ env: ScenarioEnvironment) throws -> [ObjectID] {
        try seedSchool(env, students: 4)
        return try ["s0", "s1", "s2", "s3"].map { try studentID(env, named: $0) }
    }

    /// Classes A and B fetched into `context` as faults whose students were read: faults
    /// holding loaded members (reading a to-many does not fire its object's fault).
    static func classesWithLoadedMembers(_ context: ManagedObjectContext) throws -> (a: SchoolClass, b: SchoolClass) {
        try context.performAndWait {
            let classes = try context.fetch(FetchRequest<SchoolClass>(sortKeys: [SortKey("title")]))
            _ = (classes[0].students.count, classes[1].students.count)
            try check(classes.count == 2 && classes.allSatisfy(\.isFault), "classes A and B, faults with loaded members")
            return (classes[0], classes[1])
        }
    }

    /// Moves the saved student `id` to the class titled `title` in another context, saved.
    static func moveStudent(_ env: ScenarioEnvironment, _ id: ObjectID, to title: String) throws {
        let other = env.newContext()
        try other.performAndWait {
            let moved = try other.existingObject(with: id) as! Student
            moved.schoolClass = try other.fetch(FetchRequest<SchoolClass>(predicate: .key("title") == title))[0]
            try other.save()
        }
    }

    static let all: [ConformanceScenario] = core + relationships + inaccessible + reached

    static let core: [ConformanceScenario] = [
        ConformanceScenario("faulting.storeReadsOneRowAsItReadsMany") { env in
            // A fault reads one row through the store's snapshot(for:); it must answer what
            // snapshots(for:) answers, and nil for a record that does not exist.
            try seedSchool(env, students: 4)
            let ids = try ["s0", "s1", "s2", "s3"].map { try studentID(env, named: $0) }
            guard let store = env.container.coordinator.persistentStores.first else {
                throw ScenarioFailure(message: "no store attached", file: #filePath, line: #line)
            }
            let batch = try store.snapshots(for: ids)
            try checkEqual(batch.count, 4, "rows read together")
            for row in batch {
                try checkEqual(try store.snapshot(for: row.objectID), row, "\(row.objectID) read alone")
            }
            let context = env.newContext()
            let gone = ids[2]
            try context.performAndWait {
                context.delete(context.object(with: gone))
                try context.save()
            }
            try check(try store.snapshot(for: gone) == nil, "a deleted record reads as nil")
            try checkEqual(try store.snapshots(for: [gone]).count, 0, "and is left out of a batch")
        },
        ConformanceScenario("faulting.storeListsMembersPerSourceInOrder") { env in
            // relatedIDs(for:of:) answers one list per source, in the order the sources were
            // given: a source named twice gets its list twice, and a temporary ID or another
            // store's ID gets an empty list, whichever order the store reads in (SQLite reads
            // by ascending key).
            try seedSchool(env, students: 5)
            let context = env.newContext()
            let (classA, classB, playlist, tracks) = try context.performAndWait {
                let classes = try context.fetch(FetchRequest<SchoolClass>(sortKeys: [SortKey("title")]))
                let playlist = Playlist(context: context)
                playlist.name = "mix"
                var tracks: [Track] = []
                for title in ["c", "a", "b"] {
                    let track = Track(context: context)
                    track.title = title
                    tracks.append(track)
                }
                // Ordered members in an order that is not their keys' order.
                for track in tracks.reversed() { playlist.$tracks.add(track) }
                try context.save()
                return (classes[0].objectID, classes[1].objectID, playlist.objectID, tracks.reversed().map(\.objectID))
            }
            let temporary = try context.performAndWait { try context.insertObject(entityName: "SchoolClass").objectID }
            let foreign = ObjectID(entityName: "SchoolClass", storeIdentifier: "another-store", primaryKey: classA.primaryKey ?? 1)
            guard let store = env.container.coordinator.persistentStores.first,
                  let students = env.model.entity(named: "SchoolClass")?.relationship(named: "students"),
                  let playlistTracks = env.model.entity(named: "Playlist")?.relationship(named: "tracks") else {
                throw ScenarioFailure(message: "no store, SchoolClass.students or Playlist.tracks", file: #filePath, line: #line)
            }
            let expected = try ["A": [0, 2, 4], "B": [1, 3]].mapValues { try Set($0.map { try studentID(env, named: "s\($0)") }) }
            let sources = [classB, temporary, classA, foreign, classB]
            let lists = try store.relatedIDs(for: students, of: sources)
            try checkEqual(lists.count, sources.count, "one list per source")
            try checkEqual(Set(lists[0]), expected["B"], "class B's students, first")
            try checkEqual(lists[1], [], "a temporary source has none")
            try checkEqual(Set(lists[2]), expected["A"], "class A's students, after B's")
            try checkEqual(lists[3], [], "another store's source has none")
            try checkEqual(Set(lists[4]), expected["B"], "class B named again: its list again")
            try checkEqual(lists[0].count + lists[2].count + lists[4].count, 7, "no member listed twice")
            try checkEqual(try store.relatedIDs(for: playlistTracks, of: [playlist]).first, tracks, "ordered members in their order")
        },
        ConformanceScenario("faulting.fetchReturnsFaultsUntilTouched") { env in
            try seedSchool(env, students: 3)
            try env.reopen()
            let context = env.newContext()
            try context.performAndWait {
                let students = try context.fetch(FetchRequest<Student>(sortKeys: [SortKey("name")]))
                try checkEqual(students.count, 3, "fetched")
                try check(students.allSatisfy(\.isFault), "fetched objects are faults")
                var stats = context.statistics
                try checkEqual(stats.storeRoundTrips, 1, "one round trip for the fetch")
                try checkEqual(stats.faultsFired, 0, "no fault fired by the fetch")
                _ = students[0].objectID
                try check(students[0].isFault, "reading the object ID does not fire the fault")
                try checkEqual(students[0].name, "s0", "touching a property loads the values")
                try check(!students[0].isFault, "the touched object is no longer a fault")
                try check(students[1].isFault && students[2].isFault, "the others still are")
                stats = context.statistics
                try checkEqual(stats.faultsFired, 1, "one fault fired")
                try checkEqual(stats.storeRoundTrips + stats.rowCacheHits, 2, "one load for the fault (store or row cache)")
                _ = students[0].age
                _ = students[0].name
                try checkEqual(context.statistics, stats, "reading more properties of a loaded object costs nothing")
            }
        },
        ConformanceScenario("faulting.toManyIsFaultUntilTouched") { env in
            try seedSchool(env, students: 2)
            let id = try studentID(env, named: "s0")
            try env.reopen()
            let context = env.newContext()
            try context.performAndWait {
                let student = try context.existingObject(with: id) as! Student
                context.resetStatistics()
                try checkEqual(student.name, "s0", "name")
                try check(isZero(context.statistics), "a loaded object's attributes cost nothing (\(context.statistics))")
                let subjects = student.subjects
                try checkEqual(Set(subjects.map(\.objectID)).count, 2, "two subjects")
                var stats = context.statistics
                try checkEqual(stats.relationshipFaultsFired, 1, "touching the to-many fires its fault")
                try checkEqual(stats.storeRoundTrips, 1, "in one round trip")
                try checkEqual(stats.faultsFired, 0, "without loading the members")
                try check(subjects.allSatisfy(\.isFault), "traversal returns the members as faults")
                _ = student.subjects
                try checkEqual(context.statistics, stats, "a loaded to-many is not fetched again")
                let first = subjects.first!
                try check(["Math", "Logic", "Art"].contains(first.name), "a member fires when touched")
                stats = context.statistics
                try checkEqual(stats.faultsFired, 1, "one member fault fired")
                try check(subjects.filter(\.isFault).count == 1, "the other member is still a fault")
                let before = context.statistics
                let schoolClass = student.schoolClass
                try check(schoolClass?.isFault == true, "a to-one destination is a fault")
                try checkEqual(context.statistics, before, "reaching a to-one destination costs nothing")
                try checkEqual(schoolClass?.title, "A", "until touched")
                try checkEqual(context.statistics.faultsFired, before.faultsFired + 1, "which fires its fault")
            }
        },
        ConformanceScenario("faulting.returnsObjectsAsFaultsFalseLoadsValues") { env in
            try seedSchool(env, students: 5)
            try env.reopen()
            let context = env.newContext()
            try context.performAndWait {
                var request = FetchRequest<Student>(sortKeys: [SortKey("name")])
                request.returnsObjectsAsFaults = false
                let students = try context.fetch(request)
                try checkEqual(students.count, 5, "fetched")
                try check(students.allSatisfy { !$0.isFault }, "the objects come back loaded")
                let stats = context.statistics
                try checkEqual(stats.storeRoundTrips, 1, "in one round trip")
                try checkEqual(students.map(\.name), ["s0", "s1", "s2", "s3", "s4"], "values")
                try checkEqual(students.map(\.age), [20, 21, 22, 23, 24], "ages")
                try checkEqual(context.statistics, stats, "reading them fires no fault and costs no round trip")
            }
        },
        ConformanceScenario("faulting.prefetchingIsOneRoundTripPerKeyPath") { env in
            let count = 8
            try seedSchool(env, students: count)
            try env.reopen()
            let prefetching = env.newContext()
            let prefetchedTrips = try prefetching.performAndWait { () throws -> Int in
                var request = FetchRequest<Student>(sortKeys: [SortKey("name")])
                request.relationshipKeyPathsForPrefetching = ["schoolClass", "subjects"]
                let students = try prefetching.fetch(request)
                let afterFetch = prefetching.statistics
                // The fetch, then per key path: the sources' rows (if still faults) and the destinations.
                try check(afterFetch.storeRoundTrips <= 5, "prefetching 2 key paths for \(count) objects took \(afterFetch.storeRoundTrips) round trips; expected at most 5")
                try check(students.allSatisfy { !$0.isFault }, "the fetched objects are loaded")
                var titles: [String] = []
                var subjectNames: Set<String> = []
                for student in students {
                    titles.append(student.schoolClass?.title ?? "none")
                    for subject in student.subjects { subjectNames.insert(subject.name) }
                }
                try checkEqual(titles, (0..<count).map { $0 % 2 == 0 ? "A" : "B" }, "class titles (sorted by name)")
                try checkEqual(subjectNames, ["Math", "Logic", "Art"], "subject names")
                let afterWalk = prefetching.statistics
                try checkEqual(afterWalk.storeRoundTrips, afterFetch.storeRoundTrips, "walking the prefetched graph costs no round trip")
                // Destinations the app does not hold may be let go like any unchanged object, so the walk may
                // materialize them again — but only from the row cache, never from the store.
                try checkEqual(
                    afterWalk.faultsFired - afterFetch.faultsFired, afterWalk.rowCacheHits - afterFetch.rowCacheHits,
                    "every fault fired by the walk is served by the row cache")
                try checkEqual(afterWalk.relationshipFaultsFired, afterFetch.relationshipFaultsFired, "and no relationship fault")
                return afterFetch.storeRoundTrips
            }
            try env.reopen()
            let plain = env.newContext()
            try plain.performAndWait {
                let students = try plain.fetch(FetchRequest<Student>(sortKeys: [SortKey("name")]))
                for student in students {
                    _ = student.schoolClass?.title
                    for subject in student.subjects { _ = subject.name }
                }
                let stats = plain.statistics
                try checkEqual(stats.relationshipFaultsFired, count, "without prefetching every to-many fires on its own")
                try check(stats.storeRoundTrips > count, "without prefetching the walk takes more than \(count) round trips (took \(stats.storeRoundTrips))")
                try check(stats.storeRoundTrips > prefetchedTrips, "prefetching saves round trips")
            }
        },
        ConformanceScenario("faulting.deletedRecordThrowsObjectNotFound") { env in
            try seedSchool(env, students: 2)
            let reader = env.newContext()
            let (id, fault) = try reader.performAndWait {
                let student = try reader.fetch(FetchRequest<Student>(predicate: .key("name") == "s0"))[0]
                try check(student.isFault, "an untouched fault")
                return (student.objectID, student)
            }
            let writer = env.newContext()
            try writer.performAndWait {
                writer.delete(try writer.existingObject(with: id))
                try writer.save()
            }
            try reader.performAndWait {
                let error = try checkThrows(ObjectGraphError.self, "existingObject(with:) for a deleted record") { _ = try reader.existingObject(with: id) }
                try checkEqual(error.code, .objectNotFound, "error code")
                try checkEqual(error.objectID, id, "the error names the object")
                let again = try checkThrows(ObjectGraphError.self, "asking again") { _ = try reader.existingObject(with: id) }
                try checkEqual(again.code, .objectNotFound, "error code when asked again")
                // With shouldDeleteInaccessibleFaults off; on (the default) the read deletes the
                // object instead (faulting.inaccessible.*).
                reader.shouldDeleteInaccessibleFaults = false
                let read = try checkThrows(ObjectGraphError.self, "touching the fault") { _ = try fault.value(forKey: "name") }
                try checkEqual(read.code, .objectNotFound, "error code when the fault is touched")
            }
            let fresh = env.newContext()
            try fresh.performAndWait {
                let error = try checkThrows(ObjectGraphError.self, "a fresh context") { _ = try fresh.existingObject(with: id) }
                try checkEqual(error.code, .objectNotFound, "error code in a fresh context")
                let other = try fresh.fetch(FetchRequest<Student>())
                try checkEqual(other.map(\.name), ["s1"], "the other record is still there")
            }
        },
        ConformanceScenario("faulting.rowCacheServesOtherContexts") { env in
            try seedSchool(env, students: 1)
            let id = try studentID(env, named: "s0")
            try env.reopen()
            let first = env.newContext()
            try first.performAndWait {
                try checkEqual((try first.existingObject(with: id) as! Student).name, "s0", "loaded")
                try checkEqual(first.statistics.faultsFired, 1, "one fault")
                try checkEqual(first.statistics.storeRoundTrips, 1, "from the store")
            }
            let second = env.newContext()
            // A store whose reads cost what a cache lookup costs declares so, and is read again.
            let cheapReads = env.capabilities.contains(.cheapRowReads)
            try checkEqual(env.container.coordinator.rowCache.isBypassed, cheapReads, "the row cache is bypassed exactly for a store with cheap row reads")
            try second.performAndWait {
                try checkEqual((try second.existingObject(with: id) as! Student).name, "s0", "loaded again")
                let stats = second.statistics
                try checkEqual(stats.faultsFired, 1, "one fault in the second context")
                try checkEqual(stats.rowCacheHits, cheapReads ? 0 : 1, "served by the coordinator's row cache unless bypassed")
                try checkEqual(stats.storeRoundTrips, cheapReads ? 1 : 0, "a round trip only when bypassed")
            }
            try checkEqual(env.container.coordinator.rowCache.count, 0 + (cheapReads ? 0 : 1), "a bypassed cache holds nothing")
        },
        ConformanceScenario("faulting.insertedObjectsAreNeverFaults") { env in
            let context = env.newContext()
            try context.performAndWait {
                let student = Student(context: context)
                try check(!student.isFault, "an inserted object is loaded")
                try check(student.subjects.isEmpty && student.tags.isEmpty, "its to-many relationships are empty")
                try check(student.schoolClass == nil, "its to-one is nil")
                try check(isZero(context.statistics), "reading a new object's relationships costs nothing (\(context.statistics))")
            }
        },
        ConformanceScenario("faulting.countAndObjectIDsLoadNothing") { env in
            try seedSchool(env, students: 4)
            try env.reopen()
            let context = env.newContext()
            try context.performAndWait {
                try checkEqual(try context.count(for: FetchRequest<Student>(predicate: .key("age") >= 22)), 2, "count")
                let ids = try context.fetchObjectIDs(FetchRequest<Student>(sortKeys: [SortKey("name")]))
                try checkEqual(ids.count, 4, "IDs")
                let stats = context.statistics
                try checkEqual(stats.storeRoundTrips, 2, "one round trip each")
                try checkEqual(stats.faultsFired, 0, "no object loaded")
                try check(context.registeredObjects.isEmpty, "no object registered")
            }
        },
    ]
}
