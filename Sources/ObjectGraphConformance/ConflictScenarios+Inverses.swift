import Foundation
import ObjectGraph

/// A one-to-many stays one graph through conflicts and discarded changes: every store lists a
/// row under exactly the owner its to-one names, as SQLite's foreign keys do by construction.
extension ConflictScenarios {
    /// Math, Art and Music; Ada in Math. Returns (Ada, Math, Art, Music).
    static func seedClasses(_ env: ScenarioEnvironment) throws -> (ObjectID, ObjectID, ObjectID, ObjectID) {
        let setup = env.newContext()
        return try setup.performAndWait {
            let math = SchoolClass(context: setup); math.title = "Math"
            let art = SchoolClass(context: setup); art.title = "Art"
            let music = SchoolClass(context: setup); music.title = "Music"
            let ada = Student(context: setup); ada.name = "Ada"; ada.schoolClass = math
            try setup.save()
            return (ada.objectID, math.objectID, art.objectID, music.objectID)
        }
    }

    /// Checks, in a fresh context, that Ada's class is `expected` and that only that class
    /// lists her.
    static func checkOneOwner(_ env: ScenarioEnvironment, ada: ObjectID, expected: ObjectID, _ label: String, file: String = #filePath, line: Int = #line) throws {
        let check = env.newContext()
        try check.performAndWait {
            let student = try check.existingObject(with: ada) as! Student
            try checkEqual(student.schoolClass?.objectID, expected, "\(label): her class", file: file, line: line)
            let listing = try check.fetch(FetchRequest<SchoolClass>(sortKeys: [SortKey("title")]))
                .filter { $0.students.contains { $0.objectID == ada } }.map(\.objectID)
            try checkEqual(listing, [expected], "\(label): the classes listing her", file: file, line: line)
            let counted = try check.count(for: FetchRequest<SchoolClass>(predicate: try FetchPredicate(format: "students.@count > 0")))
            try checkEqual(counted, 1, "\(label): classes with a member", file: file, line: line)
        }
    }

