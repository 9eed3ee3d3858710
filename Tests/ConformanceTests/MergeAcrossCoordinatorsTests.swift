import Foundation
import ObjectGraph
import ObjectGraphConformance
import Testing

private let auditBackends = allBackends.filter { ["memory", "sqlite", "binary", "lmdb"].contains($0.name) }

private func runAuditCoordinators(_ name: String, _ body: @escaping @Sendable (ScenarioEnvironment) throws -> Void) {
    for backend in auditBackends {
        let outcome = ConformanceKit.run(ConformanceScenario(name, body: body), on: backend)
        if case .failed(let message) = outcome { Issue.record("\(backend.name): \(message)") }
    }
}

private final class BoxCoordinators<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}

private func didSaveCoordinators(_ context: ManagedObjectContext, _ body: () throws -> Void) throws -> ContextDidSave {
    let payload = BoxCoordinators<ContextDidSave?>(nil)
    let observer = NotificationCenter.default.addObserver(forName: .objectGraphContextDidSave, object: context, queue: nil) { note in
        payload.value = note.userInfo?[ContextDidSave.key] as? ContextDidSave
    }
    defer { NotificationCenter.default.removeObserver(observer) }
    try context.performAndWait(body)
    return payload.value!
}

private func seedStudentCoordinators(_ env: ScenarioEnvironment) throws -> ObjectID {
    let context = env.newContext()
    return try context.performAndWait {
        let ada = Student(context: context); ada.name = "Ada"; ada.age = 36
        try context.save()
        return ada.objectID
    }
}

/// Merging a save made through another coordinator on the same store file drops this
/// coordinator's cached rows of the updated objects (an audit: on SQLite, whose rows are
/// cached, a fault fired after the merge showed the old values; LMDB bypasses the cache).
/// (The binary store is locked against a second opener; the in-memory one is not shared.)
@Suite("AuditA merge across coordinators")
struct AuditAMergeAcrossCoordinatorsTests {
    @Test func mergeAcrossCoordinatorsOfRegisteredFault() {
        runAuditCoordinators("audit.mergeAcrossCoordinatorsOfRegisteredFault") { env in
            guard env.capabilities.contains(.persistent), env.backend.name != "binary" else { return }
            let id = try seedStudentCoordinators(env)
            let reader = env.newContext()
            let ada = try reader.performAndWait {
                let found = try reader.fetch(FetchRequest<Student>())
                return found[0]
            }
            let other = try PersistentContainer(model: env.model, stores: [env.backend.makeStore(env.directory)])
            defer { other.close() }
            let writer = other.newBackgroundContext()
            let payload = try didSaveCoordinators(writer) {
                (try writer.existingObject(with: id) as! Student).name = "Lee"
                try writer.save()
            }
            try reader.performAndWait {
                try reader.mergeChanges(fromContextDidSave: payload)
                try checkEqual(ada.name, "Lee", "a save of another coordinator merged into a registered fault")
            }
        }
    }

    @Test func mergeAcrossCoordinatorsOfLoadedObject() {
        runAuditCoordinators("audit.mergeAcrossCoordinatorsOfLoadedObject") { env in
            guard env.capabilities.contains(.persistent), env.backend.name != "binary" else { return }
            let id = try seedStudentCoordinators(env)
            let reader = env.newContext()
            try reader.performAndWait { try checkEqual((try reader.existingObject(with: id) as! Student).name, "Ada", "loaded, then let go") }
            let other = try PersistentContainer(model: env.model, stores: [env.backend.makeStore(env.directory)])
            defer { other.close() }
            let writer = other.newBackgroundContext()
            let payload = try didSaveCoordinators(writer) {
                (try writer.existingObject(with: id) as! Student).name = "Lee"
                try writer.save()
            }
            try reader.performAndWait {
                try reader.mergeChanges(fromContextDidSave: payload)
                try checkEqual((try reader.existingObject(with: id) as! Student).name, "Lee", "[\(env.backend.name)] after merging a save of another coordinator")
            }
        }
    }
}
