import Foundation
import ObjectGraph
import OrderedCollections

/// Undo across saves, as in Core Data: a save keeps the history, and undoing a saved change
/// makes it an unsaved change that the next save stores — an undone insert a deletion, an
/// undone deletion an insert under the same ID (with its cascade and its relationships), an
/// undone update an update back. (Until 2026-11-27 a save cleared the history.)
extension UndoScenarios {
    static let saved: [ConformanceScenario] = [
        ConformanceScenario("undo.afterSave.attributes") { env in
            let (context, id, ada) = try renamedAndSaved(env)
            try context.performAndWait {
                try checkEqual(context.undoStack?.canUndo, true, "a save keeps the history")
                try context.undo()
                try checkEqual(ada.name, "Ada", "undone after the save")
                try check(ada.isUpdated && context.hasChanges, "the undone change is an unsaved change")
                try checkEqual(try ada.changedValues()["name"] as? String, "Ada", "changed values name it")
                try context.save()
            }
            try checkEqual(try ConflictScenarios.storedStudent(env, id).name, "Ada", "the undo saved")
            try context.performAndWait {
                try context.redo()
                let ada = try context.existingObject(with: id) as! Student
                try checkEqual(ada.name, "Ann", "redone")
                try check(ada.isUpdated, "the redone change is unsaved too")
                try context.save()
                try context.undo()
                try context.redo()
                try check(!context.hasChanges, "undo and redo of a saved change leave nothing to save")
            }
            try checkEqual(try ConflictScenarios.storedStudent(env, id).name, "Ann", "the redo saved")
        },
        ConformanceScenario("undo.afterSave.insertBecomesDelete") { env in
            let context = undoable(env)
            let id: ObjectID = try context.performAndWait {
                let tag = Tag(context: context); tag.label = "kept?"
                try context.save()
                try context.undo()
                try check(tag.isDeleted && context.deletedObjects.contains(tag), "undoing a saved insert deletes the object")
                try context.save()
                return tag.objectID
            }
            let counter = env.newContext()
            try checkEqual(try counter.performAndWait { try counter.count(for: FetchRequest<Tag>()) }, 0, "the deletion saved")
            try context.performAndWait {
                try context.redo()
                let tags = Array(context.insertedObjects)
                try checkEqual(tags.map(\.objectID), [id], "redo inserts it again, under the same ID")
                try context.save()
            }
            let reader = env.newContext()
            try reader.performAndWait {
                let tag = try reader.existingObject(with: id) as! Tag
                try checkEqual(tag.label, "kept?", "stored again with its values")
            }
        },
        ConformanceScenario("undo.afterSave.deleteWithCascadeComesBack") { env in
            let setup = env.newContext()
            let (chatID, aliceID, studentID) = try setup.performAndWait {
                let chat = Chat(context: setup); chat.title = "c"
                let alice = Member(context: setup); alice.name = "alice"
                chat.members = [alice]
                for i in 0..<3 { let m = Message(context: setup); m.text = "m\(i)"; m.chat = chat; m.author = alice }
                let ada = Student(context: setup); ada.name = "Ada"
                let tag = Tag(context: setup); tag.label = "t"
                ada.tags = [tag]
                try setup.save()
                return (chat.objectID, alice.objectID, ada.objectID)
            }
            let context = undoable(env)
            try context.performAndWait {
                // Deleted while faults: nothing of them was read before the delete.
                context.delete(try context.existingObject(with: chatID))
                context.delete(context.object(with: studentID))
                try context.save()
                try checkEqual(try context.count(for: FetchRequest<Message>()), 0, "the cascade saved")
                try context.undo()
                try checkEqual(context.insertedObjects.count, 5, "chat, its three messages and the student come back as inserts")
                try context.save()
            }
            let reader = env.newContext()
            try reader.performAndWait {
                let chat = try reader.existingObject(with: chatID) as! Chat
                try checkEqual(chat.title, "c", "the chat under its ID")
                try checkEqual(chat.messages.map(\.text).sorted(), ["m0", "m1", "m2"], "its messages")
                let alice = try reader.existingObject(with: aliceID) as! Member
                try checkEqual(alice.chats, [chat], "the many-to-many back on both ends")
                try checkEqual(alice.messages.count, 3, "the authored messages")
                let ada = try reader.existingObject(with: studentID) as! Student
                try checkEqual(ada.tags.map(\.label), ["t"], "a many-to-nil's members (read before the deletion was saved)")
            }
            try context.performAndWait {
                try context.redo()
                try checkEqual(context.deletedObjects.count, 5, "redo deletes them again")
                try context.save()
            }
            try reader.performAndWait {
                try checkEqual(try reader.count(for: FetchRequest<Message>()), 0, "the redone deletion saved")
                try checkEqual(try reader.count(for: FetchRequest<Chat>()), 0, "the chat too")
            }
        },
        ConformanceScenario("undo.afterSave.relationships") { env in
            let setup = env.newContext()
            let (adaID, mathID, artID) = try setup.performAndWait {
                let math = SchoolClass(context: setup); math.title = "Math"
                let art = SchoolClass(context: setup); art.title = "Art"
                let ada = Student(context: setup); ada.name = "Ada"; ada.schoolClass = math
                try setup.save()
                return (ada.objectID, math.objectID, art.objectID)
            }
            let context = undoable(env)
            try context.performAndWait {
                // The classes' students are faults when the move is recorded.
                let ada = try context.existingObject(with: adaID) as! Student
                let art = try context.existingObject(with: artID) as! SchoolClass
                ada.schoolClass = art
                try context.save()
                try context.undo()
                let math = try context.existingObject(with: mathID) as! SchoolClass
                try checkEqual(ada.schoolClass, math, "the to-one back")
                try check(math.students.contains(ada) && !art.students.contains(ada), "both inverses back")
                try context.save()
            }
            let reader = env.newContext()
            try reader.performAndWait {
                let math = try reader.existingObject(with: mathID) as! SchoolClass
                let art = try reader.existingObject(with: artID) as! SchoolClass
                try checkEqual(math.students.map(\.name), ["Ada"], "stored back in Math")
                try check(art.students.isEmpty, "and out of Art")
            }
        },
        ConformanceScenario("undo.afterSave.orderedToMany") { env in
            let context = undoable(env)
            let playlistID: ObjectID = try context.performAndWait {
                let list = Playlist(context: context); list.name = "p"
                for title in ["a", "b", "c"] { let t = Track(context: context); t.title = title; t.playlist = list }
                try context.save()
                context.undoStack?.removeAllActions()
                let d = Track(context: context); d.title = "d"
                try list.insert(d, at: 0, in: "tracks")
                try list.move(from: 3, to: 1, in: "tracks")
                try checkEqual(list.tracks.map(\.title), ["d", "c", "a", "b"], "changed")
                try context.save()
                try context.undo()
                try checkEqual(list.tracks.map(\.title), ["a", "b", "c"], "order and membership back")
                try check(d.isDeleted, "the inserted track is deleted again")
                try context.save()
                return list.objectID
            }
            let reader = env.newContext()
            try reader.performAndWait {
                let list = try reader.existingObject(with: playlistID) as! Playlist
                try checkEqual(list.tracks.map(\.title), ["a", "b", "c"], "stored in the old order")
                try checkEqual(try reader.count(for: FetchRequest<Track>()), 3, "the undone insert is gone")
            }
        },
        // Each save moves the baseline the recorded states are relative to; undoing across
        // two saves must compose both moves.
        ConformanceScenario("undo.afterSave.acrossTwoSaves") { env in
            let context = undoable(env)
            let (adaID, artID) = try context.performAndWait {
                let math = SchoolClass(context: context); math.title = "Math"
                let art = SchoolClass(context: context); art.title = "Art"
                let ada = Student(context: context); ada.name = "Ada"; ada.schoolClass = math
                try context.save()
                context.undoStack?.removeAllActions()
                ada.name = "Ann"; ada.schoolClass = art
                try context.save()
                ada.name = "Bea"; ada.schoolClass = nil
                let subject = Subject(context: context); subject.name = "Chess"
                ada.subjects = [subject]
                try context.save()
                try context.undo()
                try checkEqual(ada.name, "Ann", "second save undone")
                try checkEqual(ada.schoolClass, art, "its to-one")
                try check(subject.isDeleted && !ada.subjects.contains(subject), "its insert")
                try context.undo()
                try checkEqual(ada.name, "Ada", "first save undone")
                try checkEqual(ada.schoolClass, math, "back in Math")
                try check(math.students.contains(ada) && art.students.isEmpty, "inverses")
                try context.save()
                try context.redo()
                try checkEqual(ada.schoolClass, art, "redo after a save of the undo")
                try context.save()
                return (ada.objectID, art.objectID)
            }
            let reader = env.newContext()
            try reader.performAndWait {
                let ada = try reader.existingObject(with: adaID) as! Student
                try checkEqual(ada.name, "Ann", "stored name")
                try checkEqual(ada.schoolClass?.objectID, artID, "stored class")
                try check(ada.subjects.isEmpty, "no subject")
                try checkEqual(try reader.count(for: FetchRequest<Subject>()), 0, "the undone insert is not stored")
            }
        },
        // Found by the random walk: a new object deleted, the deletion undone, the object saved,
        // the deletion redone. The redo put back "deleted while new", which a save discards
        // without a trace: the stored row stayed.
        ConformanceScenario("undo.afterSave.redoDeletionOfNewObject") { env in
            let context = undoable(env)
            try context.performAndWait {
                let math = SchoolClass(context: context); math.title = "Math"
                try context.processPendingChanges()
                context.delete(math)
                try context.undo()
                try context.save()
                try context.redo()
                try check(math.isDeleted && context.deletedObjects.contains(math), "the redone deletion deletes the saved object")
                try context.save()
            }
            let counter = env.newContext()
            try checkEqual(try counter.performAndWait { try counter.count(for: FetchRequest<SchoolClass>()) }, 0, "the deletion saved")
        },
        ConformanceScenario("undo.afterSave.childContext") { env in
            let id = try ConflictScenarios.seedStudent(env)
            let parent = env.newContext()
            let child = parent.newChildContext()
            child.undoStack = ContextUndoStack()
            try child.performAndWait {
                let ada = try child.existingObject(with: id) as! Student
                ada.age = 40
                try child.save()
                try child.undo()
                try checkEqual(ada.age, 36, "undone after the save into the parent")
                try check(ada.isUpdated, "as an unsaved change of the child")
                try child.save()
            }
            try parent.performAndWait {
                let ada = try parent.existingObject(with: id) as! Student
                try checkEqual(ada.age, 36, "the parent holds the undone value")
                try parent.save()
            }
            try checkEqual(try ConflictScenarios.storedStudent(env, id).age, 36, "and the store, after the parent's save")
        },
        // Found by the random walk: the state an undone saved insert puts back (a deletion)
        // was rebased by the next save as an update too, with the to-one it had when recorded.
        // A child context then sent the deletion with that update, and its parent, assigning
        // the to-one before deleting, cascaded to the address the child had let go of.
        ConformanceScenario("undo.afterSave.childContextUndoneInsertKeepsReleasedAddress") { env in
            let parent = env.newContext()
            let child = parent.newChildContext()
            child.undoStack = ContextUndoStack()
            let addressID: ObjectID = try child.performAndWait {
                let home = Address(context: child); home.street = "Home"
                try child.processPendingChanges()
                let ada = Student(context: child); ada.name = "Ada"
                try child.processPendingChanges()
                ada.address = home
                try child.save()
                try parent.performAndWait { try parent.save() }
                try child.undo()
                try check(home.student == nil, "the address let go")
                try child.save()
                try child.undo()
                try check(ada.isDeleted && !child.updatedObjects.contains(ada), "the undone insert is a deletion, not an update")
                try child.save()
                try parent.performAndWait { try parent.save() }
                return home.objectID
            }
            let reader = env.newContext()
            try reader.performAndWait {
                try checkEqual(try reader.count(for: FetchRequest<Student>()), 0, "the student's deletion saved")
                try checkEqual((try reader.existingObject(with: addressID) as? Address)?.street, "Home", "the address it no longer had stays")
            }
        },
        ConformanceScenario("undo.afterSave.rollbackAndResetClear") { env in
            let (context, _, ada) = try renamedAndSaved(env)
            try context.performAndWait {
                context.rollback()
                try checkEqual(context.undoStack?.canUndo, false, "rollback clears the history, as in Core Data")
                ada.name = "Bo"
                try context.save()
                context.reset()
                try checkEqual(context.undoStack?.canUndo, false, "and so does reset")
            }
        },
    ]

    /// The seeded student Ada renamed Ann and saved, in a context with an undo history.
    static func renamedAndSaved(_ env: ScenarioEnvironment) throws -> (context: ManagedObjectContext, id: ObjectID, ada: Student) {
        let (id, context, ada) = try MergeScenarios.renamedInUndoableContext(env)
        try context.performAndWait { try context.save() }
        return (context, id, ada)
    }
}
