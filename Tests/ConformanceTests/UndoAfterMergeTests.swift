import Foundation
import ObjectGraph
import ObjectGraphConformance
import Testing

private let auditBackends = allBackends.filter { ["memory", "sqlite", "binary", "lmdb"].contains($0.name) }

private func runAuditUndoMerge(_ name: String, _ body: @escaping @Sendable (ScenarioEnvironment) throws -> Void) {
    for backend in auditBackends {
        let outcome = ConformanceKit.run(ConformanceScenario(name, body: body), on: backend)
        if case .failed(let message) = outcome { Issue.record("\(backend.name): \(message)") }
    }
}

private final class BoxUndoMerge<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}

private func didSaveUndoMerge(_ context: ManagedObjectContext, _ body: () throws -> Void) throws -> ContextDidSave {
    let payload = BoxUndoMerge<ContextDidSave?>(nil)
    let observer = NotificationCenter.default.addObserver(forName: .objectGraphContextDidSave, object: context, queue: nil) { note in
        payload.value = note.userInfo?[ContextDidSave.key] as? ContextDidSave
    }
    defer { NotificationCenter.default.removeObserver(observer) }
    try context.performAndWait(body)
    return payload.value!
}

private func undoableUndoMerge(_ env: ScenarioEnvironment) -> ManagedObjectContext {
    let context = env.newContext()
    context.undoStack = ContextUndoStack()
    return context
}

private func seedStudentUndoMerge(_ env: ScenarioEnvironment) throws -> ObjectID {
    let context = env.newContext()
    return try context.performAndWait {
        let ada = Student(context: context); ada.name = "Ada"; ada.age = 36
        try context.save()
        return ada.objectID
    }
}

/// Undo after a merge takes back this context's changes only: not the values, members or
/// deletions another context saved (an audit: undo restored whole pre-merge states).
@Suite("AuditA undo after merge")
struct AuditAUndoAfterMergeTests {
    @Test func undoAfterMergeKeepsMergedAttribute() {
        runAuditUndoMerge("audit.undoAfterMergeKeepsMergedAttribute") { env in
            let id = try seedStudentUndoMerge(env)
            let context = undoableUndoMerge(env)
            let ada = try context.performAndWait {
                let ada = try context.existingObject(with: id) as! Student
                ada.name = "Ann"
                try context.processPendingChanges()
                return ada
            }
            let writer = env.newContext()
            let payload = try didSaveUndoMerge(writer) {
                (try writer.existingObject(with: id) as! Student).age = 50
                try writer.save()
            }
            try context.performAndWait {
                try context.mergeChanges(fromContextDidSave: payload)
                try checkEqual(ada.age, 50, "merged")
                try context.undo()
                try checkEqual(ada.name, "Ada", "own change undone")
                try checkEqual(ada.age, 50, "the merged value stays after undo")
                ada.name = "Bea"
                try context.save()
            }
            let verify = env.newContext()
            try verify.performAndWait {
                let s = try verify.existingObject(with: id) as! Student
                try checkEqual(s.name, "Bea", "saved name")
                try checkEqual(s.age, 50, "merged age kept in store")
            }
        }
    }

    @Test func undoAfterMergeKeepsMergedMembers() {
        runAuditUndoMerge("audit.undoAfterMergeKeepsMergedMembers") { env in
            let setup = env.newContext()
            let chatID = try setup.performAndWait {
                let chat = Chat(context: setup); chat.title = "c"
                let m = Message(context: setup); m.text = "m0"; m.chat = chat
                try setup.save()
                return chat.objectID
            }
            let context = undoableUndoMerge(env)
            let chat = try context.performAndWait {
                let chat = try context.existingObject(with: chatID) as! Chat
                try checkEqual(chat.messages.count, 1, "loaded")
                chat.title = "renamed"
                try context.processPendingChanges()
                return chat
            }
            let writer = env.newContext()
            let payload = try didSaveUndoMerge(writer) {
                let c = try writer.existingObject(with: chatID) as! Chat
                let m = Message(context: writer); m.text = "m1"; m.chat = c
                try writer.save()
            }
            try context.performAndWait {
                try context.mergeChanges(fromContextDidSave: payload)
                try checkEqual(chat.messages.count, 2, "merged member")
                try context.undo()
                try checkEqual(chat.title, "c", "title undone")
                try checkEqual(chat.messages.count, 2, "the member added elsewhere stays after undo")
                for m in chat.messages { try checkEqual(m.chat, chat, "inverse") }
            }
        }
    }

    @Test func undoChangeOfObjectDeletedByMerge() {
        runAuditUndoMerge("audit.undoChangeOfObjectDeletedByMerge") { env in
            let id = try seedStudentUndoMerge(env)
            let context = undoableUndoMerge(env)
            let ada = try context.performAndWait {
                let ada = try context.existingObject(with: id) as! Student
                ada.name = "Ann"
                try context.processPendingChanges()
                return ada
            }
            let writer = env.newContext()
            let payload = try didSaveUndoMerge(writer) {
                writer.delete(try writer.existingObject(with: id))
                try writer.save()
            }
            try context.performAndWait {
                try context.mergeChanges(fromContextDidSave: payload)
                try context.undo()
                try check(ada.managedObjectContext == nil, "a merged delete stays out of the context after undo (in context: \(ada.managedObjectContext != nil))")
                try check(!context.hasChanges, "nothing to save, has: \(context.updatedObjects.count) updated")
                try context.save()
            }
            let verify = env.newContext()
            try verify.performAndWait { try checkEqual(try verify.count(for: FetchRequest<Student>()), 0, "no resurrection") }
        }
    }
}
