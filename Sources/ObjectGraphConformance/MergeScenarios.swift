import Foundation
import ObjectGraph
import Synchronization

/// Merging another context's save: by hand from the did-save payload, or automatically; merged
/// updates keep the receiver's unsaved changes; merged deletes make objects inaccessible with a
/// thrown error.
enum MergeScenarios {
    static let all: [ConformanceScenario] = basic + history + events + deletedElsewhere

    static let basic: [ConformanceScenario] = [
        ConformanceScenario("merge.manual.updateKeepsLocalChanges") { env in
            let id = try ConflictScenarios.seedStudent(env)
            let (writer, reader) = (env.newContext(), env.newContext())
            let ada: Student = try ConflictScenarios.load(id, in: reader)
            reader.performAndWait { ada.age = 40 }
            let payload = try didSave(writer) {
                (writer.object(with: id) as! Student).name = "Ann"
                try writer.save()
            }
            try checkEqual(payload.updated, [id], "the payload lists the update")
            let refreshed = SharedValue<Set<ObjectID>>([])
            let observer = NotificationCenter.default.addObserver(forName: .objectGraphObjectsDidChange, object: reader, queue: nil) { note in
                let ids = (note.userInfo?[ObjectsDidChange.key] as? ObjectsDidChange)?.refreshed.map(\.objectID) ?? []
                refreshed.update { $0.formUnion(ids) }
            }
            defer { NotificationCenter.default.removeObserver(observer) }
            try reader.performAndWait {
                try reader.mergeChanges(fromContextDidSave: payload)
                try checkEqual(refreshed.get(), [id], "objects-did-change lists the refreshed object")
                try check(!ada.isFault, "the merged object stays loaded")
                try checkEqual(ada.name, "Ann", "the merged value")
                try checkEqual(ada.age, 40, "the receiver's unsaved change survives")
                try check(ada.isUpdated && reader.hasChanges, "and is still unsaved")
                try reader.save()
            }
            let stored = try ConflictScenarios.storedStudent(env, id)
            try checkEqual(stored.name, "Ann", "both changes stored: name")
            try checkEqual(stored.age, 40, "both changes stored: age (no conflict after merging)")
        },
        ConformanceScenario("merge.manual.deleteMakesObjectsInaccessible") { env in
            let setup = env.newContext()
            let (chatID, messageID) = try setup.performAndWait {
                let chat = Chat(context: setup); chat.title = "c"
                let m = Message(context: setup); m.text = "hi"; m.chat = chat
                try setup.save()
                return (chat.objectID, m.objectID)
            }
            let (writer, reader) = (env.newContext(), env.newContext())
            let (chat, message) = try reader.performAndWait {
                let chat = try reader.existingObject(with: chatID) as! Chat
                let message = chat.messages.first!
                try checkEqual(message.text, "hi", "loaded")
                message.text = "edited here"
                return (chat, message)
            }
            let payload = try didSave(writer) {
                writer.delete(writer.object(with: chatID))
                try writer.save()
            }
            try checkEqual(payload.deleted, [chatID, messageID], "the payload lists the cascade")
            let invalidated = SharedValue<Set<ObjectID>>([])
            let observer = NotificationCenter.default.addObserver(forName: .objectGraphObjectsDidChange, object: reader, queue: nil) { note in
                let ids = (note.userInfo?[ObjectsDidChange.key] as? ObjectsDidChange)?.invalidated.map(\.objectID) ?? []
                invalidated.update { $0.formUnion(ids) }
            }
            defer { NotificationCenter.default.removeObserver(observer) }
            try reader.performAndWait {
                try reader.mergeChanges(fromContextDidSave: payload)
                try checkEqual(invalidated.get(), [chatID, messageID], "objects-did-change lists the invalidated objects")
                for object in [chat, message] as [ManagedObject] {
                    let error = try checkThrows(ObjectGraphError.self, "touching a merged delete") { _ = try object.value(forKey: object is Chat ? "title" : "text") }
                    try check(error.code == .objectInaccessible || error.code == .objectNotFound, "a clear code, got \(error.code)")
                }
                try check(!reader.hasChanges, "the unsaved edit of a deleted object is dropped")
                let error = try checkThrows(ObjectGraphError.self, "existingObject for the deleted ID") { _ = try reader.existingObject(with: messageID) }
                try checkEqual(error.code, .objectNotFound, "code")
                try checkEqual(try reader.count(for: FetchRequest<Message>()), 0, "fetches agree")
                try reader.save()
            }
        },
        ConformanceScenario("merge.automatic.fromOtherContexts") { env in
            let id = try ConflictScenarios.seedStudent(env)
            let (writer, reader) = (env.newContext(), env.newContext())
            reader.automaticallyMergesChangesFromParent = true
            try check(reader.automaticallyMergesChangesFromParent, "the flag reads back")
            let ada: Student = try ConflictScenarios.load(id, in: reader)
            let (bobID, _) = try writer.performAndWait {
                (writer.object(with: id) as! Student).age = 37
                let bob = Student(context: writer); bob.name = "Bob"
                try writer.save()
                return (bob.objectID, 0)
            }
            // The merge was scheduled on the reader's queue before this block.
            try reader.performAndWait {
                try checkEqual(ada.age, 37, "the loaded object shows the other save without a refresh")
                try checkEqual((try reader.existingObject(with: bobID) as! Student).name, "Bob", "the insert resolves")
            }
            try writer.performAndWait {
                writer.delete(writer.object(with: id))
                try writer.save()
            }
            try reader.performAndWait {
                let error = try checkThrows(ObjectGraphError.self, "a merged delete") { _ = try ada.value(forKey: "name") }
                try check(error.code == .objectInaccessible || error.code == .objectNotFound, "a clear code, got \(error.code)")
            }
            reader.automaticallyMergesChangesFromParent = false
            try writer.performAndWait {
                (writer.object(with: bobID) as! Student).age = 9
                try writer.save()
            }
            try reader.performAndWait {
                let bob = try reader.existingObject(with: bobID) as! Student
                try check(bob.age == nil || bob.age == 9, "read from the store or cache")
                try check(reader.registeredObject(for: bobID) === bob, "registered")
            }
        },
        ConformanceScenario("merge.idsCrossThreads") { env in
            let writer = env.newContext()
            let ids = try writer.performAndWait {
                let tags = (0..<5).map { i in let tag = Tag(context: writer); tag.label = "t\(i)"; return tag }
                try writer.obtainPermanentIDs(for: tags)
                let ids = tags.map(\.objectID)
                try writer.save()
                try checkEqual(tags.map(\.objectID), ids, "IDs obtained before the save are kept by it")
                return ids
            }
            let results = SharedValue<[String]>([])
            let readers = (0..<4).map { env.newContext("reader\($0)") }
            DispatchQueue.concurrentPerform(iterations: 4) { index in
                let reader = readers[index]
                let labels = reader.performAndWait { ids.compactMap { try? (reader.existingObject(with: $0) as! Tag).label } }
                results.update { $0.append(labels.joined(separator: ",")) }
            }
            try checkEqual(results.get(), Array(repeating: "t0,t1,t2,t3,t4", count: 4), "every thread resolves every ID")
        },
    ]

    /// Runs `body` on `context`'s queue and returns the did-save payload it posted.
    static func didSave(_ context: ManagedObjectContext, _ body: () throws -> Void) throws -> ContextDidSave {
        let payload = SharedValue<ContextDidSave?>(nil)
        let observer = NotificationCenter.default.addObserver(forName: .objectGraphContextDidSave, object: context, queue: nil) { note in
            let saved = note.userInfo?[ContextDidSave.key] as? ContextDidSave
            payload.set(saved)
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try context.performAndWait(body)
        guard let saved = payload.get() else {
            throw ScenarioFailure(message: "no did-save notification with a ContextDidSave payload", file: #filePath, line: #line)
        }
        return saved
    }
}

/// A value written on one thread and read on another.
final class SharedValue<Value: Sendable>: Sendable {
    private let mutex: Guarded<Value>
    init(_ value: Value) { mutex = Guarded(value) }
    func get() -> Value { mutex.withLock { $0 } }
    func set(_ value: Value) { mutex.withLock { $0 = value } }
    func update<R: Sendable>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}
