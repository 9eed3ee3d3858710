import Foundation
import ObjectGraph

/// Undo across saves meeting another context's saves: undo takes back this context's changes
/// only, and what it deletes follows the delete rules on what is related to it now.
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
        // An undone saved insert is a deletion, whose rules reach what is related to the
        // object now: a message another context added to the chat, merged in here. (Until
        // 2026-11-27 the undo only put back the states it recorded, the message kept naming
        // the chat, and the save left it naming a deleted row in the store.)
        ConformanceScenario("undo.afterSave.undoneInsertCascadesToMergedMembers") { env in
            let context = undoable(env)
            let (chat, chatID) = try context.performAndWait {
                let chat = Chat(context: context); chat.title = "c"
                try context.save()
                return (chat, chat.objectID)
            }
            let writer = env.newContext()
            let payload = try MergeScenarios.didSave(writer) {
                let m = Message(context: writer); m.text = "m1"; m.chat = (try writer.existingObject(with: chatID) as! Chat)
                try writer.save()
            }
            try context.performAndWait {
                try context.mergeChanges(fromContextDidSave: payload)
                try context.undo()
                try check(chat.isDeleted, "undoing the saved insert deletes the chat")
                try checkEqual(context.deletedObjects.compactMap { ($0 as? Message)?.text }, ["m1"], "and, by its cascade, the merged message")
                try context.save()
                try context.redo()
                try check(!chat.isDeleted && chat.messages.map(\.text) == ["m1"], "redo brings both back")
                try context.undo()
                try context.save()
            }
            let reader = env.newContext()
            try reader.performAndWait {
                try checkEqual(try reader.count(for: FetchRequest<Chat>()), 0, "the chat's deletion saved")
                try checkEqual(try reader.count(for: FetchRequest<Message>()), 0, "no message left naming it")
            }
        },
    ]
}
