import Foundation
import ObjectGraph
import Synchronization

/// What objects-did-change says about refreshes: as Core Data's `NSRefreshedObjectsKey`, the
/// refreshed objects are listed (``ObjectsDidChange/refreshed``) in the notification that
/// ends the event in which they were refreshed.
extension ContextScenarios {
    static let refreshEvents: [ConformanceScenario] = [
        ConformanceScenario("context.refresh.notificationListsTheRefreshedObjects") { env in
            let ids = try env.seed { setup in
                ["Ann", "Bob", "Cy"].map { name -> ManagedObject in let s = Student(context: setup); s.name = name; return s }
            }
            let context = env.newContext()
            let notes = SharedValue<[(refreshed: Set<ObjectID>, updated: Set<ObjectID>)]>([])
            let observer = NotificationCenter.default.addObserver(forName: .objectGraphObjectsDidChange, object: context, queue: nil) { note in
                guard let changes = note.userInfo?[ObjectsDidChange.key] as? ObjectsDidChange else { return }
                let entry = (Set(changes.refreshed.map(\.objectID)), Set(changes.updated.map(\.objectID)))
                notes.update { $0.append(entry) }
            }
            defer { NotificationCenter.default.removeObserver(observer) }
            let students = try context.performAndWait {
                let students = try ids.map { try context.existingObject(with: $0) as! Student }
                students[0].name = "Mine"
                return students
            }
            notes.update { $0 = [] }
            context.performAndWait {
                context.refresh(students[1], mergeChanges: false)
                context.refresh(students[0], mergeChanges: true)
            }
            try checkEqual(notes.get().count, 1, "one notification ends the block that refreshed")
            try checkEqual(notes.get().first?.refreshed, [ids[0], ids[1]], "it lists the refreshed objects, the one whose changes were merged too")
            try context.performAndWait {
                try checkEqual(students[0].name, "Mine", "mergeChanges kept the change")
                students[0].name = "Again"
                context.refresh(students[0], mergeChanges: false)
            }
            try checkEqual(notes.get().last?.refreshed, [ids[0]], "refreshing without merging lists the object")
            try checkEqual(notes.get().last?.updated, [], "and no longer as updated: its changes were dropped in this event")
            notes.update { $0 = [] }
            let inserted = try context.performAndWait {
                let dan = Student(context: context); dan.name = "Dan"
                try context.processPendingChanges()
                notes.update { $0 = [] }
                context.refreshAllObjects()
                return dan.objectID
            }
            try checkEqual(notes.get().count, 1, "refreshAllObjects: one notification")
            try checkEqual(notes.get().first?.refreshed, Set(ids), "listing every registered stored object")
            try check(notes.get().first?.refreshed.contains(inserted) == false, "but not an inserted one (the store has nothing to refresh it from)")
            notes.update { $0 = [] }
            context.performAndWait {}
            try checkEqual(notes.get().count, 0, "a block with nothing refreshed or changed posts nothing")
        },
    ]
}
