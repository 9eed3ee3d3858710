import Foundation
import ObjectGraph
import Testing

/// Minimum and maximum rules on integer attributes compare integers exactly: converted to a
/// `Double`, an Int64 beyond 2^53 loses its last bits, and 2^53 + 1 passed a maximum of 2^53.
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
}
