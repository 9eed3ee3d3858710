import Foundation
import ObjectGraph

/// Delete rules — nullify, cascade, deny, no action — on to-one and to-many relationships,
/// checked in the context once pending changes are processed, and in the store after a save
/// (from a fresh coordinator). This file holds the rule × cardinality matrix on the
/// Owner/Item entities, reached by key-value access; `DeleteRuleScenarios+Graphs.swift` holds
/// the graph-shaped cases (required inverses, chats, inheritance, ordered, cycles, reflexive,
/// unsaved objects).
enum DeleteRuleScenarios {
    static let all: [ConformanceScenario] = matrix + graphs + unreadMembers + bulk + danglingInverses

    static let matrix: [ConformanceScenario] = [
        ConformanceScenario("deleteRules.appliedWhenPendingChangesAreProcessed") { env in
            // delete(_:) only marks the object; the rules run at processPendingChanges, which
            // also runs by itself when a perform block ends.
            let context = env.newContext()
            let (ownerID, cascadedID, nullifiedID) = try context.performAndWait {
                let owner = try makeObject(context, "Owner", "o")
                let cascaded = try makeObject(context, "Item", "c")
                let nullified = try makeObject(context, "Item", "n")
                try owner.setValue(cascaded, forKey: "cascadeOne")
                try owner.add(nullified, to: "nullifyMany")
                try context.save()
                context.delete(owner)
                try check(owner.isDeleted, "the deleted object is marked at once")
                try check(!cascaded.isDeleted, "the cascade waits for processPendingChanges")
                try check(try toOne(nullified, "nullifyManyOwner") === owner, "the nullify waits for processPendingChanges")
                return (owner.objectID, cascaded.objectID, nullified.objectID)
            }
            try context.performAndWait {
                let cascaded = context.object(with: cascadedID)
                let nullified = context.object(with: nullifiedID)
                try check(cascaded.isDeleted, "the end of the previous perform block applied the cascade")
                try check(try toOne(nullified, "nullifyManyOwner") == nil, "the end of the previous perform block applied the nullify")
                try checkEqual(Set(context.deletedObjects.map(\.objectID)), [ownerID, cascadedID], "deleted objects")
            }
        },
        ConformanceScenario("deleteRules.nullify.toOne") { env in
            let context = env.newContext()
            try context.performAndWait {
                let owner = try makeObject(context, "Owner", "o")
                let item = try makeObject(context, "Item", "i")
                try owner.setValue(item, forKey: "nullifyOne")
                try check(try toOne(item, "nullifyOneOwner") === owner, "the inverse is set")
                try context.save()
                context.delete(owner)
                try context.processPendingChanges()
                try check(!item.isDeleted, "nullify does not delete the destination")
                try check(try toOne(item, "nullifyOneOwner") == nil, "the destination's inverse is cleared")
                try check(context.updatedObjects.contains(item), "the destination counts as updated")
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(try countOf(fresh, "Owner"), 0, "owners after reopen")
                let item = try fetchOne(fresh, "Item", "i")
                try check(try toOne(item, "nullifyOneOwner") == nil, "the inverse is still empty after reopen")
            }
        },
        ConformanceScenario("deleteRules.nullify.toMany") { env in
            let context = env.newContext()
            try context.performAndWait {
                let owner = try makeObject(context, "Owner", "o")
                for name in ["a", "b", "c"] { try owner.add(try makeObject(context, "Item", name), to: "nullifyMany") }
                try context.save()
            }
            try env.reopen()
            let second = env.newContext()
            try second.performAndWait {
                // From a fault: the rule must load the to-many itself.
                let owner = try fetchOne(second, "Owner", "o")
                second.delete(owner)
                try second.processPendingChanges()
                let items = try fetchAll(second, "Item")
                try checkEqual(items.count, 3, "nullify keeps every destination")
                for item in items {
                    try check(!item.isDeleted, "\(item) is not deleted")
                    try check(try toOne(item, "nullifyManyOwner") == nil, "\(item).nullifyManyOwner is cleared")
                }
                try second.save()
            }
            try env.reopen()
            let third = env.newContext()
            try third.performAndWait {
                try checkEqual(try countOf(third, "Owner"), 0, "owners after reopen")
                let items = try fetchAll(third, "Item")
                try checkEqual(try names(items), ["a", "b", "c"], "items after reopen")
                for item in items { try check(try toOne(item, "nullifyManyOwner") == nil, "\(item).nullifyManyOwner after reopen") }
            }
        },
        ConformanceScenario("deleteRules.nullify.fromTheDestinationSide") { env in
            // Item's inverses are nullify: deleting an item takes it out of the owner's to-one and to-many.
            let context = env.newContext()
            try context.performAndWait {
                let owner = try makeObject(context, "Owner", "o")
                let a = try makeObject(context, "Item", "a")
                let b = try makeObject(context, "Item", "b")
                let c = try makeObject(context, "Item", "c")
                try owner.setValue([a, b], forKey: "nullifyMany")
                try owner.setValue(c, forKey: "cascadeOne")
                try context.save()
                context.delete(a)
                context.delete(c)
                try context.processPendingChanges()
                try check(!owner.isDeleted, "deleting a destination never deletes the owner")
                try checkEqual(try names(toMany(owner, "nullifyMany")), ["b"], "owner.nullifyMany loses the deleted item")
                try check(try toOne(owner, "cascadeOne") == nil, "owner.cascadeOne loses the deleted item")
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let owner = try fetchOne(fresh, "Owner", "o")
                try checkEqual(try names(toMany(owner, "nullifyMany")), ["b"], "owner.nullifyMany after reopen")
                try check(try toOne(owner, "cascadeOne") == nil, "owner.cascadeOne after reopen")
                try checkEqual(try countOf(fresh, "Item"), 1, "items after reopen")
            }
        },
        ConformanceScenario("deleteRules.cascade.toOne") { env in
            let context = env.newContext()
            let (ownerID, itemID) = try context.performAndWait {
                let owner = try makeObject(context, "Owner", "o")
                let item = try makeObject(context, "Item", "doomed")
                _ = try makeObject(context, "Item", "bystander")
                try owner.setValue(item, forKey: "cascadeOne")
                try context.save()
                context.delete(owner)
                try context.processPendingChanges()
                try check(item.isDeleted, "the cascade deletes the destination")
                try checkEqual(Set(context.deletedObjects.map(\.objectID)), [owner.objectID, item.objectID], "deleted objects")
                try checkEqual(try countOf(context, "Item"), 1, "a fetch in the context already leaves the cascaded item out")
                try context.save()
                return (owner.objectID, item.objectID)
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(try names(fetchAll(fresh, "Item")), ["bystander"], "items after reopen")
                try checkThrows(ObjectGraphError.self, "the cascaded item is gone") { _ = try fresh.existingObject(with: itemID) }
                try checkThrows(ObjectGraphError.self, "the owner is gone") { _ = try fresh.existingObject(with: ownerID) }
            }
        },
        ConformanceScenario("deleteRules.cascade.toMany") { env in
            let context = env.newContext()
            try context.performAndWait {
                let owner = try makeObject(context, "Owner", "o")
                let other = try makeObject(context, "Owner", "other")
                for name in ["a", "b", "c"] { try owner.add(try makeObject(context, "Item", name), to: "cascadeMany") }
                try other.add(try makeObject(context, "Item", "kept"), to: "cascadeMany")
                try context.save()
            }
            try env.reopen()
            let second = env.newContext()
            try second.performAndWait {
                // The owner is a fault and its to-many is unloaded; one unsaved member joins the saved ones.
                let owner = try fetchOne(second, "Owner", "o")
                let fresh = try makeObject(second, "Item", "unsaved")
                try owner.add(fresh, to: "cascadeMany")
                second.delete(owner)
                try second.processPendingChanges()
                try check(fresh.isDeleted, "the cascade reaches the unsaved member")
                try checkEqual(second.deletedObjects.count, 4, "the owner and its three saved items are deleted")
                try checkEqual(try names(fetchAll(second, "Item")), ["kept"], "the context's fetch sees only the other owner's item")
                try second.save()
            }
            try env.reopen()
            let third = env.newContext()
            try third.performAndWait {
                try checkEqual(try names(fetchAll(third, "Owner")), ["other"], "owners after reopen")
                let items = try fetchAll(third, "Item")
                try checkEqual(try names(items), ["kept"], "items after reopen")
                try checkEqual(try name(toOne(items[0], "cascadeManyOwner")), "other", "the survivor keeps its owner")
            }
        },
        ConformanceScenario("deleteRules.cascade.destinationsApplyTheirOwnRules") { env in
            // A cascaded item is a deleted item: its own (nullify) rules take it out of a second owner.
            let context = env.newContext()
            try context.performAndWait {
                let first = try makeObject(context, "Owner", "first")
                let second = try makeObject(context, "Owner", "second")
                let shared = try makeObject(context, "Item", "shared")
                let stays = try makeObject(context, "Item", "stays")
                try first.add(shared, to: "cascadeMany")
                try second.add(shared, to: "nullifyMany")
                try second.add(stays, to: "nullifyMany")
                try second.setValue(shared, forKey: "noActionOne")
                try context.save()
                context.delete(first)
                try context.processPendingChanges()
                try check(shared.isDeleted, "the cascade deletes the shared item")
                try checkEqual(try names(toMany(second, "nullifyMany")), ["stays"], "the second owner's to-many loses it")
                try check(try toOne(second, "noActionOne") == nil, "the item's nullify inverse clears the second owner's to-one")
                try check(!second.isDeleted, "the second owner is not deleted")
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let second = try fetchOne(fresh, "Owner", "second")
                try checkEqual(try names(toMany(second, "nullifyMany")), ["stays"], "second.nullifyMany after reopen")
                try check(try toOne(second, "noActionOne") == nil, "second.noActionOne after reopen")
                try checkEqual(try names(fetchAll(fresh, "Item")), ["stays"], "items after reopen")
            }
        },
    ] + denyScenarios + noActionScenarios

