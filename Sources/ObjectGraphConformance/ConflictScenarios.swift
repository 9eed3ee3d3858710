import Foundation
import ObjectGraph

/// Optimistic locking: two contexts change the same object and both save. The second save
/// fails with a typed conflict naming objects, keys and both values — unless the context's
/// merge policy resolves it (store-trumps, object-trumps, overwrite, rollback).
enum ConflictScenarios {
    static let all: [ConformanceScenario] = inverses + loadedOwners + revalidation + members + [
        ConformanceScenario("conflicts.error.secondSaveThrowsTypedConflict") { env in
            let id = try seedStudent(env)
            let (first, second) = (env.newContext("first"), env.newContext("second"))
            let a: Student = try load(id, in: first)
            let b: Student = try load(id, in: second)
            try first.performAndWait { a.name = "Ann"; try first.save() }
            let error = try second.performAndWait {
                b.name = "Bea"
                return try checkThrows(MergeConflictError.self, "the second save") { try second.save() }
            }
            try checkEqual(error.conflicts.map(\.objectID), [id], "the conflict names the object")
            try checkEqual(error.code, StoreError.Code.conflict, "code")
            let name = error.conflicts[0].properties.first { $0.key == "name" }
            try check(name != nil, "the conflict names the key 'name': \(error)")
            try checkEqual(name?.contextValue, .attribute(.string("Bea")), "the context's value")
            try checkEqual(name?.storedValue, .attribute(.string("Ann")), "the store's value")
            try checkEqual(name?.readValue, .attribute(.string("Ada")), "the value read")
            try checkEqual(error.conflicts[0].storedVersion, error.conflicts[0].readVersion.map { $0 + 1 }, "stored version is one past the read one")
            try second.performAndWait { try check(second.hasChanges && b.name == "Bea", "the failed save keeps the context's changes") }
            try checkEqual(try storedStudent(env, id).name, "Ann", "the store keeps the first save")
        },
        ConformanceScenario("conflicts.storeTrumps.propertyByProperty") { env in
            let id = try seedStudent(env)
            let stored = try conflictingSaves(env, id, policy: .storeTrumps,
                first: { $0.name = "Ann" }, second: { $0.name = "Bea"; $0.age = 50 })
            try checkEqual(stored.name, "Ann", "the other save's name wins")
            try checkEqual(stored.age, 50, "this context's age (changed only here) is kept")
        },
        ConformanceScenario("conflicts.objectTrumps.propertyByProperty") { env in
            let id = try seedStudent(env)
            let stored = try conflictingSaves(env, id, policy: .objectTrumps,
                first: { $0.name = "Ann"; $0.age = 60 }, second: { $0.name = "Bea" })
            try checkEqual(stored.name, "Bea", "this context's name wins")
            try checkEqual(stored.age, 60, "the other save's age (not changed here) is kept")
        },
        ConformanceScenario("conflicts.overwrite.wholeObject") { env in
            let id = try seedStudent(env)
            let stored = try conflictingSaves(env, id, policy: .overwrite,
                first: { $0.age = 60 }, second: { $0.name = "Bea" })
            try checkEqual(stored.name, "Bea", "this context's name")
            try checkEqual(stored.age, 36, "the other save's age is overwritten by the value read here")
        },
        ConformanceScenario("conflicts.rollback.discardsContextChanges") { env in
            let id = try seedStudent(env)
            let stored = try conflictingSaves(env, id, policy: .rollback,
                first: { $0.name = "Ann" }, second: { $0.name = "Bea"; $0.age = 50 })
            try checkEqual(stored.name, "Ann", "the other save's name")
            try checkEqual(stored.age, 36, "this context's age change is discarded")
        },
        ConformanceScenario("conflicts.toOneResolvedWithInverses") { env in
            let (studentID, mathID, artID, musicID) = try seedClasses(env)
            let (first, second) = (env.newContext(), env.newContext())
            second.mergePolicy = .storeTrumps
            let a: Student = try load(studentID, in: first)
            let b: Student = try load(studentID, in: second)
            try first.performAndWait { a.schoolClass = (first.object(with: artID) as! SchoolClass); try first.save() }
            try second.performAndWait {
                b.schoolClass = (second.object(with: musicID) as! SchoolClass)
                try second.save()
                try checkEqual(b.schoolClass?.objectID, artID, "the other save's class won in memory")
            }
            let check = env.newContext()
            try check.performAndWait {
                let classes = try check.fetch(FetchRequest<SchoolClass>(sortKeys: [SortKey("title")]))
                try checkEqual(classes.map { $0.students.map(\.objectID) }, [[studentID], [], []], "Art, Math, Music members: only Art holds Ada")
                try checkEqual(classes.map(\.objectID), [artID, mathID, musicID], "class order")
            }
        },
        ConformanceScenario("conflicts.updateOfDeletedRecord") { env in
            let id = try seedStudent(env)
            let (deleter, editor, strict) = (env.newContext(), env.newContext(), env.newContext())
            let edited: Student = try load(id, in: editor)
            let strictCopy: Student = try load(id, in: strict)
            try deleter.performAndWait { deleter.delete(deleter.object(with: id)); try deleter.save() }
            let error = try strict.performAndWait {
                strictCopy.age = 1
                return try checkThrows(MergeConflictError.self, "updating a deleted record under the error policy") { try strict.save() }
            }
            try checkEqual(error.conflicts.first?.storedVersion, nil, "stored version nil: deleted")
            editor.mergePolicy = .objectTrumps
            try editor.performAndWait {
                edited.age = 2
                let tag = Tag(context: editor); tag.label = "still saved"
                try editor.save()
                try check(!editor.hasChanges, "the save went through")
                let thrown = try checkThrows(ObjectGraphError.self, "the deleted object is inaccessible") { _ = try edited.value(forKey: "name") }
                try check(thrown.code == .objectInaccessible || thrown.code == .objectNotFound, "clear code, got \(thrown.code)")
                try checkEqual(try editor.count(for: FetchRequest<Student>()), 0, "the deletion won")
                try checkEqual(try editor.count(for: FetchRequest<Tag>()), 1, "the rest of the save landed")
            }
        },
        ConformanceScenario("conflicts.deleteAfterConcurrentInsertCascades") { env in
            let setup = env.newContext()
            let chatID = try setup.performAndWait {
                let chat = Chat(context: setup); chat.title = "c"
                let m = Message(context: setup); m.text = "old"; m.chat = chat
                try setup.save()
                return chat.objectID
            }
            let (deleter, writer) = (env.newContext(), env.newContext())
            deleter.mergePolicy = .storeTrumps
            let chat = try loadObject(chatID, in: deleter) as! Chat
            try deleter.performAndWait { try checkEqual(chat.messages.count, 1, "one message read") }
            try writer.performAndWait {
                let m = Message(context: writer); m.text = "new"; m.chat = (writer.object(with: chatID) as! Chat)
                try writer.save()
            }
            try deleter.performAndWait {
                deleter.delete(chat)
                try deleter.save()
            }
            let check = env.newContext()
            try check.performAndWait {
                try checkEqual(try check.count(for: FetchRequest<Chat>()), 0, "chat deleted")
                try checkEqual(try check.count(for: FetchRequest<Message>()), 0, "the message added meanwhile was cascaded too, not left dangling")
            }
        },
        ConformanceScenario("conflicts.membershipChangesBumpVersions") { env in
            let setup = env.newContext()
            let chatID = try setup.performAndWait {
                let chat = Chat(context: setup); chat.title = "c"
                try setup.save()
                return chat.objectID
            }
            let (first, second) = (env.newContext(), env.newContext())
            // Both contexts read the chat (and keep it alive) before either adds a message.
            let chats = [try loadObject(chatID, in: first) as! Chat, try loadObject(chatID, in: second) as! Chat]
            for (context, text, chat) in [(first, "one", chats[0]), (second, "two", chats[1])] {
                context.performAndWait {
                    let m = Message(context: context); m.text = text; m.chat = chat
                }
            }
            try first.performAndWait { try first.save() }
            _ = try second.performAndWait { try checkThrows(MergeConflictError.self, "adding to a chat changed meanwhile") { try second.save() } }
            second.mergePolicy = .objectTrumps
            try second.performAndWait { try second.save() }
            let check = env.newContext()
            try check.performAndWait {
                let chat = try check.existingObject(with: chatID) as! Chat
                try checkEqual(Set(chat.messages.map(\.text)), ["one", "two"], "both additions kept")
            }
        },
    ]

