import Foundation
import ObjectGraph

/// Parent and child contexts: a child sees its parent's unsaved changes, saves into the parent
/// only, and IDs stay valid across the family.
enum NestedContextScenarios {
    static let all: [ConformanceScenario] = basic + parent + faults + ordered + ids + freshness + inverses + merging

    static let basic: [ConformanceScenario] = [
        ConformanceScenario("nested.childSeesParentsUnsavedChanges") { env in
            let id = try ConflictScenarios.seedStudent(env)
            let parent = env.newContext("parent")
            let (ada, math) = try parent.performAndWait {
                let ada = try parent.existingObject(with: id) as! Student
                ada.name = "Ann"
                let math = SchoolClass(context: parent); math.title = "Math"
                ada.schoolClass = math
                return (ada, math)
            }
            let child = parent.newChildContext(name: "child")
            try check(child.parent === parent && parent.parent == nil, "parent links")
            try child.performAndWait {
                let students = try child.fetch(FetchRequest<Student>(predicate: .key("name") == "Ann"))
                try checkEqual(students.map(\.objectID), [id], "the child's fetch matches the parent's unsaved value")
                let classes = try child.fetch(FetchRequest<SchoolClass>())
                try checkEqual(classes.count, 1, "the parent's unsaved insert is visible")
                try check(!classes[0].objectID.isTemporary, "with a permanent ID")
                try checkEqual(students[0].schoolClass?.title, "Math", "relationships follow the parent's unsaved graph")
                try checkEqual(classes[0].students.map(\.objectID), [id], "and their inverse")
                try checkEqual(try child.count(for: FetchRequest<SchoolClass>(predicate: .key("title") == "Math")), 1, "counts too")
                // Counted by the parent's unsaved graph, not by what the store holds for it.
                try checkEqual(try child.count(for: FetchRequest<Student>(predicate: .key("schoolClass") == classes[0].objectID)), 1, "a count of toOne == object too")
            }
            try parent.performAndWait {
                try checkEqual(math.objectID, try child.performAndWait { try child.fetch(FetchRequest<SchoolClass>())[0].objectID }, "the parent's object carries the ID the child saw")
                try check(ada.hasChanges && math.isInserted, "the parent still holds its changes")
            }
        },
        ConformanceScenario("nested.childCountsByParentsUnsavedMembership") { env in
            // Saved: Math (Ada, alan), Physics (Grace). The parent moves Ada, unsaved; the
            // child's counts of `schoolClass == X` follow the parent, not the store.
            try FetchScenarios.seedPeople(env)
            let parent = env.newContext("parent")
            let (mathID, physicsID) = try parent.performAndWait {
                let classes = try parent.fetch(FetchRequest<SchoolClass>(sortKeys: [SortKey("title")]))
                let ada = try parent.fetch(FetchRequest<Student>(predicate: .key("name") == "Ada"))[0]
                ada.schoolClass = classes[1]
                return (classes[0].objectID, classes[1].objectID)
            }
            let child = parent.newChildContext(name: "child")
            try child.performAndWait {
                try checkEqual(try child.count(for: FetchRequest<Student>(predicate: .key("schoolClass") == mathID)), 1, "Math without Ada")
                try checkEqual(try child.count(for: FetchRequest<Student>(predicate: .key("schoolClass") == physicsID)), 2, "Physics with her")
            }
        },
        ConformanceScenario("nested.childSaveReachesParentOnly") { env in
            let id = try ConflictScenarios.seedStudent(env)
            let parent = env.newContext("parent")
            let child = parent.newChildContext()
            let (tagID, lockerID) = try child.performAndWait {
                let ada = try child.existingObject(with: id) as! Student
                ada.age = 40
                let tag = Tag(context: child); tag.label = "new"
                ada.tags.insert(tag)
                let locker = Locker(context: child); locker.number = 7
                ada.locker = locker
                try child.save()
                try check(!child.hasChanges, "the child has nothing left to save")
                return (tag.objectID, locker.objectID)
            }
            try check(!tagID.isTemporary, "the child's save gives permanent IDs")
            try checkEqual(try ConflictScenarios.storedStudent(env, id).age, 36, "the store is untouched by a child's save")
            try parent.performAndWait {
                try check(parent.hasChanges, "the parent now holds the changes, unsaved")
                let ada = try parent.existingObject(with: id) as! Student
                try checkEqual(ada.age, 40, "the changed value")
                try checkEqual(ada.tags.map(\.objectID), [tagID], "the inserted member")
                try checkEqual(ada.locker?.objectID, lockerID, "the inserted to-one")
                try checkEqual((try parent.existingObject(with: tagID) as! Tag).label, "new", "the ID resolves in the parent")
                try parent.save()
            }
            let fresh = env.newContext()
            try fresh.performAndWait {
                let ada = try fresh.existingObject(with: id) as! Student
                try checkEqual(ada.age, 40, "the root's save reached the store")
                try checkEqual(ada.tags.map(\.label), ["new"], "with the member")
                try checkEqual(ada.locker?.number, 7, "and the to-one")
            }
        },
        ConformanceScenario("nested.staleChildStoresBothEndsOfAMembership") { env in
            // Children save into their parent without version checks, so a child working from
            // a view another child's save made stale must still send both ends of each
            // membership it changes: here its loaded end already lists the subject (removed
            // meanwhile by the sibling), and recording nothing there stored half of the pair.
            let (studentID, mathID) = try RelationshipScenarios.seedStudent(env, takingMath: true)
            let parent = env.newContext("parent")
            let stale = parent.newChildContext(name: "stale")
            let sibling = parent.newChildContext(name: "sibling")
            // Held across the blocks: an object the app lets go of is dropped, and a new one
            // would load the current members.
            let staleStudent = try stale.performAndWait {
                let student = try stale.existingObject(with: studentID) as! Student
                try checkEqual(Set(student.subjects.map(\.name)), ["Art", "Math"], "the stale child's loaded end")
                return student
            }
            try sibling.performAndWait {
                let math = try sibling.existingObject(with: mathID) as! Subject
                math.$students.remove(try sibling.existingObject(with: studentID) as! Student)
                try sibling.save()
            }
            try stale.performAndWait {
                let math = try stale.existingObject(with: mathID) as! Subject
                math.$students.add(staleStudent)  // its end unloaded; the student's end lists Math already
                try stale.save()
            }
            try parent.performAndWait { try parent.save() }
            let fresh = env.newContext()
            try fresh.performAndWait {
                let student = try fresh.existingObject(with: studentID) as! Student
                let math = try fresh.existingObject(with: mathID) as! Subject
                try checkEqual(math.students.map(\.name), ["s"], "math.students: the last change was the addition")
                try checkEqual(Set(student.subjects.map(\.name)), ["Art", "Math"], "student.subjects mirrors it")
            }
        },
        ConformanceScenario("nested.discardedChildLeavesParentUntouched") { env in
            let id = try ConflictScenarios.seedStudent(env)
            let parent = env.newContext("parent")
            try parent.performAndWait { _ = try parent.existingObject(with: id) }
            do {
                let child = parent.newChildContext()
                try child.performAndWait {
                    (try child.existingObject(with: id) as! Student).name = "Zed"
                    _ = Tag(context: child)
                    child.delete(try child.existingObject(with: id))
                }
            }
            try parent.performAndWait {
                try check(!parent.hasChanges, "a discarded child changes nothing in its parent")
                try checkEqual((try parent.existingObject(with: id) as! Student).name, "Ada", "value")
                try checkEqual(try parent.count(for: FetchRequest<Tag>()), 0, "no insert")
            }
        },
        ConformanceScenario("nested.childDeleteCascadesInParent") { env in
            let setup = env.newContext()
            let chatID = try setup.performAndWait {
                let chat = Chat(context: setup); chat.title = "c"
                for i in 0..<3 { let m = Message(context: setup); m.text = "m\(i)"; m.chat = chat }
                try setup.save()
                return chat.objectID
            }
            let parent = env.newContext("parent")
            try parent.performAndWait {
                // Only the parent knows this message until its save.
                let extra = Message(context: parent); extra.text = "parent's"; extra.chat = (try parent.existingObject(with: chatID) as! Chat)
            }
            let child = parent.newChildContext()
            try child.performAndWait {
                let chat = try child.existingObject(with: chatID) as! Chat
                try checkEqual(chat.messages.count, 4, "the child sees the parent's unsaved message")
                child.delete(chat)
                try child.save()
            }
            try parent.performAndWait {
                try checkEqual(try parent.count(for: FetchRequest<Message>()), 0, "the cascade reached every message in the parent")
                try parent.save()
            }
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(try fresh.count(for: FetchRequest<Chat>()), 0, "chat gone from the store")
                try checkEqual(try fresh.count(for: FetchRequest<Message>()), 0, "messages gone from the store")
            }
        },
        ConformanceScenario("nested.prefetchingAndBatchingInChild") { env in
            let setup = env.newContext()
            try setup.performAndWait {
                for c in 0..<4 {
                    let chat = Chat(context: setup); chat.title = "chat\(c)"
                    for i in 0..<3 { let m = Message(context: setup); m.text = "\(c).\(i)"; m.chat = chat }
                }
                try setup.save()
            }
            let child = env.newContext("parent").newChildContext()
            try child.performAndWait {
                var request = FetchRequest<Chat>(sortKeys: [SortKey("title")])
                request.relationshipKeyPathsForPrefetching = ["messages"]
                request.fetchBatchSize = 2
                let chats = try child.fetch(request)
                try check(chats.allSatisfy(\.isFault), "a batched fetch gives faults, loaded a batch at a time")
                for batch in [chats[0..<2], chats[2..<4]] {
                    _ = batch.first?.title
                    let trips = child.statistics.storeRoundTrips
                    try checkEqual(batch.map(\.messages.count), [3, 3], "prefetched members")
                    try checkEqual(Set(batch.flatMap(\.messages).map(\.text)).count, 6, "prefetched members' values")
                    try checkEqual(child.statistics.storeRoundTrips, trips, "no further round trips after the batch and its prefetching")
                }
                let batched = try child.fetchBatched(FetchRequest<Message>(sortKeys: [SortKey("text")]))
                try checkEqual(batched.count, 12, "batched results in a child")
                try checkEqual(batched[11].text, "3.2", "the last, loaded by batch")
            }
        },
        ConformanceScenario("nested.grandchildAndSiblingMerge") { env in
            let id = try ConflictScenarios.seedStudent(env)
            let root = env.newContext("root")
            let middle = root.newChildContext(name: "middle")
            let (left, right) = (middle.newChildContext(name: "left"), middle.newChildContext(name: "right"))
            right.automaticallyMergesChangesFromParent = true
            let rightAda = try right.performAndWait { try right.existingObject(with: id) as! Student }
            try left.performAndWait {
                (try left.existingObject(with: id) as! Student).name = "Lee"
                try left.save()
            }
            try right.performAndWait { try checkEqual(rightAda.name, "Lee", "a sibling's save merged into the other child") }
            try middle.performAndWait { try middle.save() }
            try checkEqual(try ConflictScenarios.storedStudent(env, id).name, "Ada", "nothing reached the store yet")
            try root.performAndWait { try root.save() }
            try checkEqual(try ConflictScenarios.storedStudent(env, id).name, "Lee", "the root's save did")
            try check(root.rootCoordinator === env.container.coordinator && left.rootCoordinator === env.container.coordinator, "rootCoordinator")
        },
    ]
}
