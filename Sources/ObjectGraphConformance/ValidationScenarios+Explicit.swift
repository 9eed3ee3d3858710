import Foundation
import ObjectGraph

/// Validation on demand (validateForInsert, validateForUpdate, validateForDelete and
/// validateValue(_:forKey:)): the same rules, codes and keys as a save, without saving.
extension ValidationScenarios {
    static let explicit: [ConformanceScenario] = [
        ConformanceScenario("validation.explicit.objectChecksMatchTheSave") { env in
            let context = env.newContext()
            try context.performAndWait {
                let account = try context.insertObject(entityName: "Account")
                try account.setValue("A!", forKey: "username")
                try account.setValue(-1.0, forKey: "balance")
                let asked = try checkThrows(ValidationError.self, "validateForInsert of a broken account") { try account.validateForInsert() }
                let saved = try checkThrows(ValidationError.self, "saving it") { try context.save() }
                let pairs = { (error: ValidationError) in error.violations.map { "\($0.objectID == account.objectID) \($0.key) \($0.code.rawValue)" }.sorted() }
                try checkEqual(pairs(asked), pairs(saved), "the violations validateForInsert reports are the save's")
                try checkEqual(pairs(asked), ["true balance 1620", "true pin 1570", "true username 1670", "true username 1680"], "every violation")
                try account.setValue("ada_l", forKey: "username")
                try account.setValue(10.0, forKey: "balance")
                try account.setValue(1, forKey: "pin")
                try account.validateForInsert()
                try context.save()
            }
            let fresh = env.newContext()
            try fresh.performAndWait {
                let account = try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Account"))[0]
                try check(account.isFault, "fetched as a fault")
                try account.validateForUpdate()
                try account.setValue(2_000_000.0, forKey: "balance")
                let error = try checkThrows(ValidationError.self, "validateForUpdate over the maximum") { try account.validateForUpdate() }
                try check(violation(error, .numberTooLarge, account.objectID, "balance"), "1610 on balance: \(error)")
            }
        },
        ConformanceScenario("validation.explicit.valueForKeyIsCheckedNotSet") { env in
            let context = env.newContext()
            try context.performAndWait {
                let account = try makeAccount(context, "ada_l", balance: 5)
                try account.validateValue("grace_h", forKey: "username")
                let short = try checkThrows(ValidationError.self, "a short username") { try account.validateValue("x", forKey: "username") }
                try check(violation(short, .stringTooShort, account.objectID, "username"), "1670: \(short)")
                try checkEqual(try account.value(forKey: "username") as? String, "ada_l", "validateValue sets nothing")
                let missing = try checkThrows(ValidationError.self, "no pin") { try account.validateValue(nil, forKey: "pin") }
                try check(violation(missing, .missingMandatoryProperty, account.objectID, "pin"), "1570: \(missing)")
                _ = try checkThrows(ObjectGraphError.self, "a value of the wrong type") { try account.validateValue("many", forKey: "balance") }
                let roster = try makeRoster(context, "r", players: 2, captain: true)
                let one = try checkThrows(ValidationError.self, "one player") { try roster.validateValue([try player(context, "solo")], forKey: "players") }
                try check(violation(one, .relationshipLacksMinimumCount, roster.objectID, "players"), "1580: \(one)")
                let noCaptain = try checkThrows(ValidationError.self, "no captain") { try roster.validateValue(nil, forKey: "captain") }
                try check(violation(noCaptain, .missingMandatoryProperty, roster.objectID, "captain"), "1570: \(noCaptain)")
                try checkEqual((try roster.value(forKey: "players") as? Set<ManagedObject>)?.count, 2, "the players are unchanged")
            }
        },
        ConformanceScenario("validation.explicit.relationshipValuesAreRefusedAsSetValueRefusesThem") { env in
            // validateValue(_:forKey:) answers for setValue(_:forKey:): a value the setter
            // refuses is refused with the setter's error, not passed as a filled relationship.
            let other = env.newContext()
            let stranger = try other.performAndWait { try player(other, "stranger") }
            let context = env.newContext()
            try context.performAndWait {
                let roster = try makeRoster(context, "r", players: 2, captain: true)
                let account = try makeAccount(context, "ada_l", balance: 5)
                let (first, second) = (try player(context, "p1"), try player(context, "p2"))
                try roster.validateValue(first, forKey: "captain")
                try roster.validateValue([first, second], forKey: "players")
                let refused: [(String, Any, ObjectGraphError.Code)] = [
                    ("captain", "Alice", .wrongValueType), ("captain", account, .wrongDestination),
                    ("captain", stranger, .wrongContext), ("players", [first, account], .wrongDestination),
                    ("players", [first, stranger], .wrongContext),
                ]
                for (key, value, code) in refused {
                    let set = try checkThrows(ObjectGraphError.self, "setValue of \(type(of: value)) for \(key)") { try roster.setValue(value, forKey: key) }
                    let validated = try checkThrows(ObjectGraphError.self, "validateValue of \(type(of: value)) for \(key)") { try roster.validateValue(value, forKey: key) }
                    try checkEqual(set.code, code, "setValue's code for \(key)")
                    try checkEqual(validated.code, code, "validateValue's code for \(key), as setValue's")
                    try checkEqual(validated.key, key, "the error names the key")
                }
                try checkEqual((try roster.value(forKey: "players") as? Set<ManagedObject>)?.count, 2, "the players are unchanged")
                // A member deleted here is not stored, so it does not count, as at save.
                let gone = try player(context, "gone")
                context.delete(gone)
                let short = try checkThrows(ValidationError.self, "two players, one of them deleted") { try roster.validateValue([first, gone], forKey: "players") }
                try check(violation(short, .relationshipLacksMinimumCount, roster.objectID, "players"), "1580, as a save would: \(short)")
            }
        },
        ConformanceScenario("validation.explicit.deleteChecksDeny") { env in
            let context = env.newContext()
            try context.performAndWait {
                let owner = try context.insertObject(entityName: "Owner")
                try owner.setValue("owner", forKey: "name")
                try owner.validateForDelete()
                let item = try context.insertObject(entityName: "Item")
                try item.setValue("item", forKey: "name")
                try item.setValue(owner, forKey: "denyManyOwner")
                try context.save()
                let error = try checkThrows(ValidationError.self, "an owner that holds an item") { try owner.validateForDelete() }
                try check(violation(error, .relationshipDeniedDelete, owner.objectID, "denyMany"), "1600: \(error)")
                context.delete(item)
                try owner.validateForDelete()
            }
        },
    ]
}
