import Foundation
import ObjectGraph
import Testing

/// A class's `validatedKeys` are checked against its entity when the model is built, and a
/// class that validates nothing is never asked.
@Suite("Model: validated keys")
struct ValidatedKeysTests {
    /// Names a property its entity does not have.
    final class Misspelled: ManagedObject {
        override class var validatedKeys: Set<String> { ["titel"] }
    }

    /// Validates its title; counts the calls.
    final class Counted: ManagedObject {
        override class var validatedKeys: Set<String> { ["title"] }
        var calls: [String] = []
        override func validate(_ value: Any?, forKey key: String) throws { calls.append(key) }
    }

    /// Overrides the hook without listing a key: never asked.
    final class Unlisted: ManagedObject {
        var calls = 0
        override func validate(_ value: Any?, forKey key: String) throws { calls += 1 }
    }

    @Test func unknownKeyIsAModelError() {
        let error = expectModelError(.unknownProperty, entity: "Note", property: "titel") { m in
            m.entity("Note", as: Misspelled.self) { e in e.attribute("title", .string) }
        }
        #expect(error?.message.contains("Misspelled") == true, "the message names the class: \(String(describing: error))")
    }

    @Test func onlyListedKeysAreAsked() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Note", as: Counted.self) { e in
                e.attribute("title", .string)
                e.attribute("body", .string, optional: true)
            }
            m.entity("Memo", as: Unlisted.self) { e in e.attribute("text", .string) }
        }
        let container = try PersistentContainer(model: model, stores: [.inMemory()])
        let context = container.newBackgroundContext()
        let (noteCalls, memoCalls) = try context.performAndWait {
            let note = try context.insertObject(entityName: "Note") as! Counted
            try note.setValue("t", forKey: "title")
            try note.setValue("b", forKey: "body")
            let memo = try context.insertObject(entityName: "Memo") as! Unlisted
            try memo.setValue("m", forKey: "text")
            try context.save()
            return (note.calls, memo.calls)
        }
        #expect(noteCalls == ["title"])
        #expect(memoCalls == 0)
    }
}
