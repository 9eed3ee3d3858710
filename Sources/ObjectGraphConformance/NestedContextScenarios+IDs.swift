import Foundation
import ObjectGraph

/// The temporary ID of a parent's unsaved object, read by the app and handed to a child: the
/// way a Core Data user edits a new object in a scratch context.
extension NestedContextScenarios {
    static let ids: [ConformanceScenario] = [
        // The child did not ask its parent about a temporary ID ("a temporary ID that was
        // never saved"), and once a child had looked at the parent's objects (which gives them
        // permanent IDs), the parent did not find its own object by that ID either (an audit).
        ConformanceScenario("nested.childResolvesParentsTemporaryID") { env in
            let parent = env.newContext("parent")
            let (tag, temporaryID) = parent.performAndWait {
                let tag = Tag(context: parent); tag.label = "draft"
                return (tag, tag.objectID)
            }
            try check(temporaryID.isTemporary, "an unsaved object's ID is temporary")
            let child = parent.newChildContext(name: "editor")
            try child.performAndWait {
                let edited = try child.existingObject(with: temporaryID)
                try checkEqual(try edited.value(forKey: "label") as? String, "draft", "the child finds the parent's unsaved object")
                try checkEqual(child.object(with: temporaryID), edited, "object(with:) gives the same object")
                try edited.setValue("final", forKey: "label")
                try child.save()
            }
            try parent.performAndWait {
                try check(try parent.existingObject(with: temporaryID) === tag, "the parent still finds its object by the temporary ID")
                try checkEqual(tag.label, "final", "the child's edit")
            }
            let grandchild = child.newChildContext(name: "grandchild")
            try grandchild.performAndWait {
                try checkEqual(try grandchild.existingObject(with: temporaryID).value(forKey: "label") as? String, "final", "a grandchild too")
            }
            try parent.performAndWait {
                try parent.save()
                // As in a context without children: once saved, a temporary ID names nothing.
                let error = try checkThrows(ObjectGraphError.self, "the temporary ID after the save") { _ = try parent.existingObject(with: temporaryID) }
                try checkEqual(error.code, .objectNotFound, "code")
            }
            let fresh = env.newContext()
            try fresh.performAndWait { try checkEqual(try fresh.fetch(FetchRequest<Tag>()).map(\.label), ["final"], "stored") }
        },
        ConformanceScenario("nested.parentsTemporaryIDResolvesAfterAChildLooked") { env in
            let parent = env.newContext("parent")
            let temporaryID = parent.performAndWait {
                let tag = Tag(context: parent); tag.label = "draft"
                return tag.objectID
            }
            let child = parent.newChildContext()
            let seen = try child.performAndWait { try child.fetch(FetchRequest<Tag>()).map(\.objectID) }
            try check(seen.count == 1 && !seen[0].isTemporary, "the child's fetch sees the object with a permanent ID")
            try child.performAndWait {
                try checkEqual(try child.existingObject(with: temporaryID).objectID, seen[0], "the temporary ID names the same object in the child")
            }
            try parent.performAndWait {
                try checkEqual(try parent.existingObject(with: temporaryID).objectID, seen[0], "and in the parent")
            }
            parent.performAndWait { parent.rollback() }
            try child.performAndWait {
                child.reset()
                let error = try checkThrows(ObjectGraphError.self, "after the parent's rollback") { _ = try child.existingObject(with: temporaryID) }
                try checkEqual(error.code, .objectNotFound, "code")
            }
        },
        // The child hands the permanent ID of its new object to the parent before saving;
        // the parent's fault for it finds no record yet. The child's save then made a second
        // object for the ID in the parent, leaving the app's fault dead (an audit).
        ConformanceScenario("nested.childsSaveFillsTheParentsEarlyFault") { env in
            let parent = env.newContext("parent")
            parent.undoStack = ContextUndoStack()
            let child = parent.newChildContext(name: "child")
            // (The child's insert holds its object until the save.)
            let id = try child.performAndWait {
                let tag = Tag(context: child); tag.label = "new"
                try child.obtainPermanentIDs(for: [tag])
                return tag.objectID
            }
            let early = try parent.performAndWait {
                let early = parent.object(with: id)
                let error = try checkThrows(ObjectGraphError.self, "before the child's save") { _ = try parent.existingObject(with: id) }
                try checkEqual(error.code, .objectNotFound, "code")
                return early
            }
            try child.performAndWait { try child.save() }
            try parent.performAndWait {
                try check(try parent.existingObject(with: id) === early, "one object for the record: the parent's early fault")
                try checkEqual(try early.value(forKey: "label") as? String, "new", "it reads the child's values")
                try checkEqual(parent.insertedObjects, [early], "and is the parent's insert")
                try parent.undo()
                try check(parent.insertedObjects.isEmpty, "undo takes the insert back")
                try parent.redo()
                try checkEqual(parent.insertedObjects, [early], "redo")
                try checkEqual(try early.value(forKey: "label") as? String, "new", "with its values")
                try parent.save()
            }
            let fresh = env.newContext()
            try fresh.performAndWait { try checkEqual(try fresh.fetch(FetchRequest<Tag>()).map(\.label), ["new"], "stored once") }
        },
        // A fetch naming the parent's unsaved object by its temporary ID (`chat == %@`)
        // matched nothing in a child: the parent compared its objects' new permanent IDs with
        // it (an audit).
        ConformanceScenario("nested.childFetchesByParentsTemporaryID") { env in
            let parent = env.newContext("parent")
            let (chatID, tagID) = parent.performAndWait {
                let chat = Chat(context: parent); chat.title = "new"
                let message = Message(context: parent); message.text = "m"; message.chat = chat
                let tag = Tag(context: parent); tag.label = "t"
                return (chat.objectID, tag.objectID)
            }
            let child = parent.newChildContext(name: "child")
            try child.performAndWait {
                try checkEqual(try child.fetch(FetchRequest<Message>(predicate: .key("chat") == chatID)).map(\.text), ["m"], "chat == the temporary ID")
                try checkEqual(try child.count(for: FetchRequest<Tag>(predicate: try FetchPredicate(format: "self IN %@", [tagID]))), 1, "self IN [the temporary ID]")
                let reply = Message(context: child); reply.text = "reply"; reply.chat = (try child.existingObject(with: chatID) as! Chat)
                try checkEqual(Set(try child.fetch(FetchRequest<Message>(predicate: .key("chat") == chatID)).map(\.text)), ["m", "reply"], "with the child's own unsaved message too")
            }
            try parent.performAndWait {
                try checkEqual(try parent.count(for: FetchRequest<Message>(predicate: .key("chat") == chatID)), 1, "in the parent too")
            }
        },
    ]
}
