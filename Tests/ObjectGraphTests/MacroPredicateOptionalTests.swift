import Foundation
import ObjectGraph
import Testing

/// Optional conditions compared with each other answer as Swift's `==` on optional Booleans
/// does: equal when both are nil, or both present and equal — nil is not false.
@Suite("#Predicate: optional conditions compared")
struct MacroPredicateOptionalTests {
    /// The writers `predicate` holds for, evaluated by Swift itself on every writer.
    static func swiftNames(_ fixture: MacroFixture, _ predicate: Predicate<Writer>) throws -> [String] {
        try fixture.context.performAndWait {
            try fixture.context.fetch(FetchRequest<Writer>()).filter { try predicate.evaluate($0) }.map(\.name).sorted()
        }
    }

    @Test("x?.contains(a) == y?.z?.contains(b), and !=, fetch what Swift's filter keeps")
    func optionalConditionsCompared() throws {
        let fixture = try MacroFixture()
        let equal = #Predicate<Writer> { $0.nickname?.contains("o") == $0.imprint?.city?.contains("o") }
        let unequal = #Predicate<Writer> { $0.nickname?.contains("o") != $0.imprint?.city?.contains("o") }
        let constant = #Predicate<Writer> { $0.nickname?.contains("o") == true }
        for predicate in [equal, unequal, constant] {
            let expected = try Self.swiftNames(fixture, predicate)
            #expect(try fixture.names(FetchRequest(predicate: predicate)) == expected)
        }
        // The fixture has writers on each side of the question (else the checks prove little).
        let kept = try Self.swiftNames(fixture, equal), dropped = try Self.swiftNames(fixture, unequal)
        #expect(!kept.isEmpty && !dropped.isEmpty)
    }

    @Test("a filtered count through an absent to-one is refused unless '?? 0' says what nil means; with it, Swift's answer")
    func filteredCountThroughAnOptionalToOne() throws {
        let fixture = try MacroFixture()
        // In Swift this is nil == 0, false, for a writer without an imprint; counted, it was 0.
        let bare = #Predicate<Writer> { $0.imprint?.writers.filter { $0.active }.count == 0 }
        do {
            _ = try fixture.names(FetchRequest(predicate: bare))
            Issue.record("translated a count that Swift gives as nil for writers without an imprint")
        } catch let error as ObjectGraphError {
            #expect(error.code == .invalidFetch)
        }
        let defaulted = #Predicate<Writer> { ($0.imprint?.writers.filter { $0.active }.count ?? 0) == 0 }
        let expected = try Self.swiftNames(fixture, defaulted)
        #expect(try fixture.names(FetchRequest(predicate: defaulted)) == expected)
        #expect(!expected.isEmpty)
    }

    @Test("'?? false' / '?? true' on an optional Boolean as a condition, and '(x ?? \"\").isEmpty', fetch what Swift's filter keeps")
    func coalescedBooleansAndEmptyStrings() throws {
        // Both threw invalidFetch: the first as "NilCoalesce used as a condition", the second
        // naming only an unprintable key path of String.
        let fixture = try MacroFixture()
        let cases: [(Predicate<Writer>, FetchPredicate, [String])] = [
            (#Predicate<Writer> { $0.featured ?? false }, try FetchPredicate(format: "featured == YES"), ["Ada"]),
            (#Predicate<Writer> { $0.featured ?? true }, try FetchPredicate(format: "featured == YES OR featured == nil"), ["Ada", "Alf", "Cyd", "Dee"]),
            (#Predicate<Writer> { !($0.featured ?? true) }, try FetchPredicate(format: "NOT (featured == YES OR featured == nil)"), ["Bob"]),
            (#Predicate<Writer> { ($0.nickname ?? "").isEmpty }, try FetchPredicate(format: "nickname == '' OR nickname == nil"), ["Bob"]),
            (#Predicate<Writer> { !($0.nickname ?? "x").isEmpty }, try FetchPredicate(format: "NOT nickname == ''"), ["Ada", "Alf", "Bob", "Cyd", "Dee"]),
        ]
        for (predicate, format, names) in cases {
            #expect(try FetchPredicate(predicate, model: fixture.model) == format)
            let fetched = try fixture.names(FetchRequest(predicate: predicate))
            #expect(fetched == names)
            #expect(fetched == (try Self.swiftNames(fixture, predicate)))
            #expect(fetched == (try fixture.names(FetchRequest(predicate: format))))
        }
    }

    @Test("a Boolean attribute compared with a condition, '$0.active == ($0.rating > 4)', fetches what Swift's filter keeps")
    func booleanAttributeComparedWithACondition() throws {
        // Threw invalidFetch "a condition compared with something other than true, false, nil
        // or another condition".
        let fixture = try MacroFixture()
        let first = #Predicate<Writer> { $0.active == ($0.rating > 4) }
        let flipped = #Predicate<Writer> { ($0.rating > 4) != $0.active }
        let coalesced = #Predicate<Writer> { ($0.featured ?? true) == ($0.age == nil) }
        let optionalCondition = #Predicate<Writer> { $0.active == ($0.nickname?.contains("e") ?? false) }
        let predicates = [first, flipped, coalesced, optionalCondition]
        for predicate in predicates {
            let expected = try Self.swiftNames(fixture, predicate)
            #expect(try fixture.names(FetchRequest(predicate: predicate)) == expected)
        }
        // Writers on each side of the first question (Ada and Cyd agree, Alf does not).
        #expect(try Self.swiftNames(fixture, predicates[0]) == ["Ada", "Bob", "Cyd", "Dee"])
    }
}
