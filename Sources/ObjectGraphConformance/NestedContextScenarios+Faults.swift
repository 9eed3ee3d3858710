import Foundation
import ObjectGraph

/// A child's save deletes an object whose relationships the child changed first. Its change
/// set carries the other ends of those changes but not the deleted object's own, so the parent
/// applying its delete rules must not follow the deleted object's stale members: the child's
/// rules reached exactly what its graph showed.
extension NestedContextScenarios {
    static let faults: [ConformanceScenario] = [
        ConformanceScenario("nested.cascadeSkipsChildMovedAwayBeforeDelete") { env in
            let parent = env.newContext("parent")
            let child = parent.newChildContext()
            try child.performAndWait {
                let old = try DeleteRuleScenarios.makeObject(child, "Node", "old", key: "label")
                let heir = try DeleteRuleScenarios.makeObject(child, "Node", "heir", key: "label")
                let kid = try DeleteRuleScenarios.makeObject(child, "Node", "kid", key: "label")
                try kid.setValue(old, forKey: "parent")
                try child.save()
                try parent.performAndWait { try parent.save() }
                try heir.add(kid, to: "children")
                child.delete(old)
                try child.processPendingChanges()
                try check(!kid.isDeleted, "the kid moved to the heir before its old parent was deleted")
                try child.save()
                try parent.performAndWait { try parent.save() }
            }
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(try DeleteRuleScenarios.names(DeleteRuleScenarios.fetchAll(fresh, "Node"), key: "label"), ["heir", "kid"], "nodes stored")
            }
        },
        ConformanceScenario("nested.cascadeSkipsPartnerReplacedBeforeDelete") { env in
            let parent = env.newContext("parent")
            let child = parent.newChildContext()
            try child.performAndWait {
                let owner = try DeleteRuleScenarios.makeObject(child, "Owner", "owner")
                let first = try DeleteRuleScenarios.makeObject(child, "Item", "first")
                try owner.setValue(first, forKey: "cascadeOne")
                try child.save()
                try parent.performAndWait { try parent.save() }
                let second = try DeleteRuleScenarios.makeObject(child, "Item", "second")
                try owner.setValue(second, forKey: "cascadeOne")
                child.delete(owner)
                try child.processPendingChanges()
                try check(!first.isDeleted && second.isDeleted, "the cascade reaches the owner's item at its deletion only")
                try child.save()
                try parent.performAndWait { try parent.save() }
            }
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(try DeleteRuleScenarios.names(DeleteRuleScenarios.fetchAll(fresh, "Item")), ["first"], "items stored")
            }
        },
        ConformanceScenario("nested.denyIgnoresMemberMovedAwayBeforeDelete") { env in
            let parent = env.newContext("parent")
            let child = parent.newChildContext()
            try child.performAndWait {
                let owner = try DeleteRuleScenarios.makeObject(child, "Owner", "owner")
                let item = try DeleteRuleScenarios.makeObject(child, "Item", "item")
                try owner.setValue([item], forKey: "denyMany")
                try child.save()
                try parent.performAndWait { try parent.save() }
                try item.setValue(nil, forKey: "denyManyOwner")
                child.delete(owner)
                try child.save()
                try parent.performAndWait { try parent.save() }
            }
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(try DeleteRuleScenarios.countOf(fresh, "Owner"), 0, "owners stored")
                try checkEqual(try DeleteRuleScenarios.names(DeleteRuleScenarios.fetchAll(fresh, "Item")), ["item"], "items stored")
            }
        },
    ]
}
