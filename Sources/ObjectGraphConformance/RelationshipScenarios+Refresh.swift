import Foundation
import ObjectGraph

/// `refresh(_:mergeChanges: false)` of one side of a many-to-many whose membership changed,
/// or of a one-to-one that was set.
/// The pair is one relationship: Core Data stores it once, so the partner's unsaved change
/// keeps it. ObjectGraph stores each direction, and dropping the refreshed side's half made
/// the save store the other half only: `student.subjects` held Math while `math.students`
/// lacked the student after a reload, on every store (an audit). Both sides must agree.
extension RelationshipScenarios {
    static let refreshedPairs: [ConformanceScenario] = [
        ConformanceScenario("relationships.manyToMany.refreshingOneSideKeepsBothHalvesOfTheChange") { env in
            // Seeded: the student takes Art. Unsaved: Math added, Art removed; then each
            // change's other side is refreshed without merging.
            for refreshed in ["subject", "student"] {
                let (studentID, mathID) = try seedStudent(env, takingMath: false)
                let context = env.newContext()
                try context.performAndWait {
                    let student = try context.existingObject(with: studentID) as! Student
                    let math = try context.existingObject(with: mathID) as! Subject
                    let art = try student.subjects.first.map { $0 } ?? { throw ScenarioFailure(message: "no Art", file: #filePath, line: #line) }()
                    _ = math.students.count
                    _ = art.students.count
                    student.$subjects.add(math)
                    art.$students.remove(student)
                    if refreshed == "subject" {
                        context.refresh(math, mergeChanges: false)
                        context.refresh(art, mergeChanges: false)
                    } else {
                        context.refresh(student, mergeChanges: false)
                    }
                    try checkEqual(Set(student.subjects.map(\.name)), ["Math"], "\(refreshed) refreshed: student.subjects in the context")
                    try checkEqual(math.students.map(\.name), ["s"], "\(refreshed) refreshed: math.students in the context")
                    try checkEqual(art.students.map(\.name), [], "\(refreshed) refreshed: art.students in the context")
                    try context.save()
                }
                try env.reopen()
                let fresh = env.newContext()
                try fresh.performAndWait {
                    let student = try fresh.existingObject(with: studentID) as! Student
                    let math = try fresh.existingObject(with: mathID) as! Subject
                    let subjects = try fresh.fetch(FetchRequest<Subject>(sortKeys: [SortKey("name")]))
                    try checkEqual(Set(student.subjects.map(\.name)), ["Math"], "\(refreshed) refreshed: student.subjects stored")
                    try checkEqual(subjects.map { "\($0.name):\($0.students.map(\.name))" }, ["Art:[]", "Math:[\"s\"]"], "\(refreshed) refreshed: each subject's students stored")
                    try check(math.students.first === student, "the stored halves name each other")
                    fresh.delete(student)
                    for subject in subjects { fresh.delete(subject) }
                    try fresh.save()
                }
            }
        },
        ConformanceScenario("relationships.oneToOne.refreshingOneSideStoresTheWholePair") { env in
            // A one-to-one is two to-ones, each in its own row: dropping the refreshed side's
            // half stored the student naming the address while the address named no student
            // (and the mirror image with the student refreshed), on every store.
            for refreshed in ["address", "student"] {
                let ids = try env.seed { context in
                    let student = Student(context: context); student.name = "s-\(refreshed)"
                    let address = Address(context: context); address.street = "st-\(refreshed)"
                    return [student, address]
                }
                let context = env.newContext()
                try context.performAndWait {
                    let student = try context.existingObject(with: ids[0]) as! Student
                    let address = try context.existingObject(with: ids[1]) as! Address
                    student.address = address
                    context.refresh(refreshed == "address" ? address : student, mergeChanges: false)
                    try context.save()
                    try check((student.address === address) == (address.student === student), "\(refreshed) refreshed: the two sides agree in the context")
                }
                try env.reopen()
                let fresh = env.newContext()
                try fresh.performAndWait {
                    let student = try fresh.existingObject(with: ids[0]) as! Student
                    let address = try fresh.existingObject(with: ids[1]) as! Address
                    try check(student.address === address && address.student === student,
                              "\(refreshed) refreshed: stored student.address \(student.address?.street ?? "nil"), address.student \(address.student?.name ?? "nil")")
                }
            }
        },
        // A one-to-many's membership is the members' to-ones, which a refresh of the owner
        // does not touch. Dropped with the owner's changes, the list disagreed with them: a new
        // track naming the playlist was missing from `playlist.tracks` (even after the save),
        // a track taken away was still listed, and the save wrote the new track no position:
        // stored first on SQLite, last on the other stores (an audit).
        ConformanceScenario("relationships.ordered.refreshingTheOwnerKeepsWhatItsMembersChanged") { env in
            let pID = try MergeScenarios.seedPlaylist(env)
            let context = env.newContext()
            try context.performAndWait {
                let playlist = try context.existingObject(with: pID) as! Playlist
                let tracks = Array(playlist.tracks)
                let added = Track(context: context); added.title = "n"
                playlist.$tracks.insert(added, at: 0)
                tracks[1].playlist = nil
                context.refresh(playlist, mergeChanges: false)
                try check(added.playlist === playlist, "the new track still names the playlist")
                try checkEqual(playlist.tracks.map(\.title), ["t0", "t2", "n"], "the refreshed list: stored order, the member taken away gone, the new one last")
                try context.save()
                try checkEqual(playlist.tracks.map(\.title), ["t0", "t2", "n"], "the list after the save")
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let playlist = try fresh.existingObject(with: pID) as! Playlist
                try checkEqual(playlist.tracks.map(\.title), ["t0", "t2", "n"], "stored order")
            }
        },
    ]
}

/// A refresh of one side of a one-to-many after another context moved a member: the refreshed
/// side shows the store, and the loaded other side must follow it. Left alone, refreshing the
/// student showed it in B while A's loaded students still listed it (and B's lacked it), and
/// refreshing A dropped the student from A's students while the student still named A.
extension RelationshipScenarios {
    static let refreshedOneToMany: [ConformanceScenario] = [
        ConformanceScenario("relationships.oneToMany.refreshingOneSideKeepsTheInversesInStep") { env in
            let ids = try FaultingScenarios.seedFourStudents(env)  // A: s0, s2; B: s1, s3
            var inA = true
            for mode in ["student", "student merging", "old class", "old class merging", "new class", "new class merging"] {
                let context = env.newContext()
                let (a, b) = try FaultingScenarios.classesWithLoadedMembers(context)
                let (old, new) = inA ? (a, b) : (b, a)
                let newTitle = inA ? "B" : "A"
                let students = try context.performAndWait {
                    let students = try ids.map { try context.existingObject(with: $0) as! Student }
                    try check(students[0].schoolClass === old && old.students.contains(students[0]), "\(mode): s0 starts in \(old.title)")
                    return students
                }
                try FaultingScenarios.moveStudent(env, ids[0], to: newTitle)
                inA.toggle()
                try context.performAndWait {
                    switch mode {
                    case "student": context.refresh(students[0], mergeChanges: false)
                    case "student merging":
                        students[0].age = 99
                        context.refresh(students[0], mergeChanges: true)
                    case "old class": context.refresh(old, mergeChanges: false)
                    case "old class merging":
                        old.title += "*"
                        context.refresh(old, mergeChanges: true)
                    case "new class": context.refresh(new, mergeChanges: false)
                    default:
                        new.title += "*"
                        context.refresh(new, mergeChanges: true)
                    }
                    for student in students {
                        for schoolClass in [a, b] {
                            let listed = schoolClass.students.contains(student)
                            try check(listed == (student.schoolClass === schoolClass),
                                      "\(mode) refreshed: \(schoolClass.title).students \(listed ? "lists" : "lacks") \(student.name), whose class is \(student.schoolClass?.title ?? "none")")
                        }
                    }
                    try check(students[0].schoolClass === new, "\(mode) refreshed: s0 shows the class it is stored in, \(new.title)")
                }
            }
        },
    ]
}
