import Foundation
import ObjectGraph

/// What objects-did-change says when changes are thrown away: a rollback reports what it
/// undid of what observers were told, and a reset that every object is invalid (Core Data's
/// `NSInvalidatedAllObjectsKey`), so that a list kept from the notifications stays right.
extension ContextScenarios {
    static let discardEvents: [ConformanceScenario] = [
        ConformanceScenario("context.notifications.rollbackReportsWhatItUndid") { env in
            let ids = try env.seed { setup in
                ["Ann", "Bob", "Cy"].map { name -> ManagedObject in let s = Student(context: setup); s.name = name; return s }
            }
            let context = env.newContext()
            let log = NotificationLog()
            let observer = log.observeObjectsDidChange(of: context)
            defer { NotificationCenter.default.removeObserver(observer) }
            let (announced, unannounced) = try context.performAndWait {
                let students = try ids.map { try context.existingObject(with: $0) as! Student }
                let announced = Student(context: context); announced.name = "New, announced"
                try context.processPendingChanges()
                students[0].name = "Ann, changed"
                context.delete(students[1])
                try context.processPendingChanges()
                // This event's changes were never announced: the rollback reports none of them
                // as a change of its own, only what it shows again.
                let unannounced = Student(context: context); unannounced.name = "New, unannounced"
                students[2].name = "Cy, changed"
                _ = log.take()
                context.rollback()
                return (announced.objectID, unannounced.objectID)
            }
            let entries = log.take()
            try checkEqual(entries.count, 1, "the rollback posts one notification (and the block's end none): \(entries)")
            guard let note = entries.first else { return }
            try checkEqual(note.deleted, [announced], "an announced insert leaves as a deletion; one of the current event is not named")
            try check(!note.deleted.contains(unannounced) && !note.inserted.contains(unannounced), "the unannounced insert is in no set")
            try checkEqual(note.inserted, [ids[1]], "an announced deletion comes back as an insert")
            try checkEqual(note.refreshed, [ids[0], ids[2]], "reverted updates are refreshed, announced or not")
            try check(note.updated.isEmpty, "nothing is left updated")
            try context.performAndWait {
                try check(!context.hasChanges, "the rollback discarded everything")
                context.rollback()
            }
            try checkEqual(log.take().count, 0, "a rollback with nothing to discard posts nothing")
        },
        ConformanceScenario("context.notifications.rollbackKeepsEarlierRefreshOfTheEvent") { env in
            let ids = try env.seed { setup in
                ["Ann", "Bob"].map { name -> ManagedObject in let s = Student(context: setup); s.name = name; return s }
            }
            let context = env.newContext()
            let log = NotificationLog()
            let observer = log.observeObjectsDidChange(of: context)
            defer { NotificationCenter.default.removeObserver(observer) }
            try context.performAndWait {
                let students = try ids.map { try context.existingObject(with: $0) as! Student }
                _ = students.map(\.name)
                try context.processPendingChanges()
                _ = log.take()
                // The refresh is announced by the notification ending this event; the rollback
                // ends the event instead, so it must carry the refresh along.
                context.refresh(students[0], mergeChanges: false)
                students[1].name = "Bob, changed"
                context.rollback()
                try checkEqual(log.take().map(\.refreshed), [[ids[0], ids[1]]],
                               "the rollback lists the earlier refresh with the update it reverted")
                context.refresh(students[0], mergeChanges: false)
                context.rollback()
                try checkEqual(log.take().map(\.refreshed), [[ids[0]]],
                               "a rollback with only a refresh in the event still reports it")
            }
            try checkEqual(log.take().count, 0, "the block's end posts nothing more")
        },
        ConformanceScenario("context.notifications.resetInvalidatesAll") { env in
            let ids = try env.seed { setup in
                let s = Student(context: setup); s.name = "Ann"
                return [s]
            }
            let context = env.newContext()
            let log = NotificationLog()
            let observer = log.observeObjectsDidChange(of: context)
            defer { NotificationCenter.default.removeObserver(observer) }
            let student = try context.performAndWait {
                let student = try context.existingObject(with: ids[0]) as! Student
                student.name = "Changed"
                _ = Student(context: context)
                try context.processPendingChanges()
                _ = log.take()
                student.age = 7
                context.reset()
                return student
            }
            let entries = log.take()
            try checkEqual(entries.count, 1, "the reset posts one notification (and the block's end none): \(entries)")
            try check(entries.first?.invalidatedAll == true, "it says every object was invalidated")
            try check(entries.first.map { $0.inserted.isEmpty && $0.updated.isEmpty && $0.deleted.isEmpty && $0.refreshed.isEmpty } == true,
                      "and lists nothing one by one: \(entries)")
            try context.performAndWait {
                try check(context.registeredObject(for: student.objectID) == nil, "the held object is detached")
                context.reset()
            }
            try checkEqual(log.take().count, 0, "resetting a context with no objects posts nothing")
        },
    ]
}