    static let inverses: [ConformanceScenario] = [
        ConformanceScenario("conflicts.movedBothWaysListedOnce") { env in
            for policy in [MergePolicy.objectTrumps, .overwrite] {
                let (ada, _, art, music) = try seedClasses(env)
                let (first, second) = (env.newContext(), env.newContext())
                second.mergePolicy = policy
                let a: Student = try load(ada, in: first)
                let b: Student = try load(ada, in: second)
                try first.performAndWait { a.schoolClass = (first.object(with: art) as! SchoolClass); try first.save() }
                try second.performAndWait { b.schoolClass = (second.object(with: music) as! SchoolClass); try second.save() }
                // This context's class wins; Art, where the other save put her, lists her no more.
                try checkOneOwner(env, ada: ada, expected: music, "\(policy)")
                let cleanup = env.newContext()
                try cleanup.performAndWait {
                    for object in try cleanup.fetch(FetchRequest<ManagedObject>(entityName: "SchoolClass")) { cleanup.delete(object) }
                    for object in try cleanup.fetch(FetchRequest<ManagedObject>(entityName: "Student")) { cleanup.delete(object) }
                    try cleanup.save()
                }
            }
        },
        ConformanceScenario("conflicts.overwriteOfAnUnmovedObjectMovesItBack") { env in
            let (ada, math, art, _) = try seedClasses(env)
            let (first, second) = (env.newContext(), env.newContext())
            second.mergePolicy = .overwrite
            let a: Student = try load(ada, in: first)
            let b: Student = try load(ada, in: second)
            try first.performAndWait { a.schoolClass = (first.object(with: art) as! SchoolClass); try first.save() }
            try second.performAndWait { b.name = "Ada L."; try second.save() }
            // Overwrite writes the whole object as this context holds it: back in Math.
            try checkOneOwner(env, ada: ada, expected: math, "overwrite")
        },
        ConformanceScenario("refresh.discardedMoveSavesOneOwner") { env in
            let (ada, math, art, _) = try seedClasses(env)
            let context = env.newContext()
            try context.performAndWait {
                let student = try context.existingObject(with: ada) as! Student
                let from = try context.existingObject(with: math) as! SchoolClass
                let to = try context.existingObject(with: art) as! SchoolClass
                _ = (from.students.count, to.students.count)
                student.schoolClass = to
                context.refresh(student, mergeChanges: false)
                try checkEqual(student.schoolClass?.objectID, math, "the move is discarded")
                try context.save()
            }
            try checkOneOwner(env, ada: ada, expected: math, "refreshed")
        },
        ConformanceScenario("relationships.failedSetToARowDeletedElsewhereChangesNothing") { env in
            // A one-to-one set to a row another context deleted fails (objectNotFound) with
            // nothing changed: the captain, and the old captain's side, stay as they were, and
            // a save stores no half-moved pair naming a missing row.
            let setup = env.newContext()
            let (rosterID, captainID, goneID) = try setup.performAndWait { () throws -> (ObjectID, ObjectID, ObjectID) in
                func player(_ name: String) throws -> ManagedObject {
                    let player = try setup.insertObject(entityName: "Player")
                    try player.setValue(name, forKey: "name")
                    return player
                }
                let (first, second, gone) = (try player("p1"), try player("p2"), try player("gone"))
                let roster = try setup.insertObject(entityName: "Roster")
                try roster.setValue("r", forKey: "name")
                try roster.setValue(first, forKey: "captain")
                try roster.setValue([first, second], forKey: "players")
                try setup.save()
                return (roster.objectID, first.objectID, gone.objectID)
            }
            let reader = env.newContext()
            let roster = try reader.performAndWait { try reader.existingObject(with: rosterID) }
            let deleter = env.newContext()
            try deleter.performAndWait { deleter.delete(deleter.object(with: goneID)); try deleter.save() }
            try reader.performAndWait {
                let error = try checkThrows(ObjectGraphError.self, "setting the captain to a deleted player") {
                    try roster.setValue(reader.object(with: goneID), forKey: "captain")
                }
                try checkEqual(error.code, .objectNotFound, "the error")
                try checkEqual((try roster.value(forKey: "captain") as? ManagedObject)?.objectID, captainID, "the captain is unchanged")
                let captain = try reader.existingObject(with: captainID)
                try checkEqual((try captain.value(forKey: "captainOf") as? ManagedObject)?.objectID, rosterID, "and still captains the roster")
                try check(!reader.hasChanges, "the failed set left no change")
            }
        },
        ConformanceScenario("relationships.failedReplaceWithARowDeletedElsewhereChangesNothing") { env in
            // The same for a to-many replaced whole (key-value setValue, or the typed setter):
            // a new member whose row another context deleted fails the replace with nothing
            // changed. Member by member, the old members had been taken out before the gone one
            // was read, so a caught error left the playlist with one track of three and the
            // other two naming no playlist, which the next save stored.
            let ids = try NestedContextScenarios.seedTwoPlaylists(env)
            let reader = env.newContext()
            let goneID = try reader.performAndWait { try (reader.existingObject(with: ids.1) as! Playlist).tracks[0].objectID }
            let deleter = env.newContext()
            try deleter.performAndWait { deleter.delete(deleter.object(with: goneID)); try deleter.save() }
            try reader.performAndWait {
                let playlist = try reader.existingObject(with: ids.0) as! Playlist
                let kept = playlist.tracks[0]
                reader.refreshAllObjects()  // the gone track is a fault again, its row dropped from the cache
                let error = try checkThrows(ObjectGraphError.self, "replacing the tracks with a deleted one among them") {
                    try playlist.setValue([kept, reader.object(with: goneID)], forKey: "tracks")
                }
                try checkEqual(error.code, .objectNotFound, "the error")
                try checkEqual(playlist.tracks.map(\.title), ["a1", "a2", "a3"], "the tracks are unchanged")
                try check(playlist.tracks.allSatisfy { $0.playlist === playlist }, "and still name the playlist")
                try check(!reader.hasChanges, "the failed replace left no change: \(reader.updatedObjects.map(\.objectID))")
            }
        },
        ConformanceScenario("relationships.oneWayToOneToARowDeletedElsewhereIsNotSaved") { env in
            // A to-one without an inverse set to a locker another context deleted: the save
            // fails with objectNotFound, and the store never names the missing locker.
            let setup = env.newContext()
            let (studentID, lockerID) = try setup.performAndWait { () throws -> (ObjectID, ObjectID) in
                let student = Student(context: setup); student.name = "Ada"
                let locker = Locker(context: setup); locker.number = 7
                try setup.save()
                return (student.objectID, locker.objectID)
            }
            let reader = env.newContext()
            let student: Student = try load(studentID, in: reader)
            let deleter = env.newContext()
            try deleter.performAndWait { deleter.delete(deleter.object(with: lockerID)); try deleter.save() }
            try reader.performAndWait {
                student.locker = (reader.object(with: lockerID) as! Locker)
                let error = try checkThrows(ObjectGraphError.self, "saving a reference to the deleted locker") { try reader.save() }
                try checkEqual(error.code, .objectNotFound, "the error")
                student.locker = nil
                try reader.save()
            }
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(try fresh.count(for: FetchRequest<Student>(predicate: try FetchPredicate(format: "locker != nil"))), 0, "no student names a locker")
            }
        },
        ConformanceScenario("conflicts.oneToOneResolvedPairsBothEnds") { env in
            // The other save gives Bob's address to Carl; this context gives it to Ada, or only
            // renames its street (an overwrite then writes back Bob, whom it read).
            for (policy, moves) in [(MergePolicy.storeTrumps, true), (.objectTrumps, true), (.overwrite, true), (.rollback, true), (.overwrite, false), (.objectTrumps, false)] {
                let setup = env.newContext()
                let (ada, addressID) = try setup.performAndWait {
                    let ada = Student(context: setup); ada.name = "Ada"
                    let bob = Student(context: setup); bob.name = "Bob"
                    let carl = Student(context: setup); carl.name = "Carl"
                    let address = Address(context: setup); address.street = "s"; bob.address = address
                    _ = carl
                    try setup.save()
                    return (ada.objectID, address.objectID)
                }
                let (saver, other) = (env.newContext(), env.newContext())
                saver.mergePolicy = policy
                let address = try saver.performAndWait {
                    let address = try saver.existingObject(with: addressID) as! Address
                    _ = address.student?.name
                    return address
                }
                try other.performAndWait {
                    let carl = try other.fetch(FetchRequest<Student>(predicate: try FetchPredicate(format: "name == 'Carl'")))[0]
                    carl.address = (try other.existingObject(with: addressID) as! Address)
                    try other.save()
                }
                let label = "\(policy)\(moves ? "" : ", street only")"
                try saver.performAndWait {
                    if moves { (try saver.existingObject(with: ada) as! Student).address = address } else { address.street = "t" }
                    try saver.save()
                    // (Bob, read before the other save and untouched here unless this context
                    // moved the address, stays as read, as any object a save leaves alone.)
                    guard moves else { return }
                    let holders = try saver.fetch(FetchRequest<Student>(sortKeys: [SortKey("name")])).filter { $0.address != nil }
                    try checkEqual(holders.map(\.name), [address.student?.name ?? "nobody"], "\(label): in the saving context, the students holding the address and address.student")
                }
                let check = env.newContext()
                try check.performAndWait {
                    let stored = try check.existingObject(with: addressID) as! Address
                    let holders = try check.fetch(FetchRequest<Student>(sortKeys: [SortKey("name")])).filter { $0.address != nil }
                    try checkEqual(holders.map(\.name), [stored.student?.name ?? "nobody"], "\(label): in the store, the students holding the address and address.student")
                    for object in try check.fetch(FetchRequest<Student>()) { check.delete(object) }
                    try check.save()
                }
            }
        },
    ]
}
