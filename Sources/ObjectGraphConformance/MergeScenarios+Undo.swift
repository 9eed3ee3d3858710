import Foundation
import ObjectGraph
import OrderedCollections

/// Merges meeting a context's own history: its undo stack, its unsaved order of an ordered
/// to-many, and its coordinator's row cache when the save went through another coordinator.
extension MergeScenarios {
    static let history: [ConformanceScenario] = [
        // Undo takes back the context's own changes, not what a merge brought in: undo put
        // back whole pre-merge states (merged values and read versions, so the next save
        // conflicted; members added elsewhere; objects deleted elsewhere; an audit).
        ConformanceScenario("undo.afterMergeKeepsMergedValues") { env in
            let (id, context, ada) = try renamedInUndoableContext(env)
            let writer = env.newContext()
            let payload = try MergeScenarios.didSave(writer) {
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
        },
        ConformanceScenario("undo.afterMergeKeepsMergedMembers") { env in
            let setup = env.newContext()
            let chatID = try setup.performAndWait {
                let chat = Chat(context: setup); chat.title = "c"
                let m = Message(context: setup); m.text = "m0"; m.chat = chat
                try setup.save()
                return chat.objectID
            }
            let context = UndoScenarios.undoable(env)
            let chat = try context.performAndWait {
                let chat = try context.existingObject(with: chatID) as! Chat
                try checkEqual(chat.messages.count, 1, "loaded")
                chat.title = "renamed"
                try context.processPendingChanges()
                return chat
            }
            let writer = env.newContext()
            let payload = try MergeScenarios.didSave(writer) {
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
        },
        ConformanceScenario("undo.afterMergeDoesNotRestoreMergedDelete") { env in
            let (id, context, ada) = try renamedInUndoableContext(env)
            let writer = env.newContext()
            let payload = try MergeScenarios.didSave(writer) {
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
        },
        // A merge or refresh keeping changes keeps an unsaved reorder: the members were reloaded
        // in the store's order and the next save stored it (an audit).
        ConformanceScenario("merge.keepsUnsavedReorder") { env in
            let pID = try seedPlaylist(env)
            let reader = env.newContext()
            let p = try reader.performAndWait {
                let p = try reader.existingObject(with: pID) as! Playlist
                p.$tracks.move(from: 2, to: 0)
                let n = Track(context: reader); n.title = "n"
                p.$tracks.insert(n, at: 1)
                try checkEqual(p.tracks.map(\.title), ["t2", "n", "t0", "t1"], "local order")
                return p
            }
            let writer = env.newContext()
            let payload = try MergeScenarios.didSave(writer) {
                let p = try writer.existingObject(with: pID) as! Playlist
                p.name = "renamed"
                let w = Track(context: writer); w.title = "w"
                p.$tracks.add(w)
                try writer.save()
            }
            try reader.performAndWait {
                try reader.mergeChanges(fromContextDidSave: payload)
                try checkEqual(p.name, "renamed", "merged")
                try checkEqual(p.tracks.map(\.title), ["t2", "n", "t0", "t1", "w"], "local order kept after merge, the track added elsewhere after")
                try reader.save()
            }
            let verify = env.newContext()
            try verify.performAndWait {
                let p = try verify.existingObject(with: pID) as! Playlist
                try checkEqual(p.tracks.map(\.title), ["t2", "n", "t0", "t1", "w"], "stored order")
            }
        },
        ConformanceScenario("merge.refreshKeepsUnsavedReorder") { env in
            let pID = try seedPlaylist(env)
            let reader = env.newContext()
            try reader.performAndWait {
                let p = try reader.existingObject(with: pID) as! Playlist
                p.$tracks.move(from: 2, to: 0)
                reader.refresh(p, mergeChanges: true)
                try checkEqual(p.tracks.map(\.title), ["t2", "t0", "t1"], "local order kept after refresh")
                try reader.save()
            }
            let verify = env.newContext()
            try verify.performAndWait {
                let p = try verify.existingObject(with: pID) as! Playlist
                try checkEqual(p.tracks.map(\.title), ["t2", "t0", "t1"], "stored order")
            }
        },
        // A save through another coordinator on the same store: its merge drops this
        // coordinator's cached rows of the objects it updated (a fault showed the old values on
        // SQLite, whose rows are cached; an audit). Needs a store two coordinators can open.
        ConformanceScenario("merge.otherCoordinatorsSaveReachesFaults", requires: [.multiProcess]) { env in
            let id = try ConflictScenarios.seedStudent(env)
            let reader = env.newContext()
            let ada = try reader.performAndWait {
                let found = try reader.fetch(FetchRequest<Student>())
                return found[0]
            }
            let other = try PersistentContainer(model: env.model, stores: [env.backend.makeStore(env.directory)])
            defer { other.close() }
            let writer = other.newBackgroundContext()
            let payload = try MergeScenarios.didSave(writer) {
                (try writer.existingObject(with: id) as! Student).name = "Lee"
                try writer.save()
            }
            try reader.performAndWait {
                try reader.mergeChanges(fromContextDidSave: payload)
                try checkEqual(ada.name, "Lee", "a save of another coordinator merged into a registered fault")
            }
        },
        ConformanceScenario("merge.otherCoordinatorsSaveReachesReleasedObjects", requires: [.multiProcess]) { env in
            let id = try ConflictScenarios.seedStudent(env)
            let reader = env.newContext()
            try reader.performAndWait { try checkEqual((try reader.existingObject(with: id) as! Student).name, "Ada", "loaded, then let go") }
            let other = try PersistentContainer(model: env.model, stores: [env.backend.makeStore(env.directory)])
            defer { other.close() }
            let writer = other.newBackgroundContext()
            let payload = try MergeScenarios.didSave(writer) {
                (try writer.existingObject(with: id) as! Student).name = "Lee"
                try writer.save()
            }
            try reader.performAndWait {
                try reader.mergeChanges(fromContextDidSave: payload)
                try checkEqual((try reader.existingObject(with: id) as! Student).name, "Lee", "[\(env.backend.name)] after merging a save of another coordinator")
            }
        },
    ]

    /// Saves playlist "p" with tracks t0, t1, t2 in that order; returns its ID.
    static func seedPlaylist(_ env: ScenarioEnvironment) throws -> ObjectID {
        let setup = env.newContext()
        return try setup.performAndWait {
            let p = Playlist(context: setup); p.name = "p"
            p.tracks = OrderedSet((0..<3).map { i -> Track in let t = Track(context: setup); t.title = "t\(i)"; return t })
            try setup.save()
            return p.objectID
        }
    }

    /// A saved student Ada renamed Ann, unsaved and recorded, in a context with an undo stack.
    static func renamedInUndoableContext(_ env: ScenarioEnvironment) throws -> (id: ObjectID, context: ManagedObjectContext, ada: Student) {
        let id = try ConflictScenarios.seedStudent(env)
        let context = UndoScenarios.undoable(env)
        let ada = try context.performAndWait {
            let ada = try context.existingObject(with: id) as! Student
            ada.name = "Ann"
            try context.processPendingChanges()
            return ada
        }
        return (id, context, ada)
    }
}
