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
    ]
}
