import Foundation
import ObjectGraph

/// A child's new faults read the parent's objects as they are now, not as the child last read
/// them: the parent changes its objects in place (its own edits, a sibling's save), with no
/// save through the child's coordinator that could tell a cache.
extension NestedContextScenarios {
    static let freshness: [ConformanceScenario] = [
        // The child's coordinator cached the rows it read from its parent, and a fault made
        // after the parent's change fired from that cache: a fetch matching `name == "Ann"`
        // gave an object reading "Ada" (an audit).
        ConformanceScenario("nested.childFaultReadsParentsLaterChange") { env in
            let id = try ConflictScenarios.seedStudent(env)
            let parent = env.newContext("parent")
            let child = parent.newChildContext(name: "child")
            // Read, then let go: the child keeps no object for the record.
            try child.performAndWait { try checkEqual((try child.existingObject(with: id) as! Student).name, "Ada", "first read") }
            try parent.performAndWait { (try parent.existingObject(with: id) as! Student).name = "Ann" }
            try child.performAndWait {
                try check(child.registeredObject(for: id) == nil, "the child let its object go")
                let found = try child.fetch(FetchRequest<Student>(predicate: .key("name") == "Ann"))
                try checkEqual(found.map(\.objectID), [id], "the fetch matches the parent's value")
                try checkEqual(found.map(\.name), ["Ann"], "and its object reads it")
            }
        },
        ConformanceScenario("nested.childFaultReadsSiblingsSave") { env in
            let id = try ConflictScenarios.seedStudent(env)
            let parent = env.newContext("parent")
            let child = parent.newChildContext(name: "child")
            let sibling = parent.newChildContext(name: "sibling")
            try child.performAndWait { try checkEqual((try child.existingObject(with: id) as! Student).age, 36, "first read") }
            try sibling.performAndWait {
                (try sibling.existingObject(with: id) as! Student).age = 50
                try sibling.save()
            }
            try child.performAndWait {
                try checkEqual((try child.existingObject(with: id) as! Student).age, 50, "a new fault reads the sibling's save in the parent")
            }
        },
    ]
}
