import Foundation
import ObjectGraph
import Synchronization

/// Lifecycle hooks, notifications, and what one context sees of another's saves.
extension ContextScenarios {
    static let events: [ConformanceScenario] = [
        ConformanceScenario("context.hooks.awakeFromInsertAndWillSave") { env in
            let context = env.newContext()
            let id = try context.performAndWait {
                let probe = Probe(context: context)
                try checkEqual(probe.hooks, ["awakeFromInsert"], "hooks after insert")
                try checkEqual(probe.name, "fresh", "the value awakeFromInsert set")
                try check(probe.isInserted && !probe.isUpdated, "a change in awakeFromInsert is part of the insert")
                try context.save()
                try checkEqual(probe.hooks, ["awakeFromInsert", "willSave", "didSave"], "hooks after the first save")
                try checkEqual(probe.saves, 1, "the change willSave made")
                try check(!context.hasChanges && !probe.hasChanges, "a change made in willSave is saved with the rest")
                probe.name = "renamed"
                try context.save()
                try checkEqual(probe.saves, 2, "willSave ran again for the update")
                try context.save()
                try checkEqual(probe.hooks.filter { $0 == "willSave" }.count, 2, "a save with nothing to save calls no hooks")
                return probe.objectID
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let probe = try fresh.existingObject(with: id) as! Probe
                try checkEqual(probe.saves, 2, "the willSave changes reached the store")
                try checkEqual(probe.name, "renamed", "name")
                try checkEqual(probe.hooks, ["awakeFromFetch"], "a fetched object is awoken from fetch, not insert")
            }
        },
        ConformanceScenario("context.hooks.fetchFaultDeleteAndSave") { env in
            let setup = env.newContext()
            try setup.performAndWait {
                _ = Probe(context: setup)
                try setup.save()
            }
            let context = env.newContext()
            try context.performAndWait {
                let probe = try context.fetch(FetchRequest<Probe>())[0]
                try check(probe.isFault && probe.hooks.isEmpty, "a fault has not been awoken")
                _ = probe.name
                try checkEqual(probe.hooks, ["awakeFromFetch"], "firing the fault awakes it")
                // As in Core Data, attributes set in awakeFromFetch record no change.
                try checkEqual(probe.greeting, "hello fresh", "awakeFromFetch set the transient")
                try check(!probe.isUpdated && !context.hasChanges && probe.changedValues().isEmpty, "and left the object unchanged")
                _ = probe.saves
                try checkEqual(probe.hooks, ["awakeFromFetch"], "once")
                context.refresh(probe, mergeChanges: false)
                try checkEqual(probe.hooks.last, "didTurnIntoFault", "refresh turns it into a fault")
                _ = probe.name
                try checkEqual(probe.hooks.last, "awakeFromFetch", "and firing it again awakes it again")
                context.delete(probe)
                try checkEqual(probe.hooks.last, "prepareForDeletion", "delete calls prepareForDeletion")
                try context.save()
                try checkEqual(
                    probe.hooks,
                    ["awakeFromFetch", "willTurnIntoFault", "didTurnIntoFault", "awakeFromFetch", "prepareForDeletion", "willSave", "didSave(deleted)"],
                    "every hook, in order (didSave also runs for a saved deletion, with isDeleted true)")
                try checkEqual(probe.saves, 1, "willSave of a deleted object changes nothing")
                try checkEqual(try context.count(for: FetchRequest<Probe>()), 0, "deleted")
            }
        },
        ConformanceScenario("context.notifications.objectsDidChange") { env in
            let context = env.newContext()
            let log = NotificationLog()
            let observer = log.observeObjectsDidChange(of: context)
            defer { NotificationCenter.default.removeObserver(observer) }
            let (a, b) = context.performAndWait {
                let a = Tag(context: context); a.label = "a"
                let b = Tag(context: context); b.label = "b"
                return (a, b)
            }
            var entries = log.take()
            try checkEqual(entries.count, 1, "one notification for the perform block")
            try check(!entries[0].malformed, "userInfo holds ObjectsDidChange")
            try checkEqual(entries[0].inserted, context.performAndWait { [a.objectID, b.objectID] }, "inserted")
            try check(entries[0].updated.isEmpty && entries[0].deleted.isEmpty, "nothing else")
            let (savedA, savedB) = try context.performAndWait {
                try context.save()
                return (a.objectID, b.objectID)
            }
            _ = log.take()
            context.performAndWait {
                a.label = "a2"
                context.delete(b)
            }
            entries = log.take()
            try checkEqual(entries.count, 1, "one notification for the second block")
            try checkEqual(entries[0].updated, [savedA], "updated")
            try checkEqual(entries[0].deleted, [savedB], "deleted")
            try check(entries[0].inserted.isEmpty, "nothing inserted")
            context.performAndWait {}
            try checkEqual(log.take().count, 0, "no notification when nothing changed")
        },
        ConformanceScenario("context.notifications.objectsDidChange.combined") { env in
            // One object touched several ways in a block is reported as the changes combine:
            // an inserted object changed is only inserted; one inserted and deleted is in no
            // set (as in Core Data: no observer was told it existed), nor is what its delete
            // rules cascade to that was inserted with it; a rollback forgets what it undid, and
            // later changes are reported again.
            let context = env.newContext()
            let log = NotificationLog()
            let observer = log.observeObjectsDidChange(of: context)
            defer { NotificationCenter.default.removeObserver(observer) }
            let (tag, kept) = context.performAndWait {
                let kept = Tag(context: context); kept.label = "kept"
                kept.label = "kept, changed"
                let dropped = Tag(context: context); dropped.label = "dropped"
                context.delete(dropped)
                // The address is deleted by the student's cascade, in the same event.
                let student = Student(context: context); student.name = "Gone"
                let address = Address(context: context); address.street = "Gone St"
                student.address = address
                context.delete(student)
                return (kept, kept.objectID)
            }
            var entries = log.take()
            try checkEqual(entries.count, 1, "one notification for the block")
            try checkEqual(entries.first?.inserted ?? [], [kept], "the changed insert is only inserted; the deleted ones are not")
            try check(entries.first?.updated.isEmpty == true, "a change to an inserted object is no update: \(entries)")
            try checkEqual(entries.first?.deleted ?? [], [], "objects inserted and deleted (or cascaded to) in one event are not deleted")
            try context.performAndWait { try context.save() }
            _ = log.take()
            context.performAndWait {
                tag.label = "undone"
                context.rollback()
            }
            entries = log.take()
            try check(entries.allSatisfy { $0.updated.isEmpty }, "a rolled-back change is not reported: \(entries)")
            let saved = context.performAndWait {
                tag.label = "changed after the rollback"
                return tag.objectID
            }
            entries = log.take()
            try checkEqual(entries.count, 1, "the change after the rollback is reported")
            try checkEqual(entries.first?.updated ?? [], [saved], "updated after the rollback")
        },
        ConformanceScenario("context.notifications.changeOfAnAnnouncedInsertIsAnUpdate") { env in
            // An unsaved insert changed after a notification announced it is updated in the
            // event that changed it (its changedValuesForCurrentEvent() says so), and is still
            // no update in the event that inserted it.
            let context = env.newContext()
            let log = NotificationLog()
            let observer = log.observeObjectsDidChange(of: context)
            defer { NotificationCenter.default.removeObserver(observer) }
            let bob = try context.performAndWait {
                let bob = Student(context: context); bob.name = "Bob"
                bob.age = 1
                try context.processPendingChanges()
                return bob
            }
            var entries = log.take()
            try checkEqual(entries.first?.updated, [], "changed in the event that inserted it: only inserted")
            let id = try context.performAndWait {
                bob.age = 2
                try checkEqual(Set(try bob.changedValuesForCurrentEvent().keys), ["age"], "the event's change")
                return bob.objectID
            }
            entries = log.take()
            try checkEqual(entries.count, 1, "the change is posted: \(entries)")
            try checkEqual(entries.first?.updated, [id], "as an update")
            try checkEqual(entries.first?.inserted, [], "not as a second insert")
            context.performAndWait { context.delete(bob) }
            try checkEqual(log.take().first?.deleted, [id], "and its deletion, later, as a deletion")
        },
        ConformanceScenario("context.notifications.willSave") { env in
            // Core Data's NSManagedObjectContextWillSave: posted once a save has something to
            // save, before the objects' willSave and the did-save; what its observer changes
            // is saved too.
            let context = env.newContext()
            let order = SharedValue<[String]>([])
            let willSave = NotificationCenter.default.addObserver(forName: .objectGraphContextWillSave, object: context, queue: nil) { note in
                order.update { $0.append("willSave") }
                guard let saving = note.object as? ManagedObjectContext, order.get().count == 1 else { return }
                let tag = Tag(context: saving); tag.label = "added by an observer"
            }
            defer { NotificationCenter.default.removeObserver(willSave) }
            let didSave = NotificationCenter.default.addObserver(forName: .objectGraphContextDidSave, object: context, queue: nil) { _ in
                order.update { $0.append("didSave") }
            }
            defer { NotificationCenter.default.removeObserver(didSave) }
            try context.performAndWait {
                let probe = Probe(context: context)
                probe.onWillSave = { _ in order.update { $0.append("object.willSave") } }
                try context.save()
                try checkEqual(order.get(), ["willSave", "object.willSave", "didSave"], "the notification comes first, the did-save last")
                try check(!context.hasChanges, "the observer's insert was saved with the rest")
                try context.save()
                try checkEqual(order.get().count, 3, "a save with nothing to save posts nothing")
            }
            let reader = env.newContext()
            try reader.performAndWait {
                try checkEqual(try reader.fetch(FetchRequest<Tag>()).map(\.label), ["added by an observer"], "stored")
            }
        },
        ConformanceScenario("context.notifications.didSave") { env in
            let context = env.newContext()
            let log = NotificationLog()
            let observer = NotificationCenter.default.addObserver(forName: .objectGraphContextDidSave, object: context, queue: nil) { note in
                guard let saved = note.userInfo?[ContextDidSave.key] as? ContextDidSave else {
                    log.append(.init(inserted: [], updated: [], deleted: [], malformed: true))
                    return
                }
                log.append(.init(inserted: saved.inserted, updated: saved.updated, deleted: saved.deleted, malformed: false))
            }
            defer { NotificationCenter.default.removeObserver(observer) }
            let (a, b) = try context.performAndWait {
                let a = Tag(context: context); a.label = "a"
                let b = Tag(context: context); b.label = "b"
                try check(log.take().isEmpty, "nothing before the save")
                try context.save()
                return (a, b)
            }
            let (aID, bID) = context.performAndWait { (a.objectID, b.objectID) }
            var entries = log.take()
            try checkEqual(entries.count, 1, "one did-save notification")
            try check(!entries[0].malformed, "userInfo holds ContextDidSave")
            try checkEqual(entries[0].inserted, [aID, bID], "inserted IDs are the permanent ones")
            try check(!aID.isTemporary && !bID.isTemporary, "permanent")
            try check(entries[0].updated.isEmpty && entries[0].deleted.isEmpty, "nothing else")
            try context.performAndWait {
                a.label = "a2"
                context.delete(b)
                try context.save()
                try context.save()
            }
            entries = log.take()
            try checkEqual(entries.count, 1, "a save with nothing to save posts nothing")
            try checkEqual(entries[0].updated, [aID], "updated")
            try checkEqual(entries[0].deleted, [bID], "deleted")
            try check(entries[0].inserted.isEmpty, "nothing inserted")
        },
        ConformanceScenario("context.secondContextSeesSavedData") { env in
            let writer = env.newContext()
            let reader = env.newContext()
            var readerAda: Student?
            try reader.performAndWait {
                try checkEqual(try reader.count(for: FetchRequest<Student>()), 0, "empty at first")
            }
            let id = try writer.performAndWait {
                let ada = Student(context: writer); ada.name = "Ada"; ada.age = 36
                try writer.save()
                return ada.objectID
            }
            try reader.performAndWait {
                let students = try reader.fetch(FetchRequest<Student>())
                try checkEqual(students.map(\.objectID), [id], "the reader sees the writer's insert")
                try checkEqual(students[0].name, "Ada", "with its values")
                readerAda = students[0]
            }
            try writer.performAndWait {
                (writer.object(with: id) as! Student).age = 37
                let bob = Student(context: writer); bob.name = "Bob"
                try writer.save()
            }
            try reader.performAndWait {
                guard let ada = readerAda else { throw ScenarioFailure(message: "the reader's object is gone", file: #filePath, line: #line) }
                try checkEqual(ada.age, 36, "a loaded object keeps its values until refreshed")
                let names = try reader.fetch(FetchRequest<Student>(sortKeys: [SortKey("name")])).map(\.name)
                try checkEqual(names, ["Ada", "Bob"], "a new fetch sees the writer's second insert")
                try checkEqual(try reader.count(for: FetchRequest<Student>(predicate: .key("age") == 37)), 1, "and the store's values")
                reader.refresh(ada, mergeChanges: false)
                try checkEqual(ada.age, 37, "refresh shows the update")
            }
            try writer.performAndWait {
                writer.delete(writer.object(with: id))
                try writer.save()
            }
            try reader.performAndWait {
                try checkEqual(try reader.fetch(FetchRequest<Student>()).map(\.name), ["Bob"], "the reader sees the delete")
            }
        },
    ]
}

/// Collects what notifications carried, as `Sendable` values, from whichever thread posts.
final class NotificationLog: Sendable {
    struct Entry: Sendable {
        var inserted: Set<ObjectID>
        var updated: Set<ObjectID>
        var deleted: Set<ObjectID>
        var malformed: Bool
        var refreshed: Set<ObjectID> = []
        var invalidatedAll = false
    }

    private let entries = Guarded<[Entry]>([])

    func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }

    /// The entries so far, emptying the log.
    func take() -> [Entry] { entries.withLock { log in defer { log = [] }; return log } }

    /// Logs each objects-did-change notification `context` posts, until the returned
    /// observer is removed.
    func observeObjectsDidChange(of context: ManagedObjectContext) -> any NSObjectProtocol {
        NotificationCenter.default.addObserver(forName: .objectGraphObjectsDidChange, object: context, queue: nil) { note in
            guard let changes = note.userInfo?[ObjectsDidChange.key] as? ObjectsDidChange else {
                self.append(.init(inserted: [], updated: [], deleted: [], malformed: true))
                return
            }
            self.append(.init(
                inserted: Set(changes.inserted.map(\.objectID)), updated: Set(changes.updated.map(\.objectID)),
                deleted: Set(changes.deleted.map(\.objectID)), malformed: false,
                refreshed: Set(changes.refreshed.map(\.objectID)), invalidatedAll: changes.invalidatedAll))
        }
    }
}
