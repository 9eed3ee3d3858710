import Foundation
import ObjectGraph

/// What objects-did-change says after a merge of another context's save: as Core Data's
/// merge, the other context's inserts as inserted, its deletions as deleted, its updates of
/// loaded objects as refreshed; so a list kept from these notifications shows what the other
/// context saved.
extension MergeScenarios {
    static let events: [ConformanceScenario] = [
        ConformanceScenario("merge.notificationListsInsertsDeletionsAndRefreshes") { env in
            let ids = try env.seed { setup in
                ["Ann", "Bob"].map { name -> ManagedObject in let s = Student(context: setup); s.name = name; return s }
            }
            let (writer, reader) = (env.newContext(), env.newContext())
            let log = NotificationLog()
            let observer = log.observeObjectsDidChange(of: reader)
            defer { NotificationCenter.default.removeObserver(observer) }
            let held = try reader.performAndWait {
                let students = try ids.map { try reader.existingObject(with: $0) as! Student }
                for student in students { _ = student.name }
                return students
            }
            var saved: ObjectID?
            let payload = try didSave(writer) {
                (try writer.existingObject(with: ids[0]) as! Student).name = "Ann, saved elsewhere"
                writer.delete(writer.object(with: ids[1]))
                let cy = Student(context: writer); cy.name = "Cy"
                try writer.save()
                saved = cy.objectID
            }
            guard let newID = saved else { return try check(false, "the save gave the insert an ID") }
            _ = log.take()
            try reader.performAndWait { try reader.mergeChanges(fromContextDidSave: payload) }
            let entries = log.take()
            try checkEqual(entries.count, 1, "the merge posts one notification: \(entries)")
            try checkEqual(entries.first?.inserted, [newID], "the other context's insert, now registered here")
            try checkEqual(entries.first?.deleted, [ids[1]], "the other context's deletion")
            try checkEqual(entries.first?.refreshed, [ids[0]], "the loaded object the merge gave the saved values")
            try checkEqual(entries.first?.updated, [], "nothing changed here")
            try reader.performAndWait {
                let cy = try reader.existingObject(with: newID) as! Student
                try checkEqual(cy.name, "Cy", "the listed insert reads the saved values")
                try checkEqual(held[0].name, "Ann, saved elsewhere", "the refreshed object shows the saved name")
            }
            // Merging the same save again: its insert is registered already (announced by the
            // first merge), and nothing is left to delete or refresh.
            _ = log.take()
            let cy = try reader.performAndWait { () -> ManagedObject in
                let cy = reader.object(with: newID)
                try reader.mergeChanges(fromContextDidSave: payload)
                return cy
            }
            try check(log.take().allSatisfy { $0.inserted.isEmpty && $0.deleted.isEmpty }, "an insert already registered is not announced again")
            withExtendedLifetime(cy) {}
        },
    ]
}
