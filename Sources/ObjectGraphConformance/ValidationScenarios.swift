import Foundation
import ObjectGraph

/// Validation at save: every Core Data code the conformance model can produce (1570–1680),
/// wrong value types refused when set, every violation of a save collected into one
/// ``ValidationError``, and a failed save leaving the store untouched.
enum ValidationScenarios {
    static let all: [ConformanceScenario] = basic + uniqueness + upsert + upsertGraph + upsertAudit + upsertContexts + upsertNested + explicit + custom + wholeObjects + deletedMembers

    static let basic: [ConformanceScenario] = [
        ConformanceScenario("validation.requiredAttributeNil") { env in
            let context = env.newContext()
            try context.performAndWait {
                let student = Student(context: context)  // name is required and has no default
                let account = try context.insertObject(entityName: "Account")
                try account.setValue("ada", forKey: "username")  // pin (required Int16) stays nil
                let error = try checkThrows(ValidationError.self, "saving nil required attributes") { try context.save() }
                try checkEqual(error.violations.count, 2, "violations: \(error)")
                try check(violation(error, .missingMandatoryProperty, student.objectID, "name"), "1570 on Student.name: \(error)")
                try check(violation(error, .missingMandatoryProperty, account.objectID, "pin"), "1570 on Account.pin: \(error)")
                try checkEqual(ValidationError.Code.missingMandatoryProperty.rawValue, 1570, "Core Data's number")
                student.name = "Ada"
                try account.setValue(1234, forKey: "pin")
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(try fresh.fetch(FetchRequest<Student>()).map(\.name), ["Ada"], "students after reopen")
                try checkEqual(integer(try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Account")).first?.value(forKey: "pin")), 1234, "pin after reopen")
            }
        },
        ConformanceScenario("validation.defaultsAndOptionalsSatisfyRequired") { env in
            // A required attribute with a default (Chat.title, Account.balance) and optional
            // ones left nil (Student.age, Account.openedAt) need nothing set.
            let context = env.newContext()
            try context.performAndWait {
                _ = Chat(context: context)
                let student = Student(context: context); student.name = "s"
                let account = try context.insertObject(entityName: "Account")
                try account.setValue("ada", forKey: "username")
                try account.setValue(1, forKey: "pin")
                try context.save()
                try check(student.age == nil, "age stays nil")
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(try fresh.fetch(FetchRequest<Chat>()).map(\.title), ["Untitled"], "the default title is stored")
                let account = try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Account"))[0]
                try checkEqual(try account.value(forKey: "balance") as? Double, 0.0, "the default balance is stored")
                try check(try account.value(forKey: "openedAt") == nil, "openedAt stays nil")
            }
        },
        ConformanceScenario("validation.requiredToOneNil") { env in
            let context = env.newContext()
            try context.performAndWait {
                let roster = try makeRoster(context, "r", players: 2)  // no captain
                let document = try context.insertObject(entityName: "Document")
                try document.setValue("orphan", forKey: "title")  // no folder
                let error = try checkThrows(ValidationError.self, "saving nil required to-ones") { try context.save() }
                try checkEqual(error.violations.count, 2, "violations: \(error)")
                try check(violation(error, .missingMandatoryProperty, roster.objectID, "captain"), "1570 on Roster.captain: \(error)")
                try check(violation(error, .missingMandatoryProperty, document.objectID, "folder"), "1570 on Document.folder: \(error)")
                try roster.setValue(try player(context, "cap"), forKey: "captain")
                let folder = try context.insertObject(entityName: "Folder")
                try folder.setValue("f", forKey: "name")
                try document.setValue(folder, forKey: "folder")
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let roster = try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Roster"))[0]
                try checkEqual(try (roster.value(forKey: "captain") as? ManagedObject)?.value(forKey: "name") as? String, "cap", "captain after reopen")
            }
        },
        ConformanceScenario("validation.requiredToManyEmpty") { env in
            // Crew.mates is a non-optional to-many without a minimum: empty is 1570, not 1580.
            let context = env.newContext()
            try context.performAndWait {
                let crew = try context.insertObject(entityName: "Crew")
                try crew.setValue("c", forKey: "name")
                let error = try checkThrows(ValidationError.self, "saving an empty required to-many") { try context.save() }
                try checkEqual(error.violations.count, 1, "violations: \(error)")
                try check(violation(error, .missingMandatoryProperty, crew.objectID, "mates"), "1570 on Crew.mates: \(error)")
                try crew.add(try player(context, "mate"), to: "mates")
                try context.save()
                // Emptying a saved crew is refused the same way.
                let mate = try (crew.value(forKey: "mates") as? Set<ManagedObject>)?.first
                try check(mate != nil, "the crew has its mate")
                try crew.remove(mate!, from: "mates")
                let again = try checkThrows(ValidationError.self, "emptying a saved required to-many") { try context.save() }
                try check(again.contains(.missingMandatoryProperty, key: "mates"), "1570 on mates after removal: \(again)")
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let crew = try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Crew"))[0]
                try checkEqual((try crew.value(forKey: "mates") as? Set<ManagedObject>)?.count, 1, "the store keeps the mate")
            }
        },
        ConformanceScenario("validation.toManyCountBounds") { env in
            // Roster.players: 2...3. One is 1580, four is 1590; two and three pass.
            let context = env.newContext()
            let ids = try context.performAndWait {
                let short = try makeRoster(context, "short", players: 1, captain: true)
                let long = try makeRoster(context, "long", players: 4, captain: true)
                _ = try makeRoster(context, "two", players: 2, captain: true)
                _ = try makeRoster(context, "three", players: 3, captain: true)
                let error = try checkThrows(ValidationError.self, "saving rosters out of bounds") { try context.save() }
                try checkEqual(error.violations.count, 2, "violations: \(error)")
                try check(violation(error, .relationshipLacksMinimumCount, short.objectID, "players"), "1580 on the short roster: \(error)")
                try check(violation(error, .relationshipExceedsMaximumCount, long.objectID, "players"), "1590 on the long roster: \(error)")
                try checkEqual(ValidationError.Code.relationshipLacksMinimumCount.rawValue, 1580, "Core Data's number")
                try checkEqual(ValidationError.Code.relationshipExceedsMaximumCount.rawValue, 1590, "Core Data's number")
                try short.add(try player(context, "extra"), to: "players")
                try long.remove(try (long.value(forKey: "players") as! Set<ManagedObject>).first!, from: "players")
                try context.save()
                return (short.objectID, long.objectID)
            }
            try env.reopen()
            let second = env.newContext()
            try second.performAndWait {
                // Changes to a saved roster, loaded from the store, are counted too.
                let short = try second.existingObject(with: ids.0)
                let long = try second.existingObject(with: ids.1)
                try long.add(try player(second, "fourth"), to: "players")
                let players = try short.value(forKey: "players") as! Set<ManagedObject>
                try short.remove(players.first!, from: "players")
                let error = try checkThrows(ValidationError.self, "saving changed rosters out of bounds") { try second.save() }
                try checkEqual(error.violations.count, 2, "violations: \(error)")
                try check(violation(error, .relationshipLacksMinimumCount, ids.0, "players"), "1580 after removing: \(error)")
                try check(violation(error, .relationshipExceedsMaximumCount, ids.1, "players"), "1590 after adding: \(error)")
            }
            try env.reopen()
            let third = env.newContext()
            try third.performAndWait {
                try checkEqual((try third.existingObject(with: ids.0).value(forKey: "players") as? Set<ManagedObject>)?.count, 2, "the store keeps two players")
                try checkEqual((try third.existingObject(with: ids.1).value(forKey: "players") as? Set<ManagedObject>)?.count, 3, "the store keeps three players")
            }
        },
        ConformanceScenario("validation.optionalToManyMayBeEmptyDespiteMinimum") { env in
            // Roster.players is optional with minimum 2: empty is allowed, one is not (Core Data).
            let context = env.newContext()
            try context.performAndWait {
                _ = try makeRoster(context, "empty", players: 0, captain: true)
                try context.save()
                let single = try makeRoster(context, "single", players: 1, captain: true)
                let error = try checkThrows(ValidationError.self, "one player is below the minimum") { try context.save() }
                try check(violation(error, .relationshipLacksMinimumCount, single.objectID, "players"), "1580 for one player: \(error)")
                try checkEqual(error.violations.count, 1, "the empty roster is valid: \(error)")
                try check(error.violations[0].message.hasSuffix("has 1 member; at least 2 required"), "the message counts in the singular: \(error.violations[0].message)")
            }
        },
        ConformanceScenario("validation.countsChangedThroughInverses") { env in
            // Rosters changed only through inverse maintenance and delete rules — while their
            // own relationships are unloaded faults — are validated too.
            let context = env.newContext()
            let (aID, bID) = try context.performAndWait {
                let a = try makeRoster(context, "a", players: 2, captain: true)
                let b = try makeRoster(context, "b", players: 3, captain: true)
                try context.save()
                return (a.objectID, b.objectID)
            }
            try env.reopen()
            let second = env.newContext()
            try second.performAndWait {
                let players = try second.fetch(FetchRequest<ManagedObject>(entityName: "Player", predicate: .key("name") == "a-0" || .key("name") == "a-captain"))
                try checkEqual(players.count, 2, "players fetched")
                let moved = try players.first { try $0.value(forKey: "name") as? String == "a-0" }!
                let captain = try players.first { try $0.value(forKey: "name") as? String == "a-captain" }!
                try moved.setValue(second.object(with: bID), forKey: "roster")  // a: 1 player, b: 4
                second.delete(captain)                                           // a loses its required captain
                let error = try checkThrows(ValidationError.self, "saving rosters changed from the other side") { try second.save() }
                try checkEqual(error.violations.count, 3, "violations: \(error)")
                try check(violation(error, .relationshipLacksMinimumCount, aID, "players"), "1580 on a: \(error)")
                try check(violation(error, .relationshipExceedsMaximumCount, bID, "players"), "1590 on b: \(error)")
                try check(violation(error, .missingMandatoryProperty, aID, "captain"), "1570 on a.captain: \(error)")
            }
            try env.reopen()
            let third = env.newContext()
            try third.performAndWait {
                let a = try third.existingObject(with: aID)
                try checkEqual((try a.value(forKey: "players") as? Set<ManagedObject>)?.count, 2, "a keeps two players in the store")
                try check(try a.value(forKey: "captain") != nil, "a keeps its captain in the store")
            }
        },
        ConformanceScenario("validation.numberBounds") { env in
            // Account.balance 0...1_000_000 (double), Student.age 0...150 (Int16): 1610 above, 1620 below.
            let context = env.newContext()
            try context.performAndWait {
                let rich = try makeAccount(context, "rich", balance: 1_000_000.01)
                let broke = try makeAccount(context, "broke", balance: -0.01)
                _ = try makeAccount(context, "edge_hi", balance: 1_000_000)
                _ = try makeAccount(context, "edge_lo", balance: 0)
                let old = Student(context: context); old.name = "old"; old.age = 151
                let unborn = Student(context: context); unborn.name = "unborn"; unborn.age = -1
                let edges = [Student(context: context), Student(context: context)]
                edges[0].name = "zero"; edges[0].age = 0
                edges[1].name = "max"; edges[1].age = 150
                let error = try checkThrows(ValidationError.self, "saving numbers out of range") { try context.save() }
                try checkEqual(error.violations.count, 4, "violations: \(error)")
                try check(violation(error, .numberTooLarge, rich.objectID, "balance"), "1610 on balance: \(error)")
                try check(violation(error, .numberTooSmall, broke.objectID, "balance"), "1620 on balance: \(error)")
                try check(violation(error, .numberTooLarge, old.objectID, "age"), "1610 on age: \(error)")
                try check(violation(error, .numberTooSmall, unborn.objectID, "age"), "1620 on age: \(error)")
                try checkEqual(ValidationError.Code.numberTooLarge.rawValue, 1610, "Core Data's number")
                try checkEqual(ValidationError.Code.numberTooSmall.rawValue, 1620, "Core Data's number")
                try rich.setValue(1_000_000, forKey: "balance")
                try broke.setValue(0, forKey: "balance")
                old.age = 150
                unborn.age = nil
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let ages = try fresh.fetch(FetchRequest<Student>(sortKeys: [SortKey("name")])).map(\.age)
                try checkEqual(ages, [150, 150, nil, 0], "ages after reopen (max, old, unborn, zero)")
                try checkEqual(try fresh.count(for: FetchRequest<ManagedObject>(entityName: "Account", predicate: .key("balance") == 1_000_000.0)), 2, "balances after reopen")
            }
        },
        ConformanceScenario("validation.integerOverflowIsWrongValueType") { env in
            // A typed Int16 property cannot hold 40000; through key-value access the value is
            // refused when set (wrongValueType), not left for save, and the old value stays.
            let context = env.newContext()
            try context.performAndWait {
                let student = Student(context: context); student.name = "s"; student.age = 20
                for bad in [40000, -40000, Int(Int16.max) + 1] {
                    let error = try checkThrows(ObjectGraphError.self, "setting age to \(bad)") { try student.setValue(bad, forKey: "age") }
                    try checkEqual(error.code, .wrongValueType, "code for \(bad)")
                    try checkEqual(error.key, "age", "the error names the key")
                }
                let wrongKind = try checkThrows(ObjectGraphError.self, "setting age to a string") { try student.setValue("twenty", forKey: "age") }
                try checkEqual(wrongKind.code, .wrongValueType, "a string for an Int16")
                let fraction = try checkThrows(ObjectGraphError.self, "setting age to 20.5") { try student.setValue(20.5, forKey: "age") }
                try checkEqual(fraction.code, .wrongValueType, "a fraction for an Int16")
                try checkEqual(student.age, 20, "the refused values leave the old one")
                let account = try makeAccount(context, "ada", balance: 1)
                try account.setValue(Int(Int16.max), forKey: "pin")
                try checkThrows(ObjectGraphError.self, "pin one past Int16.max") { try account.setValue(Int(Int16.max) + 1, forKey: "pin") }
                try checkThrows(ObjectGraphError.self, "pin as UInt64.max") { try account.setValue(UInt64.max, forKey: "pin") }
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(try fresh.fetch(FetchRequest<Student>()).first?.age, 20, "age after reopen")
                let account = try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Account"))[0]
                try checkEqual(integer(try account.value(forKey: "pin")), Int(Int16.max), "pin after reopen")
            }
        },
    ] + more

    static let more: [ConformanceScenario] = [
        ConformanceScenario("validation.dateBounds") { env in
            // Account.openedAt 2000-01-01...2100-01-01: 1630 after, 1640 before.
            let context = env.newContext()
            try context.performAndWait {
                let late = try makeAccount(context, "late", balance: 1)
                let early = try makeAccount(context, "early", balance: 1)
                let fine = try makeAccount(context, "fine", balance: 1)
                try late.setValue(Date(timeIntervalSince1970: 4_102_444_800 + 1), forKey: "openedAt")
                try early.setValue(Date(timeIntervalSince1970: 946_684_800 - 1), forKey: "openedAt")
                try fine.setValue(Date(timeIntervalSince1970: 946_684_800), forKey: "openedAt")  // the earliest itself
                let error = try checkThrows(ValidationError.self, "saving dates out of range") { try context.save() }
                try checkEqual(error.violations.count, 2, "violations: \(error)")
                try check(violation(error, .dateTooLate, late.objectID, "openedAt"), "1630 on the late date: \(error)")
                try check(violation(error, .dateTooSoon, early.objectID, "openedAt"), "1640 on the early date: \(error)")
                try checkEqual(ValidationError.Code.dateTooLate.rawValue, 1630, "Core Data's number")
                try checkEqual(ValidationError.Code.dateTooSoon.rawValue, 1640, "Core Data's number")
                try late.setValue(Date(timeIntervalSince1970: 4_102_444_800), forKey: "openedAt")  // the latest itself
                try early.setValue(nil, forKey: "openedAt")
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let dated = try fresh.count(for: FetchRequest<ManagedObject>(entityName: "Account", predicate: .key("openedAt") > Date(timeIntervalSince1970: 0)))
                try checkEqual(dated, 2, "accounts with a date after reopen")
            }
        },
        ConformanceScenario("validation.stringRules") { env in
            // Account.username: 3...12 characters of [a-z0-9_]: 1660 too long, 1670 too short, 1680 pattern.
            let context = env.newContext()
            try context.performAndWait {
                let short = try makeAccount(context, "ab", balance: 1)
                let long = try makeAccount(context, "abcdefghijklm", balance: 1)
                let pattern = try makeAccount(context, "bad-name", balance: 1)
                let both = try makeAccount(context, "AB", balance: 1)
                _ = try makeAccount(context, "abc", balance: 1)
                _ = try makeAccount(context, "abcdefghijk_", balance: 1)
                let error = try checkThrows(ValidationError.self, "saving strings that break their rules") { try context.save() }
                try checkEqual(error.violations.count, 5, "violations: \(error)")
                try check(violation(error, .stringTooShort, short.objectID, "username"), "1670: \(error)")
                try check(violation(error, .stringTooLong, long.objectID, "username"), "1660: \(error)")
                try check(violation(error, .stringPatternMatching, pattern.objectID, "username"), "1680: \(error)")
                try check(violation(error, .stringTooShort, both.objectID, "username") && violation(error, .stringPatternMatching, both.objectID, "username"),
                          "one value can break two rules, and both are reported: \(error)")
                try checkEqual(ValidationError.Code.stringTooLong.rawValue, 1660, "Core Data's number")
                try checkEqual(ValidationError.Code.stringTooShort.rawValue, 1670, "Core Data's number")
                try checkEqual(ValidationError.Code.stringPatternMatching.rawValue, 1680, "Core Data's number")
                for (account, fixed) in [(short, "abx"), (long, "abcdefghijkl"), (pattern, "bad_name"), (both, "ab_")] {
                    try account.setValue(fixed, forKey: "username")
                }
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let names = try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Account")).map { try $0.value(forKey: "username") as? String }
                try checkEqual(Set(names.compactMap { $0 }), ["abx", "abcdefghijkl", "bad_name", "ab_", "abc", "abcdefghijk_"], "usernames after reopen")
            }
        },
        ConformanceScenario("validation.aggregatesEveryViolationAndStoresNothing") { env in
            // One save, several broken objects and some valid ones: one error with every
            // violation; the store receives nothing; fixing the values lets the save through.
            let context = env.newContext()
            try context.performAndWait {
                let student = Student(context: context); student.age = 200                   // 1570 name, 1610 age
                let account = try makeAccount(context, "AB", balance: -1)                       // 1670, 1680, 1620
                try account.setValue(Date(timeIntervalSince1970: 0), forKey: "openedAt")        // 1640
                let roster = try makeRoster(context, "r", players: 1)                           // 1580 players, 1570 captain
                let crew = try context.insertObject(entityName: "Crew")                         // 1570 mates
                try crew.setValue("c", forKey: "name")
                let document = try context.insertObject(entityName: "Document")                 // 1570 folder
                try document.setValue("d", forKey: "title")
                let tag = Tag(context: context); tag.label = "valid"
                let error = try checkThrows(ValidationError.self, "saving many broken objects") { try context.save() }
                try checkEqual(error.violations.count, 10, "every violation, in one error: \(error)")
                try checkEqual(error.codes, [.missingMandatoryProperty, .relationshipLacksMinimumCount, .numberTooLarge, .numberTooSmall,
                                             .dateTooSoon, .stringTooShort, .stringPatternMatching], "codes")
                let perObject = Dictionary(grouping: error.violations, by: \.objectID).mapValues(\.count)
                try checkEqual(perObject, [student.objectID: 2, account.objectID: 4, roster.objectID: 2, crew.objectID: 1, document.objectID: 1], "violations per object")
                try check(error.description.contains("10 problems"), "the message counts the problems: \(error)")
                try check(context.insertedObjects.contains(tag) && context.hasChanges, "a failed save keeps the context's changes")
            }
            try env.reopen()
            let second = env.newContext()
            try second.performAndWait {
                for entity in ["Student", "Account", "Roster", "Player", "Crew", "Document", "Tag"] {
                    try checkEqual(try second.count(for: FetchRequest<ManagedObject>(entityName: entity)), 0, "\(entity) rows after the failed save")
                }
            }
            // Reopening closed the first context's store (on stores that persist), so the same
            // broken graph is built again: it fails again, and fixing it in the context whose
            // save failed lets the next save through.
            let third = env.newContext()
            try third.performAndWait {
                let student = Student(context: third); student.age = 200
                let account = try makeAccount(third, "AB", balance: -1)
                let roster = try makeRoster(third, "r", players: 1)
                let crew = try third.insertObject(entityName: "Crew")
                try crew.setValue("c", forKey: "name")
                let document = try third.insertObject(entityName: "Document")
                try document.setValue("d", forKey: "title")
                let failed = try checkThrows(ValidationError.self, "the same graph fails again") { try third.save() }
                try checkEqual(failed.violations.count, 9, "nine violations without the early date: \(failed)")
                student.name = "s"; student.age = 20
                try account.setValue("ab_", forKey: "username")
                try account.setValue(5, forKey: "balance")
                try roster.add(try player(third, "p2"), to: "players")
                try roster.setValue(try player(third, "cap"), forKey: "captain")
                try crew.add(try player(third, "mate"), to: "mates")
                let folder = try third.insertObject(entityName: "Folder")
                try folder.setValue("f", forKey: "name")
                try document.setValue(folder, forKey: "folder")
                try third.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let expected = ["Student": 1, "Account": 1, "Roster": 1, "Player": 4, "Crew": 1, "Document": 1, "Folder": 1]
                for (entity, count) in expected {
                    try checkEqual(try fresh.count(for: FetchRequest<ManagedObject>(entityName: entity)), count, "\(entity) rows after the fixed save")
                }
            }
        },
        ConformanceScenario("validation.failedUpdateLeavesStoreUnchanged") { env in
            let context = env.newContext()
            let id = try context.performAndWait {
                let account = try makeAccount(context, "ada", balance: 10)
                try context.save()
                try account.setValue("X", forKey: "username")         // 1670, 1680
                try account.setValue(2_000_000, forKey: "balance")     // 1610
                try account.setValue(nil, forKey: "pin")               // 1570
                let error = try checkThrows(ValidationError.self, "saving a broken update") { try context.save() }
                try checkEqual(error.codes, [.stringTooShort, .stringPatternMatching, .numberTooLarge, .missingMandatoryProperty], "codes: \(error)")
                try checkEqual(error.violations.count, 4, "violations: \(error)")
                try check(violation(error, .missingMandatoryProperty, account.objectID, "pin"), "1570 on the cleared pin: \(error)")
                try check(account.isUpdated, "the update stays pending")
                return account.objectID
            }
            let second = env.newContext()
            try second.performAndWait {
                let account = try second.existingObject(with: id)
                try checkEqual(try account.value(forKey: "username") as? String, "ada", "another context reads the stored name")
                try checkEqual(try account.value(forKey: "balance") as? Double, 10, "and the stored balance")
            }
            try context.performAndWait {
                let account = try context.existingObject(with: id)
                try account.setValue("ada_l", forKey: "username")
                try account.setValue(999_999, forKey: "balance")
                try account.setValue(4321, forKey: "pin")
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let account = try fresh.existingObject(with: id)
                try checkEqual(try account.value(forKey: "username") as? String, "ada_l", "the fixed name after reopen")
                try checkEqual(try account.value(forKey: "balance") as? Double, 999_999, "the fixed balance after reopen")
                try checkEqual(integer(try account.value(forKey: "pin")), 4321, "the fixed pin after reopen")
            }
        },
        ConformanceScenario("validation.deletedObjectsAreNotValidated") { env in
            // A broken object that is deleted before the save does not block it.
            let context = env.newContext()
            try context.performAndWait {
                let saved = try makeAccount(context, "saved", balance: 1)
                try context.save()
                try saved.setValue("NO!", forKey: "username")
                context.delete(saved)
                let draft = Student(context: context); draft.age = 999
                context.delete(draft)
                let kept = Student(context: context); kept.name = "kept"
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(try fresh.fetch(FetchRequest<Student>()).map(\.name), ["kept"], "students after reopen")
                try checkEqual(try fresh.count(for: FetchRequest<ManagedObject>(entityName: "Account")), 0, "accounts after reopen")
            }
        },
    ]
}

// MARK: Helpers

extension ValidationScenarios {
    /// Whether `error` holds a violation with `code` on `key` of `objectID`.
    static func violation(_ error: ValidationError, _ code: ValidationError.Code, _ objectID: ObjectID, _ key: String) -> Bool {
        error.violations.contains { $0.code == code && $0.objectID == objectID && $0.key == key }
    }

    /// An integer attribute's value, whatever integer type key-value access returns it as.
    static func integer(_ value: Any?) -> Int? {
        (value as? any BinaryInteger).map { Int($0) }
    }

    /// A named player.
    static func player(_ context: ManagedObjectContext, _ name: String) throws -> ManagedObject {
        let player = try context.insertObject(entityName: "Player")
        try player.setValue(name, forKey: "name")
        return player
    }

    /// A roster with `players` named players and, if asked, a captain (who is not a player).
    static func makeRoster(_ context: ManagedObjectContext, _ name: String, players: Int, captain: Bool = false) throws -> ManagedObject {
        let roster = try context.insertObject(entityName: "Roster")
        try roster.setValue(name, forKey: "name")
        for index in 0..<players { try roster.add(try player(context, "\(name)-\(index)"), to: "players") }
        if captain { try roster.setValue(try player(context, "\(name)-captain"), forKey: "captain") }
        return roster
    }

    /// An account with a username, a balance and a pin.
    static func makeAccount(_ context: ManagedObjectContext, _ username: String, balance: Double) throws -> ManagedObject {
        let account = try context.insertObject(entityName: "Account")
        try account.setValue(username, forKey: "username")
        try account.setValue(balance, forKey: "balance")
        try account.setValue(1, forKey: "pin")
        return account
    }
}
