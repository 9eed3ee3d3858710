import Foundation
import ObjectGraph

/// Uniqueness constraints (code 1551): among unsaved objects, against stored rows, between
/// saves racing through one coordinator, inherited by sub-entities, and compared by value.
/// The last two open a second store of the backend under test with a model of their own.
extension ValidationScenarios {
    static let uniqueness: [ConformanceScenario] = [
        ConformanceScenario("validation.uniqueness.unsavedAndStored") { env in
            let context = env.newContext()
            try context.performAndWait {
                let a = Login(context: context); a.email = "a@x"; a.owner = "A"
                let b = Login(context: context); b.email = "a@x"; b.owner = "B"
                let unsaved = try checkThrows(ValidationError.self, "two unsaved logins with one email") { try context.save() }
                try check(unsaved.contains(.uniquenessConstraint, key: "email"), "code 1551 on email: \(unsaved)")
                b.email = "b@x"
                let c = Login(context: context); c.owner = "C"
                let d = Login(context: context); d.owner = "D"  // nil emails never collide
                try context.save()
            }
            let other = env.newContext()
            try other.performAndWait {
                let e = Login(context: other); e.email = "a@x"; e.owner = "E"
                let stored = try checkThrows(ValidationError.self, "an unsaved login with a stored login's email") { try other.save() }
                try check(stored.contains(.uniquenessConstraint, key: "email"), "code 1551 on email: \(stored)")
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
            try racingLogins(env) { env.newContext("worker \($0)") }
        },
        ConformanceScenario("validation.uniqueness.racingSavesThroughTwoCoordinators", requires: [.multiProcess]) { env in
            // The same through two containers on one store: the store's write transaction,
            // not a coordinator's lock, is what the check and the write must share.
            let other = try PersistentContainer(model: env.model, stores: [env.backend.makeStore(env.directory)])
            defer { other.close() }
            try racingLogins(env) { $0 % 2 == 0 ? env.newContext("worker \($0)") : other.newBackgroundContext(name: "other worker \($0)") }
        },
        ConformanceScenario("validation.uniqueness.inheritedBySubEntities") { env in
            // A sub-entity's objects are its parent's objects too: Person.email is unique over
            // Persons and Pupils alike (Core Data: sub-entities may extend, never drop, a
            // parent's constraint).
            try withUniquenessStore(env) { container in
                let context = container.newBackgroundContext()
                try context.performAndWait {
                    let person = try context.insertObject(entityName: "Person")
                    try person.setValue("a@x", forKey: "email")
                    try context.save()
                    let pupil = try context.insertObject(entityName: "Pupil")
                    try pupil.setValue("a@x", forKey: "email")
                    let stored = try checkThrows(ValidationError.self, "a Pupil repeating a stored Person's email") { try context.save() }
                    try check(stored.contains(.uniquenessConstraint, key: "email"), "code 1551 on email: \(stored)")
                    context.rollback()
                    for _ in 0..<2 {
                        let pupil = try context.insertObject(entityName: "Pupil")
                        try pupil.setValue("b@x", forKey: "email")
                    }
                    let unsaved = try checkThrows(ValidationError.self, "two new Pupils sharing an email") { try context.save() }
                    try check(unsaved.contains(.uniquenessConstraint, key: "email"), "code 1551 on email: \(unsaved)")
                    context.rollback()
                    let other = try context.insertObject(entityName: "Pupil")
                    try other.setValue("c@x", forKey: "email")
                    try context.save()
                    try checkEqual(try context.count(for: FetchRequest<ManagedObject>(entityName: "Person")), 2, "persons stored")
                }
            }
        },
        ConformanceScenario("validation.uniqueness.comparesValuesNotTheirDescriptions") { env in
            // Two new objects collide exactly when a stored one and a new one would: by the
            // values, as the stores compare them. (Compared by description, dates a fraction
            // of a second apart and different data of one length collided, and 0.0 with -0.0
            // passed together though the store refuses the second after the first is saved.)
            try withUniquenessStore(env) { container in
                let context = container.newBackgroundContext()
                try context.performAndWait {
                    let base = Date(timeIntervalSince1970: 1_700_000_000)
                    for offset in [0, 0.25] {
                        let event = try context.insertObject(entityName: "Event")
                        try event.setValue(base.addingTimeInterval(offset), forKey: "at")
                    }
                    for bytes in [[1, 2, 3], [4, 5, 6]] as [[UInt8]] {
                        let event = try context.insertObject(entityName: "Event")
                        try event.setValue(Data(bytes), forKey: "blob")
                    }
                    try context.save()
                    try checkEqual(try context.count(for: FetchRequest<ManagedObject>(entityName: "Event")), 4, "events stored")
                    for score in [0.0, -0.0] {
                        let event = try context.insertObject(entityName: "Event")
                        try event.setValue(score, forKey: "score")
                    }
                    let together = try checkThrows(ValidationError.self, "0.0 and -0.0, both new") { try context.save() }
                    try check(together.contains(.uniquenessConstraint, key: "score"), "code 1551 on score: \(together)")
                    context.rollback()
                    let zero = try context.insertObject(entityName: "Event")
                    try zero.setValue(0.0, forKey: "score")
                    try context.save()
                    let negative = try context.insertObject(entityName: "Event")
                    try negative.setValue(-0.0, forKey: "score")
                    let apart = try checkThrows(ValidationError.self, "-0.0 after a stored 0.0") { try context.save() }
                    try check(apart.contains(.uniquenessConstraint, key: "score"), "code 1551 on score: \(apart)")
                    context.rollback()
                    let again = try context.insertObject(entityName: "Event")
                    try again.setValue(base.addingTimeInterval(0.25), forKey: "at")
                    let stored = try checkThrows(ValidationError.self, "a date equal to a stored one") { try context.save() }
                    try check(stored.contains(.uniquenessConstraint, key: "at"), "code 1551 on at: \(stored)")
                }
            }
        },
    ]

    /// Six contexts (`context(i)` for worker i) insert a login with one email each, released
    /// together right before saving: exactly one save lands.
    static func racingLogins(_ env: ScenarioEnvironment, _ context: (Int) -> ManagedObjectContext) throws {
        let workers = 6
        let ready = DispatchSemaphore(value: 0)
        let go = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        let outcomes = SharedValue<[String]>([])
        for worker in 0..<workers {
            done.enter()
            let context = context(worker)
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
                } catch let error as ValidationError where error.contains(.uniquenessConstraint, key: "email") {
                    outcome = "refused"
                } catch {
                    outcome = "\(error)"
                }
                outcomes.update { $0.append(outcome) }
            }
        }
        for _ in 0..<workers { try waitForSignal(ready) { "a worker's insert before its save" } }
        for _ in 0..<workers { go.signal() }
        try waitForThreads(done) { "the racing saves" }
        try checkEqual(outcomes.get().sorted(), ["refused", "refused", "refused", "refused", "refused", "saved"], "outcomes of \(workers) racing saves")
        let verify = env.newContext()
        try verify.performAndWait {
            try checkEqual(try verify.count(for: FetchRequest<Login>(predicate: try FetchPredicate(format: "email == 'same@x'"))), 1, "stored logins with the email")
        }
    }

    /// A model with a uniqueness constraint on a parent entity (Person.email, with a Pupil
    /// sub-entity), opened on the backend under test in its own folder, closed afterwards.
    static func withUniquenessStore(_ env: ScenarioEnvironment, _ body: (PersistentContainer) throws -> Void) throws {
        let model = try ManagedObjectModel { m in
            m.entity("Person") { e in
                e.attribute("email", .string, optional: true)
                e.unique("email")
            }
            m.entity("Pupil", parent: "Person") { e in e.attribute("grade", .integer16, default: 1) }
            m.entity("Event") { e in
                e.attribute("at", .date, optional: true)
                e.attribute("blob", .binaryData, optional: true)
                e.attribute("score", .double, optional: true)
                e.unique("at")
                e.unique("blob")
                e.unique("score")
            }
        }
        let folder = env.directory.appendingPathComponent("uniqueness-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let container = try PersistentContainer(model: model, stores: [env.backend.makeStore(folder)])
        defer { container.close() }
        try body(container)
    }
}
