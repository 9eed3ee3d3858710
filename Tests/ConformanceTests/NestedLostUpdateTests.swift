import Foundation
import ObjectGraph
import ObjectGraphConformance
import Testing

private let auditBackends = allBackends.filter { ["memory", "sqlite", "binary", "lmdb"].contains($0.name) }

private func runAuditNested(_ name: String, _ body: @escaping @Sendable (ScenarioEnvironment) throws -> Void) {
    for backend in auditBackends {
        let outcome = ConformanceKit.run(ConformanceScenario(name, body: body), on: backend)
        if case .failed(let message) = outcome { Issue.record("\(backend.name): \(message)") }
    }
}

private func seedStudentNested(_ env: ScenarioEnvironment) throws -> ObjectID {
    let context = env.newContext()
    return try context.performAndWait {
        let ada = Student(context: context); ada.name = "Ada"; ada.age = 36
        try context.save()
        return ada.objectID
    }
}

/// A child's save writes only what the child changed into its parent (an audit).
@Suite("AuditA nested lost update")
struct AuditANestedLostUpdateTests {
    @Test func childSaveKeepsParentsUnrelatedChange() {
        runAuditNested("audit.childSaveKeepsParentsUnrelatedChange") { env in
            let id = try seedStudentNested(env)
            let parent = env.newContext("parent")
            let child = parent.newChildContext()
            try child.performAndWait {
                let ada = try child.existingObject(with: id) as! Student
                try checkEqual(ada.age, 36, "loaded in child")
            }
            try parent.performAndWait {
                let ada = try parent.existingObject(with: id) as! Student
                ada.age = 40
            }
            try child.performAndWait {
                let ada = try child.existingObject(with: id) as! Student
                ada.name = "Ann"
                try child.save()
            }
            try parent.performAndWait {
                let ada = try parent.existingObject(with: id) as! Student
                try checkEqual(ada.name, "Ann", "child's change")
                try checkEqual(ada.age, 40, "parent's own change to another attribute kept")
            }
        }
    }

    @Test func childSaveKeepsParentsUnrelatedToOneChange() {
        runAuditNested("audit.childSaveKeepsParentsUnrelatedToOneChange") { env in
            let setup = env.newContext()
            let (aID, bID, mID) = try setup.performAndWait {
                let a = Chat(context: setup); a.title = "A"
                let b = Chat(context: setup); b.title = "B"
                let m = Message(context: setup); m.text = "m"; m.chat = a
                try setup.save()
                return (a.objectID, b.objectID, m.objectID)
            }
            let parent = env.newContext("parent")
            let child = parent.newChildContext()
            try child.performAndWait { _ = (try child.existingObject(with: mID) as! Message).text }
            try parent.performAndWait {
                (try parent.existingObject(with: mID) as! Message).chat = (try parent.existingObject(with: bID) as! Chat)
            }
            try child.performAndWait {
                (try child.existingObject(with: mID) as! Message).text = "edited"
                try child.save()
            }
            try parent.performAndWait {
                let m = try parent.existingObject(with: mID) as! Message
                let a = try parent.existingObject(with: aID) as! Chat
                let b = try parent.existingObject(with: bID) as! Chat
                try checkEqual(m.text, "edited", "child's change")
                try checkEqual(m.chat?.title, "B", "parent's move kept")
                try check(b.messages.contains(m) && !a.messages.contains(m), "inverse: A \(a.messages.count), B \(b.messages.count)")
            }
        }
    }
}
