import Foundation
import ObjectGraph
import Testing

/// Minimum and maximum rules on integer attributes compare integers exactly: converted to a
/// `Double`, an Int64 beyond 2^53 loses its last bits, and 2^53 + 1 passed a maximum of 2^53.
/// Decimals are compared exactly too, with the decimal their bound writes.
@Suite("Integer range rules")
struct IntegerRangeRuleTests {
    static let limit: Int64 = 1 << 53

    @Test("an Int64 one past a bound of 2^53 breaks it, at save and on demand")
    func onePastTheBound() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Counter") { e in
                e.attribute("ticks", .integer64, rules: [.minimum(-Double(Self.limit)), .maximum(Double(Self.limit))])
            }
        }
        let container = try PersistentContainer(model: model, stores: [.inMemory()])
        defer { container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let counter = try context.insertObject(entityName: "Counter")
            for (value, code) in [(Self.limit + 1, ValidationError.Code.numberTooLarge), (-Self.limit - 1, .numberTooSmall)] {
                try counter.setValue(value, forKey: "ticks")
                let error = #expect(throws: ValidationError.self) { try context.save() }
                #expect(error?.violations.map(\.code) == [code], "\(value): \(String(describing: error))")
                let asked = #expect(throws: ValidationError.self) { try counter.validateValue(value, forKey: "ticks") }
                #expect(asked?.violations.map(\.code) == [code], "validateValue(\(value))")
            }
            for value in [Self.limit, -Self.limit, 0] {
                try counter.validateValue(value, forKey: "ticks")
            }
            try counter.setValue(Self.limit, forKey: "ticks")
            try context.save()
        }
    }

    @Test("a default one past its own maximum is refused with the model")
    func defaultPastTheBound() {
        expectModelError(.invalidDefault, entity: "Counter", property: "ticks") { m in
            m.entity("Counter") { e in
                e.attribute("ticks", .integer64, default: Self.limit + 1, rules: [.maximum(Double(Self.limit))])
            }
        }
    }

    @Test("bounds beyond Int64's range and fractional bounds still hold")
    func extremeAndFractionalBounds() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Counter") { e in
                e.attribute("wide", .integer64, optional: true, rules: [.minimum(-1e19), .maximum(1e19)])
                e.attribute("half", .integer32, optional: true, rules: [.minimum(0.5), .maximum(2.5)])
            }
        }
        let container = try PersistentContainer(model: model, stores: [.inMemory()])
        defer { container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let counter = try context.insertObject(entityName: "Counter")
            for value in [Int64.min, Int64.max] { try counter.validateValue(value, forKey: "wide") }
            for value in [1, 2] { try counter.validateValue(value, forKey: "half") }
            for (value, code) in [(0, ValidationError.Code.numberTooSmall), (3, .numberTooLarge)] {
                let error = #expect(throws: ValidationError.self) { try counter.validateValue(value, forKey: "half") }
                #expect(error?.violations.map(\.code) == [code], "\(value)")
            }
        }
    }

    @Test("a decimal is compared with the bound its rule writes, exactly: 0.30000000000000000001 breaks a maximum of 0.3 (as a Double it equalled 0.3), and 0.3 itself and a minimum of 0.1 hold")
    func decimalBoundsAreExact() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Price") { e in e.attribute("amount", .decimal, rules: [.minimum(0.1), .maximum(0.3)]) }
        }
        let container = try PersistentContainer(model: model, stores: [.inMemory()])
        defer { container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let price = try context.insertObject(entityName: "Price")
            let posix = Locale(identifier: "en_US_POSIX")
            func decimal(_ text: String) throws -> Decimal {
                let parsed: Decimal? = Decimal(string: text, locale: posix)
                return try #require(parsed)
            }
            for text in ["0.1", "0.3", "0.2"] {
                try price.validateValue(try decimal(text), forKey: "amount")
            }
            for (text, code) in [("0.30000000000000000001", ValidationError.Code.numberTooLarge), ("0.09999999999999999999", .numberTooSmall)] {
                let value = try decimal(text)
                let error = #expect(throws: ValidationError.self) { try price.validateValue(value, forKey: "amount") }
                #expect(error?.violations.map(\.code) == [code], "\(text)")
            }
        }
    }
}
