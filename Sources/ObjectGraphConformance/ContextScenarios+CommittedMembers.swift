import Foundation
import ObjectGraph
import OrderedCollections

/// Committed values of to-many relationships: the members last saved (a set; for an ordered
/// relationship an ordered set in the stored order), whatever was added, removed or moved
/// since — as Core Data's `committedValues(forKeys:)` gives them — read without loading the
/// relationship, on every store.
extension ContextScenarios {
    static let committedMembers: [ConformanceScenario] = [
        ConformanceScenario("context.committedValues.toManyMembers") { env in
            let seeder = env.newContext()
            try seeder.performAndWait {
                for (title, names) in [("Math", ["Ada", "Bob"]), ("Art", ["Cy"])] {
                    let schoolClass = SchoolClass(context: seeder); schoolClass.title = title
                    for name in names {
                        let student = Student(context: seeder); student.name = name
                        student.schoolClass = schoolClass
                    }
                }
                try seeder.save()
            }
            try env.reopen()
            let context = env.newContext()
            try context.performAndWait {
                let classes = try context.fetch(FetchRequest<SchoolClass>(sortKeys: [SortKey("title")]))
                let (art, math) = (classes[0], classes[1])
                let ada = try context.fetch(FetchRequest<Student>(predicate: .key("name") == "Ada"))[0]
                func names(_ value: Any??) -> [String] {
                    ((value ?? nil) as? Set<ManagedObject>)?.compactMap { ($0 as? Student)?.name }.sorted() ?? ["not a set: \(String(describing: value))"]
                }
                try checkEqual(names(try math.committedValues(forKeys: ["students"])["students"]), ["Ada", "Bob"], "an unchanged relationship's members")
                try check(try math.hasFault(forRelationshipNamed: "students"), "read without loading the relationship")
                let all = try math.committedValues()
                try checkEqual(Set(all.keys), ["title", "students"], "no keys: every attribute and relationship, to-many included")
                try checkEqual(names(all["students"]), ["Ada", "Bob"], "the members among them")

                // Changed while loaded: Ada leaves, a new student joins.
                _ = math.students.count
                math.$students.remove(ada)
                let dee = Student(context: context); dee.name = "Dee"
                math.$students.add(dee)
                try checkEqual(math.students.map(\.name).sorted(), ["Bob", "Dee"], "the current members")
                try checkEqual(names(try math.committedValues(forKeys: ["students"])["students"]), ["Ada", "Bob"], "the committed members are the saved ones")
                // Changed through the inverse while a fault: Ada joins Art.
                ada.schoolClass = art
                try check(try art.hasFault(forRelationshipNamed: "students"), "Art's members not loaded")
                try checkEqual(names(try art.committedValues(forKeys: ["students"])["students"]), ["Cy"], "the committed members of a fault with recorded changes")
                try check(try art.hasFault(forRelationshipNamed: "students"), "still not loaded")
                try checkEqual(names(try art.changedValues()["students"]), ["Ada", "Cy"], "its changed value is the current members")

                try context.save()
                try checkEqual(names(try math.committedValues(forKeys: ["students"])["students"]), ["Bob", "Dee"], "after save, the saved members")
                try checkEqual(names(try art.committedValues(forKeys: ["students"])["students"]), ["Ada", "Cy"], "after save, the saved members")

                let fresh = SchoolClass(context: context); fresh.title = "New"
                fresh.$students.add(dee)
                try checkEqual(try fresh.committedValues().count, 0, "a new object has no committed values")
                try checkEqual(try fresh.committedValues(forKeys: ["students"]).count, 0, "not even its members")
            }
            let reader = env.newContext()
            try reader.performAndWait {
                let math = try reader.fetch(FetchRequest<SchoolClass>(predicate: .key("title") == "Math"))[0]
                let members = try math.committedValues(forKeys: ["students"])["students"] ?? nil
                try checkEqual(((members as? Set<ManagedObject>) ?? []).compactMap { ($0 as? Student)?.name }.sorted(), ["Bob", "Dee"], "what the store holds")
            }
        },
        ConformanceScenario("context.committedValues.orderedMembersInStoredOrder") { env in
            try seedPlaylist(env, tracks: ["t1", "t2", "t3"])
            let context = env.newContext()
            try context.performAndWait {
                let playlist = try context.fetch(FetchRequest<Playlist>())[0]
                try checkEqual(titles(try playlist.committedValues()["tracks"]), ["t1", "t2", "t3"], "a fault's members in stored order")
                try checkEqual(playlist.tracks.map(\.title), ["t1", "t2", "t3"], "loaded")
                try checkEqual(titles(try playlist.committedValues(forKeys: ["tracks"])["tracks"]), ["t1", "t2", "t3"], "loaded and unchanged")
                playlist.$tracks.move(from: 2, to: 0)
                playlist.$tracks.remove(playlist.tracks[2])  // t2
                let t4 = Track(context: context); t4.title = "t4"
                playlist.$tracks.insert(t4, at: 1)
                try checkEqual(playlist.tracks.map(\.title), ["t3", "t4", "t1"], "the current order")
                try checkEqual(titles(try playlist.committedValues(forKeys: ["tracks"])["tracks"]), ["t1", "t2", "t3"], "the committed members in their stored order")
                try context.save()
                try checkEqual(titles(try playlist.committedValues(forKeys: ["tracks"])["tracks"]), ["t3", "t4", "t1"], "after save, the saved order")
            }
        },
        ConformanceScenario("context.committedValues.childsMembersAreTheParents") { env in
            try seedPlaylist(env, tracks: ["t1", "t2"])
            let parent = env.newContext("parent")
            try parent.performAndWait {
                let playlist = try parent.fetch(FetchRequest<Playlist>())[0]
                let t3 = Track(context: parent); t3.title = "t3"
                playlist.$tracks.add(t3)
                try checkEqual(titles(try playlist.committedValues(forKeys: ["tracks"])["tracks"]), ["t1", "t2"], "the parent's: the store's")
                let child = parent.newChildContext()
                try child.performAndWait {
                    let mine = try child.existingObject(with: playlist.objectID) as! Playlist
                    try checkEqual(titles(try mine.committedValues()["tracks"]), ["t1", "t2", "t3"], "a child's committed members are its parent's, unsaved ones included")
                    mine.$tracks.remove(mine.tracks[0])
                    try checkEqual(titles(try mine.committedValues()["tracks"]), ["t1", "t2", "t3"], "a removal in the child changes none")
                    try child.save()
                    try checkEqual(titles(try mine.committedValues()["tracks"]), ["t2", "t3"], "after the child's save, what it saved into its parent")
                }
                try checkEqual(titles(try playlist.committedValues(forKeys: ["tracks"])["tracks"]), ["t1", "t2"], "the parent's are still the store's")
            }
        },
        // The committed members were the loaded ones with the recorded additions taken out
        // and the removals put back; but a stored member removed and added back is recorded
        // as an addition (so it went missing), and one added and removed again as a removal
        // (so a member never stored appeared).
        ConformanceScenario("context.committedValues.membersChangedAndChangedBack") { env in
            let ids = try env.seed { setup -> [ManagedObject] in
                let math = SchoolClass(context: setup); math.title = "Math"
                let art = SchoolClass(context: setup); art.title = "Art"
                let ada = Student(context: setup); ada.name = "Ada"; ada.schoolClass = math
                let bob = Student(context: setup); bob.name = "Bob"; bob.schoolClass = math
                let cy = Student(context: setup); cy.name = "Cy"; cy.schoolClass = art
                return [math, art, ada, bob, cy]
            }
            let context = env.newContext()
            try context.performAndWait {
                let math = try context.existingObject(with: ids[0]) as! SchoolClass
                let art = try context.existingObject(with: ids[1]) as! SchoolClass
                try checkEqual(math.students.count, 2, "loaded")
                let (bob, cy) = (try context.existingObject(with: ids[3]) as! Student, try context.existingObject(with: ids[4]) as! Student)
                bob.schoolClass = art
                bob.schoolClass = math
                cy.schoolClass = math
                cy.schoolClass = art
                try checkEqual(math.students.map(\.name).sorted(), ["Ada", "Bob"], "the current members")
                try checkEqual(studentNames(try math.committedValues(forKeys: ["students"])["students"]), ["Ada", "Bob"], "the committed members are the stored ones")
            }
        },
        // A child read Math's members before its parent added Bob; the child then put Bob in
        // Math too (through his side). Its committed members, computed from its out-of-date
        // list, missed Bob, whom the parent holds.
        ConformanceScenario("context.committedValues.childsMembersReadBeforeTheParentChanged") { env in
            let ids = try env.seed { setup -> [ManagedObject] in
                let math = SchoolClass(context: setup); math.title = "Math"
                let ada = Student(context: setup); ada.name = "Ada"; ada.schoolClass = math
                let bob = Student(context: setup); bob.name = "Bob"
                return [math, ada, bob]
            }
            let parent = env.newContext("parent")
            let child = parent.newChildContext(name: "child")
            let (math, bob) = try child.performAndWait { () -> (SchoolClass, Student) in
                let math = try child.existingObject(with: ids[0]) as! SchoolClass
                let bob = try child.existingObject(with: ids[2]) as! Student
                try checkEqual(math.students.map(\.name), ["Ada"], "the child's members, loaded")
                try checkEqual(bob.schoolClass, nil, "Bob in no class yet")
                return (math, bob)
            }
            try parent.performAndWait {
                (try parent.existingObject(with: ids[2]) as! Student).schoolClass = (try parent.existingObject(with: ids[0]) as! SchoolClass)
            }
            try child.performAndWait {
                bob.schoolClass = math
                try checkEqual(studentNames(try math.committedValues(forKeys: ["students"])["students"]), ["Ada", "Bob"], "the committed members are the parent's")
                try child.save()
            }
            try parent.performAndWait {
                try checkEqual((try parent.existingObject(with: ids[0]) as! SchoolClass).students.map(\.name).sorted(), ["Ada", "Bob"], "the parent holds both")
            }
        },
    ]

    /// A playlist "mix" holding tracks titled `tracks` in this order, saved; the store reopened.
    private static func seedPlaylist(_ env: ScenarioEnvironment, tracks: [String]) throws {
        let seeder = env.newContext()
        try seeder.performAndWait {
            let playlist = Playlist(context: seeder); playlist.name = "mix"
            for title in tracks {
                let track = Track(context: seeder); track.title = title
                playlist.$tracks.add(track)
            }
            try seeder.save()
        }
        try env.reopen()
    }

    /// The names of a committed unordered to-many value of students, sorted (a description of
    /// the value when it is no set).
    private static func studentNames(_ value: Any??) -> [String] {
        ((value ?? nil) as? Set<ManagedObject>)?.compactMap { ($0 as? Student)?.name }.sorted() ?? ["not a set: \(String(describing: value))"]
    }

    /// The titles of a committed ordered to-many value of tracks, in order (a description of
    /// the value when it is no ordered set).
    private static func titles(_ value: Any??) -> [String] {
        ((value ?? nil) as? OrderedSet<ManagedObject>)?.compactMap { ($0 as? Track)?.title } ?? ["not an ordered set: \(String(describing: value))"]
    }
}
