import Foundation
import ObjectGraph
import ObjectGraphConformance
import Testing

private let auditBackends = allBackends.filter { ["memory", "sqlite", "binary", "lmdb"].contains($0.name) }

private func runAuditNestedUndo(_ name: String, _ body: @escaping @Sendable (ScenarioEnvironment) throws -> Void) {
    for backend in auditBackends {
        let outcome = ConformanceKit.run(ConformanceScenario(name, body: body), on: backend)
        if case .failed(let message) = outcome { Issue.record("\(backend.name): \(message)") }
    }
}

/// A child's save into a parent with an undo stack is undone whole: values, inserts and both
/// ends of every relationship (an audit: only the to-ones were recorded, so undo moved an
/// object back without its inverse and kept the child's other changes).
@Suite("AuditA child save undone in parent")
struct AuditANestedUndoInParentTests {
    @Test func childSaveUndoneInParent() {
        runAuditNestedUndo("audit.childSaveUndoneInParent") { env in
            let setup = env.newContext()
            let (aID, bID, mID) = try setup.performAndWait {
                let a = Chat(context: setup); a.title = "A"
                let b = Chat(context: setup); b.title = "B"
                let m = Message(context: setup); m.text = "m"; m.chat = a
                try setup.save()
                return (a.objectID, b.objectID, m.objectID)
            }
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
        }
    }
}
