import Foundation
import ObjectGraph

/// Which objects a save calls `willSave` and `prepareForDeletion` on, what `changedValues`
/// reports, and what objects a reset detached say of themselves.
extension ContextScenarios {
    static let lifecycle: [ConformanceScenario] = [
        ConformanceScenario("context.hooks.willSaveReachesObjectsChangedInWillSave") { env in
            // Every object a save stores gets one willSave before it and one didSave after it,
            // those inserted, changed or deleted by another object's willSave included.
            let context = env.newContext()
            let (madeID, storedID) = try context.performAndWait {
                let stored = Probe(context: context)
                let doomed = Probe(context: context)
                let leaving = Probe(context: context)
                try context.save()
                let first = Probe(context: context)
                var made: Probe?
                first.onWillSave = { probe in
                    guard made == nil, let context = probe.managedObjectContext else { return }
                    made = Probe(context: context)
                    stored.name = "touched"
                }
                // A deleted object's willSave deletes another stored one.
                leaving.onWillSave = { probe in probe.managedObjectContext?.delete(doomed) }
                context.delete(leaving)
                try context.save()
                guard let made else { throw ScenarioFailure(message: "willSave made no object", file: #filePath, line: #line) }
                try checkEqual(made.hooks, ["awakeFromInsert", "willSave", "didSave"], "hooks of the object inserted in willSave")
                try checkEqual(made.saves, 1, "its own willSave change")
                try checkEqual(Array(stored.hooks.suffix(2)), ["willSave", "didSave"], "hooks of the object changed in willSave")
                try checkEqual(stored.saves, 2, "willSave ran once for each save of the changed object")
                try checkEqual(
                    Array(doomed.hooks.suffix(3)), ["prepareForDeletion", "willSave", "didSave(deleted)"],
                    "hooks of the object deleted in a deleted object's willSave")
                try checkEqual(first.hooks, ["awakeFromInsert", "willSave", "didSave"], "the first object's willSave ran once")
                try check(!context.hasChanges, "nothing left unsaved")
                return (made.objectID, stored.objectID)
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let made = try fresh.existingObject(with: madeID) as! Probe
                try checkEqual(made.saves, 1, "the willSave change of the object made in willSave reached the store")
                let stored = try fresh.existingObject(with: storedID) as! Probe
                try checkEqual(stored.name, "touched", "the change made in willSave reached the store")
                try checkEqual(try fresh.count(for: FetchRequest<Probe>()), 3, "stored, first and made remain")
            }
        },
        ConformanceScenario("context.changedValues.leaveOutTransients") { env in
            // As in Core Data, changedValues reports persistent properties only.
            let context = env.newContext()
            try context.performAndWait {
                let fresh = try context.insertObject(entityName: "AllTypes")
                try fresh.setValue("draft", forKey: "scratch")
                try fresh.setValue("kept", forKey: "string")
                try check(try fresh.changedValues()["scratch"] == nil, "an inserted object's transient is no unsaved change")
                try check(try fresh.changedValues()["string"] != nil, "its stored attribute is")
                try context.save()
                try fresh.setValue("again", forKey: "scratch")
                try check(fresh.isUpdated, "a transient change still makes the object updated, as in Core Data")
                try checkEqual(try fresh.changedValues().count, 0, "a transient change alone changes no persistent value")
                try fresh.setValue(7, forKey: "int32")
                try checkEqual(try fresh.changedValues().keys.sorted(), ["int32"], "only the stored attribute")
            }
        },
        ConformanceScenario("context.reset.detachedObjectsHaveNoChanges") { env in
            // A reset forgets every unsaved change, so no object it detaches still reports one.
            let context = env.newContext()
            try context.performAndWait {
                let changed = Probe(context: context)
                let deleted = Probe(context: context)
                try context.save()
                changed.name = "unsaved"
                context.delete(deleted)
                let inserted = Probe(context: context)
                let discarded = Probe(context: context)
                context.delete(discarded)
                context.reset()
                for (label, object) in [("inserted", inserted), ("changed", changed), ("deleted", deleted), ("inserted then deleted", discarded)] {
                    try check(!object.isInserted && !object.isUpdated && !object.isDeleted && !object.hasChanges,
                              "the \(label) object after reset: inserted \(object.isInserted), updated \(object.isUpdated), deleted \(object.isDeleted)")
                    try check(object.managedObjectContext == nil, "the \(label) object is detached")
                }
            }
        },
        ConformanceScenario("context.hooks.prepareForDeletionOnceWhenAConflictDeletesAgain") { env in
            // A deletion whose row another context changed meanwhile is applied again to the
            // stored row (store-trumps policy); it stays one deletion with one prepareForDeletion.
            let context = env.newContext()
            var held: Probe?
            let id = try context.performAndWait {
                let probe = Probe(context: context)
                try context.save()
                held = probe
                return probe.objectID
            }
            let other = env.newContext()
            try other.performAndWait {
                let probe = try other.existingObject(with: id) as! Probe
                probe.name = "changed elsewhere"
                try other.save()
            }
            try context.performAndWait {
                guard let probe = held else { return }
                context.mergePolicy = .storeTrumps
                context.delete(probe)
                try context.save()
                try checkEqual(
                    probe.hooks, ["awakeFromInsert", "willSave", "didSave", "prepareForDeletion", "willSave", "didSave(deleted)"],
                    "every hook once for the one deletion")
                try checkEqual(try context.count(for: FetchRequest<Probe>()), 0, "the deletion was stored")
            }
        },
    ]
}
