import Foundation
import ObjectGraph

/// A child's save in a parent that changed the same objects after the child read them, or
/// that records undo.
extension NestedContextScenarios {
    static let parent: [ConformanceScenario] = [
        // A child's save writes only the values the child changed: the others may be stale in
        // the child, and writing them back undid the parent's later changes (an audit).
        ConformanceScenario("nested.childSaveKeepsParentsLaterChange") { env in
            let id = try ConflictScenarios.seedStudent(env)
            let parent = env.newContext("parent")
            let child = parent.newChildContext()
            try child.performAndWait {
                let ada = try child.existingObject(with: id) as! Student
                try checkEqual(ada.age, 36, "loaded in child")
            }
            try parent.performAndWait {
                let ada = try parent.existingObject(with: id) as! Student
                ada.age = 40
            }
            try child.performAndWait {
                let ada = try child.existingObject(with: id) as! Student
                ada.name = "Ann"
                try child.save()
            }
            try parent.performAndWait {
                let ada = try parent.existingObject(with: id) as! Student
                try checkEqual(ada.name, "Ann", "child's change")
                try checkEqual(ada.age, 40, "parent's own change to another attribute kept")
            }
        },
        ConformanceScenario("nested.childSaveKeepsParentsLaterMove") { env in
            let (aID, bID, mID) = try seedTwoChatsAndAMessage(env)
            let parent = env.newContext("parent")
            let child = parent.newChildContext()
            try child.performAndWait { _ = (try child.existingObject(with: mID) as! Message).text }
            try parent.performAndWait {
                (try parent.existingObject(with: mID) as! Message).chat = (try parent.existingObject(with: bID) as! Chat)
            }
            try child.performAndWait {
                (try child.existingObject(with: mID) as! Message).text = "edited"
                try child.save()
            }
            try parent.performAndWait {
                let m = try parent.existingObject(with: mID) as! Message
                let a = try parent.existingObject(with: aID) as! Chat
                let b = try parent.existingObject(with: bID) as! Chat
                try checkEqual(m.text, "edited", "child's change")
                try checkEqual(m.chat?.title, "B", "parent's move kept")
                try check(b.messages.contains(m) && !a.messages.contains(m), "inverse: A \(a.messages.count), B \(b.messages.count)")
            }
        },
        // The parent records a child's save whole for undo: values, inserts and both ends of
        // each relationship (only the to-ones were, so undo moved an object back without its
        // inverses; an audit).
        ConformanceScenario("nested.childSaveIsUndoneWholeInParent") { env in
            let (aID, bID, mID) = try seedTwoChatsAndAMessage(env)
            let parent = env.newContext("parent")
            parent.undoStack = ContextUndoStack()
            let (a, b, m) = try parent.performAndWait {
                let a = try parent.existingObject(with: aID) as! Chat
                let b = try parent.existingObject(with: bID) as! Chat
                let m = try parent.existingObject(with: mID) as! Message
                try checkEqual(a.messages.count + b.messages.count, 1, "loaded")
                return (a, b, m)
            }
            let child = parent.newChildContext()
            try child.performAndWait {
                let m = try child.existingObject(with: mID) as! Message
                let b = try child.existingObject(with: bID) as! Chat
                m.chat = b
                m.text = "moved"
                let n = Message(context: child); n.text = "new"; n.chat = b
                try child.save()
            }
            try parent.performAndWait {
                try checkEqual(Set(b.messages.map(\.text)), ["moved", "new"], "the child's save in the parent")
                try parent.undo()
                try checkEqual(m.chat, a, "to-one undone")
                try check(a.messages.contains(m) && b.messages.isEmpty, "both inverses undone: A \(a.messages.map(\.text)), B \(b.messages.map(\.text))")
                try checkEqual(m.text, "m", "attribute undone")
                try check(!parent.hasChanges, "nothing left to save: \(parent.insertedObjects.count) inserted, \(parent.updatedObjects.count) updated")
                try parent.redo()
                try checkEqual(m.chat, b, "redo")
                try checkEqual(Set(b.messages.map(\.text)), ["moved", "new"], "redo both ends")
                try parent.save()
            }
            let verify = env.newContext()
            try verify.performAndWait {
                let b = try verify.existingObject(with: bID) as! Chat
                try checkEqual(Set(b.messages.map(\.text)), ["moved", "new"], "stored")
                try checkEqual(try verify.count(for: FetchRequest<Message>(predicate: .key("chat") == aID)), 0, "A empty in the store")
            }
        },
    ]

    /// Saves chats A and B and a message "m" in A; returns their IDs.
    static func seedTwoChatsAndAMessage(_ env: ScenarioEnvironment) throws -> (a: ObjectID, b: ObjectID, m: ObjectID) {
        let setup = env.newContext()
        return try setup.performAndWait {
            let a = Chat(context: setup); a.title = "A"
            let b = Chat(context: setup); b.title = "B"
            let m = Message(context: setup); m.text = "m"; m.chat = a
            try setup.save()
            return (a.objectID, b.objectID, m.objectID)
        }
    }
}
