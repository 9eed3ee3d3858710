import Foundation
import ObjectGraph

/// Deleting an object its context let go because another save deleted its row: a
/// swipe-to-delete racing a background delete. The deletion is already done in the store, so
/// `delete(_:)` does nothing (before: it stopped the process, as for an object of another
/// context).
extension MergeScenarios {
    static let deletedElsewhere: [ConformanceScenario] = [
        ConformanceScenario("merge.deletingAnObjectAMergedDeletionLetGoIsDone") { env in
            let (ids, reader, held) = try studentsHeldByAReader(env)
            let writer = env.newContext()
            let deletion = try didSave(writer) {
                writer.delete(writer.object(with: ids[0]))
                try writer.save()
            }
            try reader.performAndWait {
                try reader.mergeChanges(fromContextDidSave: deletion)
                try check(held[0].managedObjectContext == nil, "the merge let the deleted object go")
                reader.delete(held[0])
                try check(!reader.hasChanges, "deleting it again leaves nothing to save")
                try checkEqual(reader.deletedObjects.count, 0, "nothing listed as deleted here")
                reader.delete(held[1])
                try reader.save()
                try checkEqual(try reader.count(for: FetchRequest<Student>()), 0, "both rows gone")
            }
        },
        ConformanceScenario("merge.deletingAnObjectASaveFoundDeletedIsDone") { env in
            // The reader's save finds the row of its edited object deleted by another save; the
            // deletion wins and the object leaves the context, as with a merged deletion.
            let (ids, reader, held) = try studentsHeldByAReader(env)
            let writer = env.newContext()
            try writer.performAndWait {
                writer.delete(writer.object(with: ids[0]))
                try writer.save()
            }
            try reader.performAndWait {
                reader.mergePolicy = .objectTrumps
                (held[0] as! Student).name = "edited here"
                try reader.save()
                try check(held[0].managedObjectContext == nil, "the save let the deleted object go")
                reader.delete(held[0])
                try check(!reader.hasChanges, "deleting it again leaves nothing to save")
                try checkEqual(try reader.count(for: FetchRequest<Student>()), 1, "one row left")
            }
        },
    ]

    /// Two stored students, loaded in a new context (the reader), which is returned with them.
    private static func studentsHeldByAReader(_ env: ScenarioEnvironment) throws -> ([ObjectID], ManagedObjectContext, [ManagedObject]) {
        let ids = try env.seed { setup in
            ["Ann", "Bob"].map { name -> ManagedObject in let s = Student(context: setup); s.name = name; return s }
        }
        let reader = env.newContext()
        let held = try reader.performAndWait {
            try ids.map { id -> ManagedObject in
                let student = try reader.existingObject(with: id)
                _ = try student.value(forKey: "name")
                return student
            }
        }
        return (ids, reader, held)
    }
}
