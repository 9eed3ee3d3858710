import Foundation
import ObjectGraph

/// What objects-did-change says about undo and redo: as Core Data reports them, an undone
/// deletion brings its objects back (inserted), a redone one takes them away (deleted), and an
/// undone insert leaves (deleted); so a list kept from the notifications follows the undo.
extension UndoScenarios {
    static let events: [ConformanceScenario] = [
        ConformanceScenario("undo.notificationsReportDeletionsAndInsertsUndone") { env in
            let ids = try env.seed { setup in
                let ann = Student(context: setup); ann.name = "Ann"
                let home = Address(context: setup); home.street = "Home St"; ann.address = home
                return [ann, home]
            }
            let context = undoable(env)
            let log = NotificationLog()
            let observer = log.observeObjectsDidChange(of: context)
            defer { NotificationCenter.default.removeObserver(observer) }
            func step(_ what: String, _ body: () throws -> Void) throws -> NotificationLog.Entry {
                _ = log.take()
                try context.performAndWait {
                    try body()
                    try context.processPendingChanges()
                }
                let entries = log.take()
                try checkEqual(entries.count, 1, "\(what): one notification: \(entries)")
                return entries[0]
            }
            let ann = try context.performAndWait { try context.existingObject(with: ids[0]) as! Student }
            let deleted = try step("the deletion") { context.delete(ann) }
            try checkEqual(deleted.deleted, Set(ids), "the student and the address it cascades to are deleted")
            let undone = try step("undo") { try context.undo() }
            try checkEqual(undone.inserted, Set(ids), "an undone deletion brings both back")
            try check(undone.deleted.isEmpty && undone.updated.isEmpty, "and reports them no other way: \(undone)")
            let redone = try step("redo") { try context.redo() }
            try checkEqual(redone.deleted, Set(ids), "a redone deletion takes both away again")
            try check(redone.inserted.isEmpty && redone.updated.isEmpty, "and reports them no other way: \(redone)")
            let newID = try context.performAndWait { () -> ObjectID in
                try context.undo()
                try context.processPendingChanges()
                let bob = Student(context: context); bob.name = "Bob"
                try context.processPendingChanges()
                return bob.objectID
            }
            let undoneInsert = try step("undoing an insert") { try context.undo() }
            try checkEqual(undoneInsert.deleted, [newID], "an undone insert leaves")
            let redoneInsert = try step("redoing it") { try context.redo() }
            try checkEqual(redoneInsert.inserted, [newID], "a redone insert comes back")
            try context.performAndWait {
                (context.object(with: newID) as! Student).name = "Robert"
                try context.processPendingChanges()
            }
            let undoneChange = try step("undoing a change of the insert") { try context.undo() }
            try checkEqual(undoneChange.updated, [newID], "an undone change of an announced insert is an update")
            try checkEqual(undoneChange.inserted, [], "not a second insert")
        },
    ]
}
