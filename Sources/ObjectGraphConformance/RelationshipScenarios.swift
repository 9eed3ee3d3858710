import Foundation
import ObjectGraph
import OrderedCollections

/// Every relationship kind from the Core Data literature, inverses checked from both sides
/// before and after save and in a fresh coordinator.
enum RelationshipScenarios {
    static let all: [ConformanceScenario] = [
        ConformanceScenario("relationships.oneToOne.inverseFromBothSides") { env in
            let context = env.newContext()
            let (studentID, addressID) = try context.performAndWait {
                let student = Student(context: context)
                student.name = "Ada"
                let address = Address(context: context)
                address.street = "1 Loop"
                student.address = address
                try check(address.student === student, "setting student.address sets address.student")
                let other = Address(context: context)
                other.street = "2 Loop"
                other.student = student
                try check(student.address === other, "setting address.student sets student.address")
                try check(address.student == nil, "the previous address loses its student (one-to-one)")
                address.student = nil
                context.delete(address)
                try context.save()
                return (student.objectID, other.objectID)
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let student = try fresh.existingObject(with: studentID) as! Student
                try checkEqual(student.address?.objectID, addressID, "student.address after reopen")
                try checkEqual(student.address?.student?.objectID, studentID, "address.student after reopen")
            }
        },
        ConformanceScenario("relationships.oneToOne.stealingPartnerClearsOldOwner") { env in
            let context = env.newContext()
            try context.performAndWait {
                let a = Student(context: context); a.name = "A"
                let b = Student(context: context); b.name = "B"
                let address = Address(context: context); address.street = "S"
                a.address = address
                b.address = address
                try check(a.address == nil, "A loses the address B took")
                try check(address.student === b, "address.student is B")
                try context.save()
                try check(a.address == nil && b.address === address, "still so after save")
            }
        },
        ConformanceScenario("relationships.manyToOne.inverseFromBothSides") { env in
            let context = env.newContext()
            let classID = try context.performAndWait {
                let math = SchoolClass(context: context); math.title = "Math"
                let art = SchoolClass(context: context); art.title = "Art"
                var students: [Student] = []
                for name in ["a", "b", "c"] {
                    let s = Student(context: context); s.name = name; s.schoolClass = math; students.append(s)
                }
                try checkEqual(math.students.count, 3, "math.students after setting each student's class")
                students[0].schoolClass = art
                try checkEqual(math.students.count, 2, "moving a student removes it from the old class")
                try check(art.students.contains(students[0]), "and adds it to the new class")
                math.$students.remove(students[1])
                try check(students[1].schoolClass == nil, "removing from the to-many clears the to-one")
                try context.save()
                return math.objectID
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let math = try fresh.existingObject(with: classID) as! SchoolClass
                try checkEqual(Set(math.students.map(\.name)), ["c"], "math.students after reopen")
                try check(math.students.allSatisfy { $0.schoolClass === math }, "every student points back")
            }
        },
        ConformanceScenario("relationships.manyToMany.inverseFromBothSides") { env in
            let context = env.newContext()
            let ids = try context.performAndWait {
                let s1 = Student(context: context); s1.name = "s1"
                let s2 = Student(context: context); s2.name = "s2"
                let math = Subject(context: context); math.name = "Math"
                let art = Subject(context: context); art.name = "Art"
                s1.subjects = [math, art]
                s2.$subjects.add(math)
                try checkEqual(math.students.count, 2, "math has both students")
                try checkEqual(art.students.map(\.name), ["s1"], "art has s1")
                art.$students.remove(s1)
                try checkEqual(s1.subjects.map(\.name), ["Math"], "removing from one side removes from the other")
                try context.save()
                return (s1.objectID, math.objectID)
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let s1 = try fresh.existingObject(with: ids.0) as! Student
                let math = try fresh.existingObject(with: ids.1) as! Subject
                try checkEqual(Set(s1.subjects.map(\.name)), ["Math"], "s1.subjects after reopen")
                try checkEqual(Set(math.students.map(\.name)), ["s1", "s2"], "math.students after reopen")
            }
        },
        ConformanceScenario("relationships.removingAnotherContextsObjectIsRefused") { env in
            // Removing the same record's instance of another context is refused with
            // wrongContext, as adding it is: it unlinked the inverse on the other context's
            // object, which this context then listed as updated (and saved), while the other
            // context saw no change of its own.
            let (studentID, mathID) = try seedStudent(env, takingMath: true)
            let context = env.newContext()
            let other = env.newContext()
            try context.performAndWait {
                let student = try context.existingObject(with: studentID) as! Student
                let foreign = try other.performAndWait { try other.existingObject(with: mathID) as! Subject }
                _ = other.performAndWait { foreign.students.count }
                let error = try checkThrows(ObjectGraphError.self, "removing another context's Math") {
                    try student.remove(foreign, from: "subjects")
                }
                try checkEqual(error.code, .wrongContext, "error code")
                try check(!context.hasChanges, "nothing changed here: \(context.updatedObjects.map(\.objectID))")
                try checkEqual(Set(student.subjects.map(\.name)), ["Art", "Math"], "the student still takes Math")
            }
            try other.performAndWait {
                let math = other.object(with: mathID) as! Subject
                try check(!math.hasChanges, "the other context's object is untouched")
                try checkEqual(math.students.count, 1, "Math still has its student there")
            }
        },
        ConformanceScenario("relationships.manyToMany.addAfterRemovingANonMemberIsKept") { env in
            // Removing an object that is not a member is a no-op; adding it afterwards must
            // store the membership on both ends. With both ends unloaded the removal is only
            // recorded, and an addition that cancelled against it was lost on save, on one end
            // or both (child contexts saving into one parent then stored half of the pair).
            let ids = try seedStudent(env, takingMath: false)
            let context = env.newContext()
            try context.performAndWait {
                let student = try context.existingObject(with: ids.0) as! Student
                let math = try context.existingObject(with: ids.1) as! Subject
                math.$students.remove(student)  // not a member: nothing to remove
                _ = math.students  // this end loads; the student's end stays unloaded
                math.$students.add(student)
                try checkEqual(math.students.map(\.name), ["s"], "the student is a member")
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let student = try fresh.existingObject(with: ids.0) as! Student
                let math = try fresh.existingObject(with: ids.1) as! Subject
                try checkEqual(Set(student.subjects.map(\.name)), ["Art", "Math"], "student.subjects after reopen")
                try checkEqual(math.students.map(\.name), ["s"], "math.students after reopen")
            }
        },
        ConformanceScenario("relationships.manyToNil.keepsSharedDestinations") { env in
            // Core Data stores many-to-nil as a foreign key on the destination, so the second
            // owner silently steals the tag. ObjectGraph stores a join: both keep it.
            let context = env.newContext()
            let ids = try context.performAndWait {
                let tag = Tag(context: context); tag.label = "honours"
                let s1 = Student(context: context); s1.name = "s1"
                let s2 = Student(context: context); s2.name = "s2"
                s1.$tags.add(tag)
                s2.$tags.add(tag)
                try check(s1.tags.contains(tag) && s2.tags.contains(tag), "both students hold the tag before save")
                try context.save()
                return (s1.objectID, s2.objectID)
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let s1 = try fresh.existingObject(with: ids.0) as! Student
                let s2 = try fresh.existingObject(with: ids.1) as! Student
                try checkEqual(s1.tags.map(\.label), ["honours"], "s1 keeps the tag after reopen")
                try checkEqual(s2.tags.map(\.label), ["honours"], "s2 keeps the tag after reopen")
            }
        },
        ConformanceScenario("relationships.manyToNil.destinationDeletedMeanwhile") { env in
            // No inverse means no version of the tag changes when a student takes it, so a
            // delete saved meanwhile cannot conflict: the store must drop the membership rather
            // than keep one in a missing row.
            let writer = env.newContext()
            let (studentID, tagIDs) = try writer.performAndWait {
                let student = Student(context: writer); student.name = "s"
                let doomed = Tag(context: writer); doomed.label = "doomed"
                let kept = Tag(context: writer); kept.label = "kept"
                try writer.save()
                return (student.objectID, [doomed.objectID, kept.objectID])
            }
            let adding = env.newContext()
            try adding.performAndWait {
                let student = try adding.existingObject(with: studentID) as! Student
                for id in tagIDs { student.$tags.add(try adding.existingObject(with: id) as! Tag) }
            }
            let deleting = env.newContext()
            try deleting.performAndWait {
                deleting.delete(try deleting.existingObject(with: tagIDs[0]))
                try deleting.save()
            }
            try adding.performAndWait { try adding.save() }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let student = try fresh.existingObject(with: studentID) as! Student
                try checkEqual(student.tags.map(\.label), ["kept"], "only the tag that still exists is a member")
                let holders = try fresh.count(for: FetchRequest<Student>(predicate: try FetchPredicate(format: "tags.@count == 1")))
                try checkEqual(holders, 1, "the membership count agrees: no row points at the deleted tag")
            }
        },
        ConformanceScenario("relationships.oneToNil.roundTrip") { env in
            let context = env.newContext()
            let id = try context.performAndWait {
                let locker = Locker(context: context); locker.number = 7
                let s1 = Student(context: context); s1.name = "s1"; s1.locker = locker
                let s2 = Student(context: context); s2.name = "s2"; s2.locker = locker
                try check(s1.locker === locker && s2.locker === locker, "a one-to-nil destination can be shared")
                try context.save()
                return s1.objectID
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let s1 = try fresh.existingObject(with: id) as! Student
                try checkEqual(s1.locker?.number, 7, "locker after reopen")
            }
        },
        ConformanceScenario("relationships.reflexive.managerAndReports") { env in
            let context = env.newContext()
            let bossID = try context.performAndWait {
                let boss = Employee(context: context); boss.name = "boss"
                let a = Employee(context: context); a.name = "a"
                let b = Employee(context: context); b.name = "b"
                a.manager = boss
                boss.$reports.add(b)
                try checkEqual(Set(boss.reports.map(\.name)), ["a", "b"], "reports")
                try check(b.manager === boss, "b.manager set through boss.reports")
                a.manager = b
                try checkEqual(boss.reports.map(\.name), ["b"], "a moved under b")
                try checkEqual(b.reports.map(\.name), ["a"], "b.reports")
                try context.save()
                return boss.objectID
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let boss = try fresh.existingObject(with: bossID) as! Employee
                let b = try boss.reports.first.map { $0 } ?? { throw ScenarioFailure(message: "boss has no reports", file: #filePath, line: #line) }()
                try checkEqual(b.reports.map(\.name), ["a"], "two levels after reopen")
                try check(b.reports.first?.manager === b, "a.manager is b")
            }
        },
        ConformanceScenario("relationships.ordered.insertMoveReplace") { env in
            let context = env.newContext()
            let id = try context.performAndWait {
                let playlist = Playlist(context: context); playlist.name = "mix"
                var tracks: [Track] = []
                for title in ["a", "b", "c", "d"] { let t = Track(context: context); t.title = title; tracks.append(t) }
                playlist.tracks = OrderedSet(tracks[0...2])
                playlist.$tracks.insert(tracks[3], at: 1)
                try checkEqual(playlist.tracks.map(\.title), ["a", "d", "b", "c"], "insert at 1")
                playlist.$tracks.move(from: 3, to: 0)
                try checkEqual(playlist.tracks.map(\.title), ["c", "a", "d", "b"], "move 3 → 0")
                let e = Track(context: context); e.title = "e"
                try playlist.replace(at: 2, with: e, in: "tracks")
                try checkEqual(playlist.tracks.map(\.title), ["c", "a", "e", "b"], "replace index 2")
                try check(tracks[3].playlist == nil, "the replaced track leaves the playlist")
                try check(e.playlist === playlist, "the new track points back")
                try context.save()
                return playlist.objectID
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let playlist = try fresh.existingObject(with: id) as! Playlist
                try checkEqual(playlist.tracks.map(\.title), ["c", "a", "e", "b"], "order after reopen")
                playlist.$tracks.move(from: 0, to: 3)
                try fresh.save()
            }
            try env.reopen()
            let third = env.newContext()
            try third.performAndWait {
                let playlist = try third.existingObject(with: id) as! Playlist
                try checkEqual(playlist.tracks.map(\.title), ["a", "e", "b", "c"], "order after a move of a saved list")
            }
        },
    ]

    /// A student "s" taking "Art", and "Math" too when `takingMath`; saved, the store
    /// reopened. Returns the student's and Math's IDs.
    static func seedStudent(_ env: ScenarioEnvironment, takingMath: Bool) throws -> (ObjectID, ObjectID) {
        let writer = env.newContext()
        let ids = try writer.performAndWait {
            let student = Student(context: writer); student.name = "s"
            let math = Subject(context: writer); math.name = "Math"
            let art = Subject(context: writer); art.name = "Art"
            student.subjects = takingMath ? [art, math] : [art]
            try writer.save()
            return (student.objectID, math.objectID)
        }
        try env.reopen()
        return ids
    }
}
