import Foundation
import ObjectGraph

/// A to-one left naming a deleted record (a no-action delete rule leaves it so) reaches no
/// object in a predicate or sort key: nil, as every store finds no row for it — whether the
/// store answers the fetch or the context evaluates it on its objects for unsaved changes.
extension FetchScenarios {
    static let deletedDestinations: [ConformanceScenario] = [
        ConformanceScenario("fetch.pendingChanges.toOneNamingADeletedRecordReachesNil") { env in
            let writer = env.newContext()
            try writer.performAndWait {
                let owner = try writer.insertObject(entityName: "Owner")
                try owner.setValue("o", forKey: "name")
                for name in ["i", "j"] {
                    let item = try writer.insertObject(entityName: "Item")
                    try item.setValue(name, forKey: "name")
                    if name == "i" { try item.setValue(owner, forKey: "noActionOneOwner") }
                }
                try writer.save()
                writer.delete(owner)
                try writer.save()
            }
            try env.reopen()
            let context = env.newContext()
            try context.performAndWait {
                func names(_ format: String) throws -> [String] {
                    let request = FetchRequest<ManagedObject>(entityName: "Item", predicate: try FetchPredicate(format: format), sortKeys: [SortKey("noActionOneOwner.name"), SortKey("name")])
                    return try context.fetch(request).map { try $0.value(forKey: "name") as? String ?? "?" }
                }
                try checkEqual(try names("noActionOneOwner.name == nil"), ["i", "j"], "the store's answer: the deleted owner has no name")
                try checkEqual(try names("noActionOneOwner.name != 'o'"), ["i", "j"], "nor the name it had")
                // Dictionary columns are read from the objects.
                var columns = FetchRequest<ManagedObject>(entityName: "Item", sortKeys: [SortKey("name")])
                columns.propertiesToFetch = [.key("name"), .key("noActionOneOwner.name", as: "owner")]
                try checkEqual(try context.fetchDictionaries(columns), [["name": .string("i"), "owner": .null], ["name": .string("j"), "owner": .null]], "a column through the to-one is nil")
                // An unsaved change of an item: the context now evaluates the predicate and the
                // sort key on its objects, and must answer as the store did.
                let j = try context.fetch(FetchRequest<ManagedObject>(entityName: "Item", predicate: try FetchPredicate(format: "name == 'j'")))[0]
                try j.setValue("k", forKey: "name")
                try checkEqual(try names("noActionOneOwner.name == nil"), ["i", "k"], "with an unsaved change, the deleted owner still has no name")
                try checkEqual(try names("noActionOneOwner.name != 'o'"), ["i", "k"], "nor the name it had")
                try checkEqual(try names("noActionOneOwner == nil"), ["k"], "the to-one itself still names the deleted owner")
            }
        },
    ]
}
