import Foundation
import ObjectGraph
import Testing

/// Range rules (minimum, maximum, earliest, latest) hold for NaN too: it lies in no range.
@Suite("NaN and range rules")
struct RangeRuleNaNTests {
    static func reading() throws -> (PersistentContainer, ManagedObjectContext) {
        let model = try ManagedObjectModel { m in
            m.entity("Reading") { e in
                e.attribute("celsius", .double, optional: true, rules: [.minimum(-273.15), .maximum(1_000)])
                e.attribute("ratio", .decimal, optional: true, rules: [.minimum(0)])
                e.attribute("takenAt", .date, optional: true, rules: [.earliest(Date(timeIntervalSince1970: 0))])
            }
        }
        let container = try PersistentContainer(model: model, stores: [.inMemory()])
        return (container, container.newBackgroundContext())
    }

    // A NaN compared with `< minimum` and `> maximum` is neither, so it used to pass every
    // range rule and be saved.
    @Test("a NaN double, decimal or date breaks the range rules of its attribute")
    func nanBreaksRanges() throws {
        let (_, context) = try Self.reading()
        try context.performAndWait {
            let reading = try context.insertObject(entityName: "Reading")
            try reading.setValue(Double.nan, forKey: "celsius")
            try reading.setValue(Decimal.nan, forKey: "ratio")
            try reading.setValue(Date(timeIntervalSinceReferenceDate: .nan), forKey: "takenAt")
            let error = #expect(throws: ValidationError.self) { try context.save() }
            let codes = Set(error?.violations.map { "\($0.key) \($0.code.rawValue)" } ?? [])
            // numberTooSmall 1620, numberTooLarge 1610, dateTooSoon 1640.
            #expect(codes == ["celsius 1620", "celsius 1610", "ratio 1620", "takenAt 1640"], "\(codes)")
            #expect(error?.violations.allSatisfy { !$0.message.contains("4713") } == true, "\(String(describing: error))")
            try reading.setValue(21.5, forKey: "celsius")
            try reading.setValue(Decimal(1), forKey: "ratio")
            try reading.setValue(Date(timeIntervalSince1970: 1), forKey: "takenAt")
            try context.save()
        }
    }

    // A NaN date bound is before and after every date, so the save refused every date; the
    // model accepted it, where it refuses a NaN minimum or maximum.
    @Test("a NaN earliest or latest date is refused when the model is built", arguments: [
        ValidationRule.earliest(Date(timeIntervalSinceReferenceDate: .nan)),
        .latest(Date(timeIntervalSinceReferenceDate: .nan)),
    ])
    func nanDateBoundIsRefused(_ rule: ValidationRule) {
        let error = expectModelError(.invalidRule, entity: "Reading", property: "takenAt") { m in
            m.entity("Reading") { e in e.attribute("takenAt", .date, optional: true, rules: [rule]) }
        }
        #expect(error?.message.contains("no date") == true, "\(String(describing: error))")
        #expect(error?.message.contains("4713") == false, "\(String(describing: error))")
    }

    // The default check compared with Date's `<` and `>`, which a NaN date passes, while the
    // save compares intervals, which it fails: the model was accepted and every save of a
    // new object failed.
    @Test("a NaN date default breaks an earliest or latest rule when the model is built", arguments: [
        ValidationRule.earliest(.distantPast),
        .latest(.distantFuture),
    ])
    func nanDateDefaultIsRefused(_ rule: ValidationRule) {
        expectModelError(.invalidDefault, entity: "Reading", property: "takenAt") { m in
            m.entity("Reading") { e in e.attribute("takenAt", .date, default: Date(timeIntervalSinceReferenceDate: .nan), rules: [rule]) }
        }
    }
}
