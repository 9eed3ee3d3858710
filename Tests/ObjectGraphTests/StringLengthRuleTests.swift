import Foundation
import ObjectGraph
import Testing

/// Length rules count characters as Swift does (extended grapheme clusters), not UTF-16 units
/// as Core Data does: an emoji with a skin tone or a decomposed "é" is one character.
@Suite("String length rules")
struct StringLengthRuleTests {
    @Test("a maximum length of one admits one character of several UTF-16 units and refuses two characters; a minimum of two refuses it")
    func lengthsCountCharacters() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Badge") { e in
                e.attribute("short", .string, optional: true, rules: [.maxLength(1)])
                e.attribute("long", .string, optional: true, rules: [.minLength(2)])
            }
        }
        let container = try PersistentContainer(model: model, stores: [.inMemory()])
        defer { container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let badge = try context.insertObject(entityName: "Badge")
            for one in ["👍🏽", "e\u{301}", "🇩🇪"] {
                #expect(one.utf16.count > 1 && one.count == 1)
                try badge.validateValue(one, forKey: "short")
                let error = #expect(throws: ValidationError.self) { try badge.validateValue(one, forKey: "long") }
                #expect(error?.violations.map(\.code) == [.stringTooShort], "\(one)")
            }
            let error = #expect(throws: ValidationError.self) { try badge.validateValue("ab", forKey: "short") }
            #expect(error?.violations.map(\.code) == [.stringTooLong])
        }
    }
}