    static let denyScenarios: [ConformanceScenario] = [
        ConformanceScenario("deleteRules.deny.toOne.blocksSaveAndRollbackRestores") { env in
            let context = env.newContext()
            let (ownerID, itemID) = try context.performAndWait {
                let owner = try makeObject(context, "Owner", "o")
                let item = try makeObject(context, "Item", "guard")
                try owner.setValue(item, forKey: "denyOne")
                try context.save()
                return (owner.objectID, item.objectID)
            }
            try context.performAndWait {
                let owner = try context.existingObject(with: ownerID)
                context.delete(owner)
                let error = try checkThrows(ValidationError.self, "saving a delete the deny rule refuses") { try context.save() }
                try checkEqual(error.violations.count, 1, "violations: \(error)")
                let violation = error.violations[0]
                try checkEqual(violation.code, .relationshipDeniedDelete, "code")
                try checkEqual(violation.code.rawValue, 1600, "Core Data's number")
                try checkEqual(violation.objectID, ownerID, "the violation names the deleted object")
                try checkEqual(violation.key, "denyOne", "the violation names the relationship")
                try check(violation.message.contains("denyOne") && violation.message.contains(itemID.description),
                          "the message names the relationship and the blocking object: \(violation.message)")
                try check(violation.message.contains("deny"), "the message names the rule: \(violation.message)")
                try check(owner.isDeleted, "a failed save keeps the delete pending")
                try checkThrows(ValidationError.self, "saving again without a fix") { try context.save() }
            }
            // The store is unchanged: a second context on the same coordinator still sees both.
            let second = env.newContext()
            try second.performAndWait {
                let item = try second.existingObject(with: itemID)
                try checkEqual(try toOne(item, "denyOneOwner")?.objectID, ownerID, "the store still relates the item to the owner")
                try checkEqual(try countOf(second, "Owner"), 1, "the owner is still stored")
            }
            try context.performAndWait {
                context.rollback()
                let owner = try context.existingObject(with: ownerID)
                try check(!owner.isDeleted, "after rollback the owner is no longer deleted")
                try check(context.deletedObjects.isEmpty && !context.hasChanges, "after rollback nothing is pending")
                try checkEqual(try toOne(owner, "denyOne")?.objectID, itemID, "after rollback owner.denyOne is back")
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let owner = try fetchOne(fresh, "Owner", "o")
                try checkEqual(try name(toOne(owner, "denyOne")), "guard", "owner.denyOne after reopen")
            }
        },
        ConformanceScenario("deleteRules.deny.toMany.blocksSaveAndStoreIsUnchanged") { env in
            // Other rules of the same object ran in the context (a cascade, a nullify), but the
            // refused save sends none of it to the store.
            let context = env.newContext()
            let ownerID = try context.performAndWait {
                let owner = try makeObject(context, "Owner", "o")
                try owner.setValue([try makeObject(context, "Item", "d1"), try makeObject(context, "Item", "d2")], forKey: "denyMany")
                try owner.add(try makeObject(context, "Item", "cascaded"), to: "cascadeMany")
                try owner.setValue(try makeObject(context, "Item", "nullified"), forKey: "nullifyOne")
                try context.save()
                return owner.objectID
            }
            try context.performAndWait {
                let owner = try context.existingObject(with: ownerID)
                context.delete(owner)
                try context.processPendingChanges()
                let cascaded = try fetchOne(context, "Item", "cascaded", includingDeleted: true)
                try check(cascaded.isDeleted, "the cascade ran in the context")
                let error = try checkThrows(ValidationError.self, "saving a delete the deny rule refuses") { try context.save() }
                try checkEqual(error.violations.count, 1, "one violation for the relationship: \(error)")
                try check(error.contains(.relationshipDeniedDelete, key: "denyMany"), "code 1600 on denyMany: \(error)")
                try checkEqual(error.violations.first?.objectID, ownerID, "the violation names the owner")
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let owner = try fetchOne(fresh, "Owner", "o")
                try checkEqual(try names(toMany(owner, "denyMany")), ["d1", "d2"], "denyMany after the refused save")
                try checkEqual(try names(toMany(owner, "cascadeMany")), ["cascaded"], "the cascaded item is still stored")
                try checkEqual(try name(toOne(owner, "nullifyOne")), "nullified", "the nullified inverse is still stored")
                try checkEqual(try countOf(fresh, "Item"), 4, "every item is still stored")
            }
        },
        ConformanceScenario("deleteRules.deny.passesOnceDestinationsAreRemoved") { env in
            let context = env.newContext()
            try context.performAndWait {
                let owner = try makeObject(context, "Owner", "o")
                let one = try makeObject(context, "Item", "one")
                let many = try makeObject(context, "Item", "many")
                try owner.setValue(one, forKey: "denyOne")
                try owner.add(many, to: "denyMany")
                try context.save()
                context.delete(owner)
                let error = try checkThrows(ValidationError.self, "both deny relationships refuse") { try context.save() }
                try checkEqual(error.violations.count, 2, "violations: \(error)")
                try check(error.contains(.relationshipDeniedDelete, key: "denyOne") && error.contains(.relationshipDeniedDelete, key: "denyMany"), "\(error)")
                // Fix it without a rollback: unlink the destinations, then save again.
                try one.setValue(nil, forKey: "denyOneOwner")
                try owner.remove(many, from: "denyMany")
                try context.save()
                try check(!one.isDeleted && !many.isDeleted, "deny never deletes the destinations")
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(try countOf(fresh, "Owner"), 0, "the owner is deleted")
                let items = try fetchAll(fresh, "Item")
                try checkEqual(try names(items), ["one", "many"], "the unlinked items survive")
                for item in items {
                    try check(try toOne(item, "denyOneOwner") == nil && toOne(item, "denyManyOwner") == nil, "\(item) points at no owner")
                }
            }
        },
        ConformanceScenario("deleteRules.deny.passesWhenDestinationsAreDeletedToo") { env in
            let context = env.newContext()
            try context.performAndWait {
                let owner = try makeObject(context, "Owner", "o")
                let one = try makeObject(context, "Item", "one")
                let a = try makeObject(context, "Item", "a")
                let b = try makeObject(context, "Item", "b")
                try owner.setValue(one, forKey: "denyOne")
                try owner.setValue([a, b], forKey: "denyMany")
                // b is also reached by the owner's cascade: a destination deleted in the same
                // save, by hand or by a rule, no longer blocks.
                try owner.setValue(b, forKey: "cascadeOne")
                try context.save()
                context.delete(one)
                context.delete(a)
                context.delete(owner)
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(try countOf(fresh, "Owner"), 0, "owners after reopen")
                try checkEqual(try countOf(fresh, "Item"), 0, "items after reopen")
            }
        },
    ]

