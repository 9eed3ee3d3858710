import Foundation
import ObjectGraph

/// A merge policy resolves a conflict by changing what the save stores; the resolved changes
/// must pass the same validation as any save's, or a rule the store relies on is broken.
extension ConflictScenarios {
    static let revalidation: [ConformanceScenario] = [
        ConformanceScenario("conflicts.resolvedDeletionStillObeysDeny") { env in
            // An owner whose deny relationship was empty when this context loaded it is deleted
            // here; meanwhile another context adds an item to it. Store-trumps deletes the owner
            // again from its stored row: that row now holds the item, so the deny rule refuses.
            let setup = env.newContext()
            let ownerID = try setup.performAndWait {
                let owner = try setup.insertObject(entityName: "Owner")
                try owner.setValue("owner", forKey: "name")
                try setup.save()
                return owner.objectID
            }
            let context = env.newContext()
            var held: ManagedObject?
            try context.performAndWait {
                let owner = try context.existingObject(with: ownerID)
                let items = try owner.value(forKey: "denyMany") as? Set<ManagedObject>
                try checkEqual(items?.count, 0, "no items when loaded")
                held = owner
            }
            let other = env.newContext()
            try other.performAndWait {
                let item = try other.insertObject(entityName: "Item")
                try item.setValue("item", forKey: "name")
                try item.setValue(try other.existingObject(with: ownerID), forKey: "denyManyOwner")
                try other.save()
            }
            try context.performAndWait {
                guard let owner = held else { return }
                context.mergePolicy = .storeTrumps
                context.delete(owner)
                let error = try checkThrows(ValidationError.self, "deleting an owner that now holds an item") { try context.save() }
                try check(violation(error, .relationshipDeniedDelete, ownerID, "denyMany"), "1600 on Owner.denyMany: \(error)")
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(try fresh.count(for: FetchRequest<ManagedObject>(entityName: "Owner")), 1, "the owner is still stored")
                let item = try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Item"))[0]
                let owner = try item.value(forKey: "denyManyOwner") as? ManagedObject
                try checkEqual(try owner?.value(forKey: "name") as? String, "owner", "the item's owner is a stored row")
            }
        },
        ConformanceScenario("conflicts.resolvedMembershipStillObeysMaximumCount") { env in
            // Both contexts fill a roster of two players to its maximum of three; object-trumps
            // replays this context's addition onto the other's, which would make four.
            let setup = env.newContext()
            let rosterID = try setup.performAndWait {
                let roster = try ValidationScenarios.makeRoster(setup, "r", players: 2, captain: true)
                try setup.save()
                return roster.objectID
            }
            let context = env.newContext()
            var held: ManagedObject?
            try context.performAndWait {
                let roster = try context.existingObject(with: rosterID)
                try checkEqual((try roster.value(forKey: "players") as? Set<ManagedObject>)?.count, 2, "players when loaded")
                held = roster
            }
            let other = env.newContext()
            try other.performAndWait {
                try other.existingObject(with: rosterID).add(try ValidationScenarios.player(other, "theirs"), to: "players")
                try other.save()
            }
            try context.performAndWait {
                guard let roster = held else { return }
                context.mergePolicy = .objectTrumps
                try roster.add(try ValidationScenarios.player(context, "ours"), to: "players")
                let error = try checkThrows(ValidationError.self, "a fourth player after the merge") { try context.save() }
                try check(violation(error, .relationshipExceedsMaximumCount, rosterID, "players"), "1590 on Roster.players: \(error)")
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let players = try fresh.existingObject(with: rosterID).value(forKey: "players") as? Set<ManagedObject>
                try checkEqual(players?.count, 3, "the stored roster keeps at most three players")
            }
        },
        ConformanceScenario("conflicts.policyRetriesWhileOtherSavesLandInBetween") { env in
            // Many writers on the same rows: between this save's resolution of a conflict and
            // its retry, another save changes an object of it again. The policy resolves
            // against that save too (it used to retry once and throw), as Core Data's policy
            // saves do not fail on a version conflict.
            let setup = env.newContext()
            let (probeID, studentID) = try setup.performAndWait {
                let probe = Probe(context: setup); probe.name = "seed"
                let student = Student(context: setup); student.name = "Ada"; student.age = 36
                try setup.save()
                return (probe.objectID, student.objectID)
            }
            let writer = env.newContext("writer"), other = env.newContext("other")
            writer.mergePolicy = .storeTrumps
            let (probe, student) = try writer.performAndWait {
                (try writer.existingObject(with: probeID) as! Probe, try writer.existingObject(with: studentID) as! Student)
            }
            try other.performAndWait {
                (try other.existingObject(with: probeID) as! Probe).name = "theirs"
                try other.save()
            }
            try writer.performAndWait {
                // Store-trumps takes the probe's stored name, which is then validated again:
                // that is after the first resolution and before the retry, where a second save
                // changes the student, whose row the retry sends.
                var interfered = false
                probe.onValidate = { probe in
                    guard probe.validatedNames.last == "theirs", !interfered else { return }
                    interfered = true
                    try? other.performAndWait {
                        (try other.existingObject(with: studentID) as! Student).age = 50
                        try other.save()
                    }
                }
                defer { probe.onValidate = nil }
                probe.name = "mine"
                student.name = "Bea"
                do { try writer.save() } catch let error as MergeConflictError {
                    throw ScenarioFailure(message: "the store-trumps save failed on the second save: \(error)", file: #filePath, line: #line)
                }
                try check(interfered, "the second save landed between the resolution and the retry")
                try check(!writer.hasChanges, "the save went through")
            }
            try checkEqual(try storedStudent(env, studentID).name, "Bea", "the writer's name, changed only there, is stored")
            try checkEqual(try storedStudent(env, studentID).age, 50, "the second save's age is kept")
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(try (fresh.existingObject(with: probeID) as! Probe).name, "theirs", "the stored name trumps")
            }
        },
    ]

    private static func violation(_ error: ValidationError, _ code: ValidationError.Code, _ objectID: ObjectID, _ key: String) -> Bool {
        ValidationScenarios.violation(error, code, objectID, key)
    }
}
