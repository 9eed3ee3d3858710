import Foundation
import ObjectGraph

/// Uniqueness constraints (code 1551): among unsaved objects, against stored rows, and between
/// saves racing through one coordinator.
extension ValidationScenarios {
    static let uniqueness: [ConformanceScenario] = [
        ConformanceScenario("validation.uniqueness.unsavedAndStored") { env in
            let context = env.newContext()
            try context.performAndWait {
                let a = Login(context: context); a.email = "a@x"; a.owner = "A"
                let b = Login(context: context); b.email = "a@x"; b.owner = "B"
                try expectUniquenessViolation(try context.save(), "two unsaved logins with one email")
                b.email = "b@x"
                let c = Login(context: context); c.owner = "C"
                let d = Login(context: context); d.owner = "D"  // nil emails never collide
                try context.save()
            }
            let other = env.newContext()
            try other.performAndWait {
                let e = Login(context: other); e.email = "a@x"; e.owner = "E"
                try expectUniquenessViolation(try other.save(), "an unsaved login with a stored login's email")
                e.email = "e@x"
                try other.save()
                // Swapping two stored values in one save is no collision: each is judged by its
                // new state.
                let logins = try other.fetch(FetchRequest<Login>(predicate: try FetchPredicate(format: "email IN {'a@x', 'b@x'}")))
                for login in logins { login.email = login.email == "a@x" ? "b@x" : "a@x" }
                try other.save()
            }
            try context.performAndWait {
                let owners = try context.fetch(FetchRequest<Login>(predicate: try FetchPredicate(format: "email != nil"), sortKeys: [SortKey("email")])).map { "\($0.email ?? "-")=\($0.owner ?? "-")" }
                try checkEqual(owners, ["a@x=B", "b@x=A", "e@x=E"], "stored logins")
            }
        },
        ConformanceScenario("validation.uniqueness.racingSavesStoreOneRow") { env in
            // Contexts of one coordinator inserting the same email at once: each validated
            // against the store before any had saved, and all were stored (an audit). One
            // save lands; the others fail as if they had validated after it.
            let workers = 6
            let ready = DispatchSemaphore(value: 0)
            let go = DispatchSemaphore(value: 0)
            let done = DispatchGroup()
            let outcomes = SharedValue<[String]>([])
            for worker in 0..<workers {
                done.enter()
                let context = env.newContext("worker \(worker)")
                Thread.detachNewThread {
                    defer { done.leave() }
                    let outcome: String
                    do {
                        try context.performAndWait {
                            let login = Login(context: context); login.email = "same@x"; login.owner = "w\(worker)"
                            try context.processPendingChanges()
                            ready.signal()
                            go.wait()
                            try context.save()
                        }
                        outcome = "saved"
                    } catch let error as ValidationError where error.violations.allSatisfy({ $0.code == .uniquenessConstraint }) {
                        outcome = "refused"
                    } catch {
                        outcome = "\(error)"
                    }
                    outcomes.update { $0.append(outcome) }
                }
            }
            for _ in 0..<workers { ready.wait() }
            for _ in 0..<workers { go.signal() }
            done.wait()
            try checkEqual(outcomes.get().sorted(), ["refused", "refused", "refused", "refused", "refused", "saved"], "outcomes of \(workers) racing saves")
            let verify = env.newContext()
            try verify.performAndWait {
                try checkEqual(try verify.count(for: FetchRequest<Login>(predicate: try FetchPredicate(format: "email == 'same@x'"))), 1, "stored logins with the email")
            }
        },
    ]

    /// Checks that `save` throws a ``ValidationError`` whose violations are all uniqueness ones.
    static func expectUniquenessViolation(_ save: @autoclosure () throws -> Void, _ what: String, file: String = #filePath, line: Int = #line) throws {
        do {
            try save()
        } catch let error as ValidationError {
            try check(!error.violations.isEmpty && error.violations.allSatisfy { $0.code == .uniquenessConstraint },
                      "\(what): expected only uniqueness violations, got \(error)", file: file, line: line)
            return
        }
        throw ScenarioFailure(message: "\(what): the save was not refused", file: file, line: line)
    }
}
