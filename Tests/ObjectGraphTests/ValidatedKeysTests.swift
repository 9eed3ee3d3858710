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

    /// Refuses more than two members: a rule on a relationship the model cannot state.
    final class Capped: ManagedObject {
        override class var validatedKeys: Set<String> { ["items"] }
        override func validate(_ value: Any?, forKey key: String) throws {
            guard let members = value as? Set<ManagedObject> else { throw CappedShape(value: "\(type(of: value))") }
            if members.count > 2 { throw CappedFull() }
        }
    }
    struct CappedFull: Error {}
    struct CappedShape: Error { var value: String }

    private func cappedContext() throws -> (PersistentContainer, ManagedObjectContext) {
        try makeContext { m in
            m.entity("Box", as: Capped.self) { e in e.toMany("items", "Item", inverse: "box") }
            m.entity("Item") { e in e.toOne("box", "Box", inverse: "items") }
        }
    }

    /// A fault whose members changed through the inverse is validated as the loaded object
    /// would be (before, its hook was skipped and the third member was saved).
    @Test func faultWithMembersAddedThroughTheInverseIsAsked() throws {
        let (_, context) = try cappedContext()
        try context.performAndWait {
            let box = try context.insertObject(entityName: "Box")
            for _ in 0..<2 { try context.insertObject(entityName: "Item").setValue(box, forKey: "box") }
            try context.save()
            context.refresh(box, mergeChanges: false)
            try context.insertObject(entityName: "Item").setValue(box, forKey: "box")
            #expect(box.isFault, "the member was recorded on the fault")
            let error = #expect(throws: ValidationError.self) { try context.save() }
            #expect(error?.codes == [.managedObjectValidation] && error?.violations.first?.underlying is CappedFull, "\(String(describing: error))")
        }
    }

    /// validateValue passes a to-many's proposed members as a save passes them, a set (before,
    /// the array given, which the hook could not read as a set).
    @Test func validateValueGivesTheHookASetOfMembers() throws {
        let (_, context) = try cappedContext()
        try context.performAndWait {
            let box = try context.insertObject(entityName: "Box")
            let items = try (0..<3).map { _ in try context.insertObject(entityName: "Item") }
            let error = #expect(throws: ValidationError.self) { try box.validateValue(items, forKey: "items") }
            #expect(error?.violations.first?.underlying is CappedFull, "\(String(describing: error))")
            try box.validateValue(Array(items.prefix(2)), forKey: "items")
        }
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

    /// Inserts a note from its title's hook (a change the save has not listed).
    final class Meddler: ManagedObject {
        override class var validatedKeys: Set<String> { ["title"] }
        override func validate(_ value: Any?, forKey key: String) throws {
            guard let context = managedObjectContext, (value as? String) == "meddle" else { return }
            try context.insertObject(entityName: "Note").setValue("inserted by a hook", forKey: "title")
        }
    }

    /// Before: the save went through without the note the hook inserted, which stayed
    /// inserted in a context saying it had no changes, and no later save stored it.
    @Test func aHookChangingTheGraphFailsTheSave() throws {
        let (_, context) = try makeContext { m in
            m.entity("Note", as: Meddler.self) { e in e.attribute("title", .string) }
        }
        try context.performAndWait {
            try context.insertObject(entityName: "Note").setValue("meddle", forKey: "title")
            let error = #expect(throws: ObjectGraphError.self) { try context.save() }
            #expect(error?.code == .changedDuringValidation, "\(String(describing: error))")
            #expect(context.insertedObjects.count == 2, "both notes are still unsaved inserts")
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Note")) == 2, "a fetch sees both, pending")
        }
    }
}