    static let noActionScenarios: [ConformanceScenario] = [
        ConformanceScenario("deleteRules.noAction.toOneLeavesDanglingInverse") { env in
            // Core Data's "no action": the destination is left alone and its inverse keeps
            // pointing at the deleted object. In the store that is a reference to a row that
            // no longer exists; following it gives a deleted object with empty values (as
            // Core Data's shouldDeleteInaccessibleFaults does by default) or, with that setting
            // off, a typed objectNotFound error — never a crash.
            let context = env.newContext()
            let ownerID = try context.performAndWait {
                let owner = try makeObject(context, "Owner", "o")
                let item = try makeObject(context, "Item", "i")
                try owner.setValue(item, forKey: "noActionOne")
                try context.save()
                context.delete(owner)
                try context.processPendingChanges()
                try check(!item.isDeleted, "no action does not delete the destination")
                try check(try toOne(item, "noActionOneOwner") === owner, "the inverse still points at the deleted owner")
                try check(!context.updatedObjects.contains(item), "the destination is not changed")
                try context.save()
                try checkEqual(try toOne(item, "noActionOneOwner")?.objectID, owner.objectID, "still the deleted owner's ID after save")
                return owner.objectID
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(try countOf(fresh, "Owner"), 0, "the owner is deleted in the store")
                let item = try fetchOne(fresh, "Item", "i")
                let dangling = try toOne(item, "noActionOneOwner")
                try checkEqual(dangling?.objectID, ownerID, "after reopen the inverse names the deleted row")
                fresh.shouldDeleteInaccessibleFaults = false
                let error = try checkThrows(ObjectGraphError.self, "firing the dangling reference") { _ = try dangling?.value(forKey: "name") }
                try checkEqual(error.code, .objectNotFound, "code")
                fresh.shouldDeleteInaccessibleFaults = true
                try check(try dangling?.value(forKey: "name") == nil, "by default the dangling reference reads empty")
                try check(dangling?.isDeleted == true && fresh.deletedObjects.count == 1, "and is a deleted object of the context")
                try fresh.save()
                try check(!fresh.hasChanges && !item.isUpdated, "the save discards it and leaves the item alone")
                try checkThrows(ObjectGraphError.self, "existingObject for the deleted owner") { _ = try fresh.existingObject(with: ownerID) }
            }
        },
        ConformanceScenario("deleteRules.noAction.toManyLeavesDanglingInverses") { env in
            // The to-many side's own row is gone with the owner; its members' to-one inverses
            // still name it. (The model's no-action inverses are all to-one; where a to-many
            // does hold a deleted member, stores answer only with rows that exist.)
            let context = env.newContext()
            let ownerID = try context.performAndWait {
                let owner = try makeObject(context, "Owner", "o")
                try owner.setValue([try makeObject(context, "Item", "a"), try makeObject(context, "Item", "b")], forKey: "noActionMany")
                try context.save()
                return owner.objectID
            }
            try env.reopen()
            let second = env.newContext()
            try second.performAndWait {
                let owner = try second.existingObject(with: ownerID)
                let items = try toMany(owner, "noActionMany")
                second.delete(owner)
                try second.processPendingChanges()
                try checkEqual(second.deletedObjects.count, 1, "only the owner is deleted")
                for item in items {
                    try check(!item.isDeleted, "\(item) is not deleted")
                    try check(try toOne(item, "noActionManyOwner") === owner, "\(item) still points at the deleted owner")
                }
                try second.save()
            }
            try env.reopen()
            let third = env.newContext()
            try third.performAndWait {
                let items = try fetchAll(third, "Item")
                try checkEqual(try names(items), ["a", "b"], "both items survive")
                for item in items {
                    try checkEqual(try toOne(item, "noActionManyOwner")?.objectID, ownerID, "\(item) names the deleted owner after reopen")
                }
                try checkEqual(try countOf(third, "Item", .key("noActionManyOwner") == ownerID), 2, "a fetch by the dangling key still matches")
            }
        },
        ConformanceScenario("deleteRules.noAction.danglingInverseCanBeReassigned") { env in
            // Repairing a dangling inverse: moving the items to a new owner must not trip over
            // the deleted one (to-one and to-many sides).
            let context = env.newContext()
            try context.performAndWait {
                let owner = try makeObject(context, "Owner", "gone")
                try owner.setValue(try makeObject(context, "Item", "one"), forKey: "noActionOne")
                try owner.setValue([try makeObject(context, "Item", "m1"), try makeObject(context, "Item", "m2")], forKey: "noActionMany")
                try context.save()
                context.delete(owner)
                try context.save()
            }
            try env.reopen()
            let second = env.newContext()
            try second.performAndWait {
                let heir = try makeObject(second, "Owner", "heir")
                try fetchOne(second, "Item", "one").setValue(heir, forKey: "noActionOneOwner")
                try fetchOne(second, "Item", "m1").setValue(heir, forKey: "noActionManyOwner")
                try heir.add(try fetchOne(second, "Item", "m2"), to: "noActionMany")
                try checkEqual(try names(toMany(heir, "noActionMany")), ["m1", "m2"], "heir.noActionMany in the context")
                try second.save()
            }
            try env.reopen()
            let third = env.newContext()
            try third.performAndWait {
                let heir = try fetchOne(third, "Owner", "heir")
                try checkEqual(try countOf(third, "Owner"), 1, "only the heir is stored")
                try checkEqual(try name(toOne(heir, "noActionOne")), "one", "heir.noActionOne after reopen")
                try checkEqual(try names(toMany(heir, "noActionMany")), ["m1", "m2"], "heir.noActionMany after reopen")
                for item in try toMany(heir, "noActionMany") {
                    try check(try toOne(item, "noActionManyOwner") === heir, "\(item) points at the heir")
                }
            }
        },
    ]
}

