import Foundation
import ObjectGraph

/// Transient properties across the refreshes that keep unsaved changes: Core Data's
/// `refresh(_:mergeChanges: true)` "does not affect any transient properties", and its merges
/// of other contexts' saves and `shouldRefreshRefetchedObjects` refresh that way. (Before
/// 2026-11-27 they took the stored row's empty value for every transient not among the changed
/// slots, so a cache set in `awakeFromFetch()`, or a transient set before a save, read nil.)
extension ContextScenarios {
    static let transients: [ConformanceScenario] = [
        ConformanceScenario("context.transients.refetchedObjectsKeepThem") { env in
            let setup = env.newContext()
            let id = try setup.performAndWait { let probe = Probe(context: setup); try setup.save(); return probe.objectID }
            let context = env.newContext()
            let probe = try context.performAndWait { try context.existingObject(with: id) as! Probe }
            try context.performAndWait { try checkEqual(probe.greeting, "hello fresh", "awakeFromFetch set the transient") }
            let other = env.newContext()
            try other.performAndWait {
                (try other.existingObject(with: id) as! Probe).name = "renamed"
                try other.save()
            }
            try context.performAndWait {
                var request = FetchRequest<Probe>()
                request.shouldRefreshRefetchedObjects = true
                request.returnsObjectsAsFaults = false
                let fetched = try context.fetch(request)
                try check(fetched.count == 1 && fetched[0] === probe, "the same object")
                try checkEqual(probe.name, "renamed", "the stored value")
                try checkEqual(probe.greeting, "hello fresh", "the transient is left alone")
                try check(!probe.hasChanges && !context.hasChanges, "no change")
            }
        },
        ConformanceScenario("context.transients.mergeRefreshAndUndoKeepThem") { env in
            let setup = env.newContext()
            let id = try setup.performAndWait {
                let object = try setup.insertObject(entityName: "AllTypes")
                try object.setValue("a", forKey: "string")
                try setup.save()
                return object.objectID
            }
            let context = env.newContext()
            let object = try context.performAndWait {
                context.undoStack = ContextUndoStack()
                let object = try context.existingObject(with: id)
                try object.setValue("kept", forKey: "scratch")
                try context.save()  // the transient is no longer a change, and still held
                try object.setValue(Int16(3), forKey: "int16")
                try context.processPendingChanges()
                return object
            }
            let other = env.newContext()
            let payload = try MergeScenarios.didSave(other) {
                try other.existingObject(with: id).setValue("b", forKey: "string")
                try other.save()
            }
            try context.performAndWait {
                try context.mergeChanges(fromContextDidSave: payload)
                try checkEqual(try object.value(forKey: "string") as? String, "b", "the merged value")
                try checkEqual(try object.value(forKey: "int16") as? Int64, 3, "the unsaved change stays")
                try checkEqual(try object.value(forKey: "scratch") as? String, "kept", "a merge leaves the transient alone")
                context.refresh(object, mergeChanges: true)
                try checkEqual(try object.value(forKey: "scratch") as? String, "kept", "so does refresh(_:mergeChanges: true)")
                try context.undo()
                try checkEqual(try object.value(forKey: "int16") as? Int64, nil, "undone")
                try checkEqual(try object.value(forKey: "string") as? String, "b", "undo keeps the merged value")
                try checkEqual(try object.value(forKey: "scratch") as? String, "kept", "and the transient")
            }
        },
    ]
}
