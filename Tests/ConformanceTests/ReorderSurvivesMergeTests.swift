import Foundation
import ObjectGraph
import ObjectGraphConformance
import OrderedCollections
import Testing

private let auditBackends = allBackends.filter { ["memory", "sqlite", "binary", "lmdb"].contains($0.name) }

private func runAuditReorder(_ name: String, _ body: @escaping @Sendable (ScenarioEnvironment) throws -> Void) {
    for backend in auditBackends {
        let outcome = ConformanceKit.run(ConformanceScenario(name, body: body), on: backend)
        if case .failed(let message) = outcome { Issue.record("\(backend.name): \(message)") }
    }
}

private final class BoxReorder<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}

private func didSaveReorder(_ context: ManagedObjectContext, _ body: () throws -> Void) throws -> ContextDidSave {
    let payload = BoxReorder<ContextDidSave?>(nil)
    let observer = NotificationCenter.default.addObserver(forName: .objectGraphContextDidSave, object: context, queue: nil) { note in
        payload.value = note.userInfo?[ContextDidSave.key] as? ContextDidSave
    }
    defer { NotificationCenter.default.removeObserver(observer) }
    try context.performAndWait(body)
    return payload.value!
}

/// A merge or a refresh keeping changes keeps an unsaved reorder of an ordered to-many (an
/// audit: the members were reloaded in the store's order, and the next save stored it).
@Suite("AuditA reorder survives merge")
struct AuditAReorderSurvivesMergeTests {
    @Test func mergeKeepsLocalReorder() {
        runAuditReorder("audit.mergeKeepsLocalReorder") { env in
            let setup = env.newContext()
            let pID = try setup.performAndWait {
                let p = Playlist(context: setup); p.name = "p"
                p.tracks = OrderedSet((0..<3).map { i -> Track in let t = Track(context: setup); t.title = "t\(i)"; return t })
                try setup.save()
                return p.objectID
            }
            let reader = env.newContext()
            let p = try reader.performAndWait {
                let p = try reader.existingObject(with: pID) as! Playlist
                p.$tracks.move(from: 2, to: 0)
                let n = Track(context: reader); n.title = "n"
                p.$tracks.insert(n, at: 1)
                try checkEqual(p.tracks.map(\.title), ["t2", "n", "t0", "t1"], "local order")
                return p
            }
            let writer = env.newContext()
            let payload = try didSaveReorder(writer) {
                let p = try writer.existingObject(with: pID) as! Playlist
                p.name = "renamed"
                let w = Track(context: writer); w.title = "w"
                p.$tracks.add(w)
                try writer.save()
            }
            try reader.performAndWait {
                try reader.mergeChanges(fromContextDidSave: payload)
                try checkEqual(p.name, "renamed", "merged")
                try checkEqual(p.tracks.map(\.title), ["t2", "n", "t0", "t1", "w"], "local order kept after merge, the track added elsewhere after")
                try reader.save()
            }
            let verify = env.newContext()
            try verify.performAndWait {
                let p = try verify.existingObject(with: pID) as! Playlist
                try checkEqual(p.tracks.map(\.title), ["t2", "n", "t0", "t1", "w"], "stored order")
            }
        }
    }

    @Test func refreshKeepsLocalReorder() {
        runAuditReorder("audit.refreshKeepsLocalReorder") { env in
            let setup = env.newContext()
            let pID = try setup.performAndWait {
                let p = Playlist(context: setup); p.name = "p"
                p.tracks = OrderedSet((0..<3).map { i -> Track in let t = Track(context: setup); t.title = "t\(i)"; return t })
                try setup.save()
                return p.objectID
            }
            let reader = env.newContext()
            try reader.performAndWait {
                let p = try reader.existingObject(with: pID) as! Playlist
                p.$tracks.move(from: 2, to: 0)
                reader.refresh(p, mergeChanges: true)
                try checkEqual(p.tracks.map(\.title), ["t2", "t0", "t1"], "local order kept after refresh")
                try reader.save()
            }
            let verify = env.newContext()
            try verify.performAndWait {
                let p = try verify.existingObject(with: pID) as! Playlist
                try checkEqual(p.tracks.map(\.title), ["t2", "t0", "t1"], "stored order")
            }
        }
    }
}
