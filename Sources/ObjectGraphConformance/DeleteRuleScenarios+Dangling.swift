import Foundation
import ObjectGraph

/// A no-action inverse left naming a deleted row is repaired by pointing it elsewhere. The
/// deleted row's object is then touched only as the other end of the unlinked membership: it
/// must stay out of everything that lists the context's objects, as it stays out of the store.
extension DeleteRuleScenarios {
    static let danglingInverses: [ConformanceScenario] = [
        ConformanceScenario("deleteRules.noAction.reassignedDanglingInverseFetchesOnlyLiveRows") { env in
            let context = env.newContext()
            try context.performAndWait {
                let gone = try makeObject(context, "Owner", "gone")
                let item = try makeObject(context, "Item", "i")
                try item.setValue(gone, forKey: "noActionManyOwner")
                try context.save()
                context.delete(gone)
                try context.save()
                let heir = try makeObject(context, "Owner", "heir")
                try item.setValue(heir, forKey: "noActionManyOwner")
                let owners = try fetchAll(context, "Owner")
                try checkEqual(owners.map(\.objectID), [heir.objectID], "owners fetched with the change pending")
                try checkEqual(try names(owners), ["heir"], "their names")
                let named = try fetchAll(context, "Owner", .key("name") != "nobody")
                try checkEqual(named.map(\.objectID), [heir.objectID], "owners fetched by a predicate with the change pending")
                try checkEqual(try countOf(context, "Owner"), 1, "owners counted with the change pending")
                try context.save()
                try checkEqual(try names(fetchAll(context, "Owner")), ["heir"], "owners after the save")
            }
        },
        ConformanceScenario("deleteRules.noAction.keyPathThroughDanglingToOneMatchesNothingWithChangesPending") { env in
            // A one-to-nil destination deleted and saved leaves the to-one naming a missing row.
            // The store's join finds nothing there; with the source changed but unsaved the
            // context evaluates it itself and must answer the same (it failed with
            // objectNotFound, for a predicate and for a sort through the to-one).
            let context = env.newContext()
            try context.performAndWait {
                let locker = Locker(context: context); locker.number = 7
                let student = Student(context: context); student.name = "s"; student.locker = locker
                try context.save()
                context.delete(locker)
                try context.save()
                let stored = try context.fetch(FetchRequest<Student>(predicate: try FetchPredicate(format: "locker.number == 7")))
                try checkEqual(stored.count, 0, "saved: no student's locker is number 7")
                student.name = "t"
                let pending = try context.fetch(FetchRequest<Student>(predicate: try FetchPredicate(format: "locker.number == 7")))
                try checkEqual(pending.count, 0, "with the student's rename pending, still none")
                let sorted = try context.fetch(FetchRequest<Student>(sortKeys: [SortKey("locker.number")]))
                try checkEqual(sorted.map(\.name), ["t"], "sorted by the locker's number, the student with a dangling locker sorts as one without")
            }
        },
        ConformanceScenario("deleteRules.noAction.reassigningOneDanglingInverseSavesBesideAnother") { env in
            // Two items name a deleted owner. Moving one to a new owner unlinks it from the
            // deleted owner, whose row the save then finds gone: the other item, changed too
            // but still naming the deleted owner as the store has it since the delete, is no
            // new reference to a row deleted meanwhile, and the save must not fail with a
            // conflict under the default policy.
            let context = env.newContext()
            try context.performAndWait {
                let gone = try makeObject(context, "Owner", "gone")
                let moved = try makeObject(context, "Item", "moved")
                let stays = try makeObject(context, "Item", "stays")
                try gone.setValue([moved, stays], forKey: "noActionMany")
                try context.save()
                context.delete(gone)
                try context.save()
                let heir = try makeObject(context, "Owner", "heir")
                try moved.setValue(heir, forKey: "noActionManyOwner")
                try stays.setValue("stays, renamed", forKey: "name")
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let heir = try fetchOne(fresh, "Owner", "heir")
                try checkEqual(try names(toMany(heir, "noActionMany")), ["moved"], "the heir's items after reopen")
                let stays = try fetchOne(fresh, "Item", "stays, renamed")
                try check(try toOne(stays, "noActionManyOwner") != nil, "the other item still names the deleted owner, as no action leaves it")
            }
        },
    ]
}