// MARK: Key-value helpers shared by the delete-rule scenarios

extension DeleteRuleScenarios {
    /// Inserts an object of `entity` and sets its `key` (`name`, or `label` for nodes).
    static func makeObject(_ context: ManagedObjectContext, _ entity: String, _ name: String, key: String = "name") throws -> ManagedObject {
        let object = try context.insertObject(entityName: entity)
        try object.setValue(name, forKey: key)
        return object
    }

    /// A to-one destination.
    static func toOne(_ object: ManagedObject, _ key: String) throws -> ManagedObject? {
        try object.value(forKey: key) as? ManagedObject
    }

    /// A to-many relationship's members (in order, for ordered ones).
    static func toMany(_ object: ManagedObject, _ key: String) throws -> [ManagedObject] {
        let value = try object.value(forKey: key)
        guard let objects = objectArray(value) else {
            throw ScenarioFailure(message: "\(object.objectID).\(key) is not a to-many value: \(String(describing: value))", file: #filePath, line: #line)
        }
        return objects
    }

    /// `name` (or another string key) of an object; `nil` for no object.
    static func name(_ object: ManagedObject?, key: String = "name") throws -> String? {
        try object?.value(forKey: key) as? String
    }

    /// The names of `objects`, as a set.
    static func names(_ objects: [ManagedObject], key: String = "name") throws -> Set<String> {
        Set(try objects.map { try name($0, key: key) ?? "<nil>" })
    }

    /// Every object of `entity` (sub-entities included), pending changes included.
    static func fetchAll(_ context: ManagedObjectContext, _ entity: String, _ predicate: FetchPredicate? = nil) throws -> [ManagedObject] {
        try context.fetch(FetchRequest<ManagedObject>(entityName: entity, predicate: predicate))
    }

    /// The number of objects of `entity`, pending changes included.
    static func countOf(_ context: ManagedObjectContext, _ entity: String, _ predicate: FetchPredicate? = nil) throws -> Int {
        try context.count(for: FetchRequest<ManagedObject>(entityName: entity, predicate: predicate))
    }

    /// The one object of `entity` whose `key` is `name`. With `includingDeleted`, an object
    /// deleted in the context (and so left out of fetches) is found among its deleted objects.
    static func fetchOne(_ context: ManagedObjectContext, _ entity: String, _ name: String, key: String = "name", includingDeleted: Bool = false) throws -> ManagedObject {
        var found = try fetchAll(context, entity, .key(key) == name)
        if includingDeleted {
            found += try context.deletedObjects.filter { try $0.entity.name == entity && $0.value(forKey: key) as? String == name }
        }
        guard found.count == 1 else {
            throw ScenarioFailure(message: "expected one \(entity) with \(key) \"\(name)\", found \(found.count)", file: #filePath, line: #line)
        }
        return found[0]
    }

    private static func objectArray(_ value: Any?) -> [ManagedObject]? {
        if let set = value as? Set<ManagedObject> { return Array(set) }
        if let sequence = value as? any Sequence {
            var result: [ManagedObject] = []
            for element in sequence {
                guard let object = element as? ManagedObject else { return nil }
                result.append(object)
            }
            return result
        }
        return nil
    }
}
