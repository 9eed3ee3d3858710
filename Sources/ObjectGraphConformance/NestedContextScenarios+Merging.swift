import Foundation
import ObjectGraph

/// Merging a child context's save: into its own parent (which holds the changes already) and
/// into a sibling child (which reads them from the parent).
extension NestedContextScenarios {
    static let merging: [ConformanceScenario] = [
        // The parent merged its child's save as another context's stored one: the child's
        // deletion, pending in the parent, was dropped as if its row were gone, and the
        // parent's save then left the message stored.
        ConformanceScenario("nested.parentMergingItsChildsSaveKeepsItsChanges") { env in
            let parent = env.newContext("parent")
            let ids = try env.seed { setup -> [ManagedObject] in
                let chat = Chat(context: setup); chat.title = "c"
                let message = Message(context: setup); message.text = "m"; message.chat = chat
                let tag = Tag(context: setup); tag.label = "old"
                return [chat, message, tag]
            }
            let child = parent.newChildContext(name: "child")
            let payload = try MergeScenarios.didSave(child) {
                let tag = Tag(context: child); tag.label = "new"
                (try child.existingObject(with: ids[2]) as! Tag).label = "changed"
                child.delete(try child.existingObject(with: ids[1]))
                try child.save()
            }
            try parent.performAndWait {
                try parent.mergeChanges(fromContextDidSave: payload)
                try checkEqual(parent.insertedObjects.count, 1, "the child's insert is still the parent's")
                try checkEqual(parent.deletedObjects.map(\.objectID), [ids[1]], "the child's deletion is still pending in the parent")
                try parent.save()
            }
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(Set(try fresh.fetch(FetchRequest<Tag>()).map(\.label)), ["new", "changed"], "the child's insert and update stored")
                try checkEqual(try fresh.count(for: FetchRequest<Message>()), 0, "the child's deletion stored")
                try checkEqual((try fresh.existingObject(with: ids[0]) as! Chat).messages.count, 0, "and its inverse")
            }
        },
        // A sibling's save carries permanent IDs of objects only the parent holds (unsaved
        // there); the merging child reads them from the parent, and, once the parent has
        // discarded them, reads them as objects deleted elsewhere: no crash, no other object.
        ConformanceScenario("nested.siblingMergesAChildsInsert") { env in
            let parent = env.newContext("parent")
            let (writer, reader) = (parent.newChildContext(name: "writer"), parent.newChildContext(name: "reader"))
            func insert(_ label: String) throws -> (ContextDidSave, ObjectID?) {
                var id: ObjectID?
                let payload = try MergeScenarios.didSave(writer) {
                    let tag = Tag(context: writer); tag.label = label
                    try writer.save()
                    id = tag.objectID
                }
                return (payload, id)
            }
            let (kept, keptID) = try insert("kept")
            guard let keptID else { return try check(false, "the save gave the insert an ID") }
            try check(kept.insertedIDs.allSatisfy { !$0.isTemporary }, "a child's save names its inserts by permanent IDs")
            try reader.performAndWait {
                try reader.mergeChanges(fromContextDidSave: kept)
                let tag = try reader.existingObject(with: keptID) as! Tag
                try checkEqual(tag.label, "kept", "the sibling reads the insert from the parent")
                try checkEqual(try reader.fetch(FetchRequest<Tag>()).map(\.objectID), [keptID], "and fetches it")
                tag.label = "kept, edited"
                try reader.save()
            }
            let (dropped, droppedID) = try insert("dropped")
            guard let droppedID else { return try check(false, "the save gave the insert an ID") }
            try parent.performAndWait {
                parent.delete(try parent.existingObject(with: droppedID))
                try parent.save()
            }
            try reader.performAndWait {
                try reader.mergeChanges(fromContextDidSave: dropped)
                let tag = reader.object(with: droppedID) as! Tag
                try checkEqual(tag.label, "", "an insert the parent discarded reads empty")
                try check(tag.isDeleted, "as an object deleted elsewhere")
                try checkEqual(try reader.fetch(FetchRequest<Tag>()).map(\.label), ["kept, edited"], "fetches find only the kept one")
                try reader.save()
                try check(reader.registeredObjects.allSatisfy { $0.objectID != droppedID }, "the save let the discarded one go")
            }
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(try fresh.fetch(FetchRequest<Tag>()).map(\.label), ["kept, edited"], "stored")
            }
        },
    ]
}
