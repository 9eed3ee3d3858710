import Foundation
import ObjectGraph

/// Undo across saves meeting another context's saves: undo takes back this context's changes
/// only.
extension UndoScenarios {
    static let otherSaves: [ConformanceScenario] = [
        // A save whose optimistic-locking conflict a merge policy resolved brings in what the
        // other save wrote, as a merge does, so the recorded states must take it too. (Until
        // 2026-11-27 they kept the values and members read before the conflict: undoing after
        // such a save put the other save's attribute values back as they were, and dropped the
        // members it had added from one end of their pairs.)
        ConformanceScenario("undo.afterSave.conflictKeepsOtherValues") { env in
            let (context, id, ada) = try renamedAndSaved(env)
            context.mergePolicy = .objectTrumps
            let writer = env.newContext()
            try writer.performAndWait {
                (try writer.existingObject(with: id) as! Student).age = 50
                try writer.save()
            }
            try context.performAndWait {
                ada.name = "Bea"
                try context.save()
                try checkEqual(ada.age, 50, "the resolved save took the other save's age")
                try context.undo()
                try checkEqual(ada.name, "Ann", "this context's change undone")
                try checkEqual(ada.age, 50, "the other save's value stays")
                try context.save()
            }
            let stored = try ConflictScenarios.storedStudent(env, id)
            try checkEqual(stored.name, "Ann", "stored name")
            try checkEqual(stored.age, 50, "stored age: the undo did not take back the other save's")
        },
        ConformanceScenario("undo.afterSave.conflictKeepsOtherMembers") { env in
            let chatID = try env.seed { setup in
                let chat = Chat(context: setup); chat.title = "c"
                let m = Message(context: setup); m.text = "m0"; m.chat = chat
                return [chat]
            }[0]
            let context = undoable(env)
            context.mergePolicy = .objectTrumps
            let chat = try context.performAndWait {
                let chat = try context.existingObject(with: chatID) as! Chat
                try checkEqual(chat.messages.count, 1, "loaded")
                return chat
            }
            let writer = env.newContext()
            try writer.performAndWait {
                let m = Message(context: writer); m.text = "m1"; m.chat = (try writer.existingObject(with: chatID) as! Chat)
                try writer.save()
            }
            try context.performAndWait {
                let mine = Message(context: context); mine.text = "mine"; mine.chat = chat
                try context.save()
                try checkEqual(Set(chat.messages.map(\.text)), ["m0", "m1", "mine"], "the resolved save")
                try context.undo()
                try checkEqual(Set(chat.messages.map(\.text)), ["m0", "m1"], "undo takes back this context's message only")
                try context.save()
            }
            let reader = env.newContext()
            try reader.performAndWait {
                let chat = try reader.existingObject(with: chatID) as! Chat
                try checkEqual(Set(chat.messages.map(\.text)), ["m0", "m1"], "stored")
            }
        },
    ]
}