    static func seedStudent(_ env: ScenarioEnvironment) throws -> ObjectID {
        let context = env.newContext()
        return try context.performAndWait {
            let ada = Student(context: context); ada.name = "Ada"; ada.age = 36
            try context.save()
            return ada.objectID
        }
    }

    /// Loads the object in `context` (its values read now, at the current version).
    static func loadObject(_ id: ObjectID, in context: ManagedObjectContext) throws -> ManagedObject {
        try context.performAndWait { try context.existingObject(with: id) }
    }

    static func load(_ id: ObjectID, in context: ManagedObjectContext) throws -> Student {
        try context.performAndWait { try context.existingObject(with: id) as! Student }
    }

    /// What the store holds for a student, read in a fresh context.
    static func storedStudent(_ env: ScenarioEnvironment, _ id: ObjectID) throws -> (name: String, age: Int16?) {
        let context = env.newContext()
        return try context.performAndWait {
            let student = try context.existingObject(with: id) as! Student
            return (student.name, student.age)
        }
    }

    /// Two contexts read the student; the first changes and saves, then the second (with
    /// `policy`) changes and saves; returns what the store holds.
    static func conflictingSaves(
        _ env: ScenarioEnvironment, _ id: ObjectID, policy: MergePolicy,
        first change1: (Student) -> Void, second change2: (Student) -> Void
    ) throws -> (name: String, age: Int16?) {
        let (first, second) = (env.newContext("first"), env.newContext("second"))
        second.mergePolicy = policy
        let a: Student = try load(id, in: first)
        let b: Student = try load(id, in: second)
        try first.performAndWait { change1(a); try first.save() }
        try second.performAndWait {
            change2(b)
            try second.save()
            try check(!second.hasChanges, "the save under \(policy) went through")
        }
        return try storedStudent(env, id)
    }
}
