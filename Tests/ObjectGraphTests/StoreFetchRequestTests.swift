import ObjectGraph
import Testing

/// How a store request is checked: `toOne == object` is recognized and left uncompiled;
/// everything else is compiled, so what cannot compile still fails before any store is asked.
@Suite("Store fetch requests")
struct StoreFetchRequestTests {
    let model: ManagedObjectModel
    let student: EntityDescription
    let school: ObjectID
    let grade: ObjectID

    init() throws {
        model = try ManagedObjectModel(PredicateFixture.build)
        student = try model.requireEntity("Student")
        school = ObjectID(entityName: "School", storeIdentifier: "S", primaryKey: 1)
        grade = ObjectID(entityName: "Grade", storeIdentifier: "S", primaryKey: 1)
    }

    func form(_ predicate: FetchPredicate) -> StoreFetchRequest.ToOneComparison? {
        guard case .comparison(let comparison) = predicate else { return nil }
        return StoreFetchRequest.ToOneComparison(comparison, on: student)
    }

    @Test("a to-one named by itself compared with an object by == or != is recognized")
    func recognizesToOneComparisons() throws {
        let equal = try #require(form(.key("school") == school))
        #expect(equal.relationship.name == "school")
        #expect(equal.object == school)
        #expect(equal.op == .equal)
        #expect(form(.key("school") != school)?.op == .notEqual)
    }

    @Test("near shapes are not: a to-many, an attribute, a key path, nil, ANY, another operator, an unknown name")
    func declinesOtherShapes() {
        #expect(form(.key("grades") == grade) == nil)
        #expect(form(.key("text") == school) == nil)
        #expect(form(.key("school.name") == school) == nil)
        #expect(form(.key("school") == nil) == nil)
        #expect(form(.comparison(PredicateComparison(.keyPath("school"), .equal, .object(school), modifier: .any))) == nil)
        #expect(form(.comparison(PredicateComparison(.keyPath("school"), .in, .list([.object(school)])))) == nil)
        #expect(form(.key("schol") == school) == nil)
        #expect(form(.key("school") == school && .key("key") == "a") == nil)
    }

    @Test("validating keeps the recognized form; anything else is compiled, and a failure thrown")
    func validatesByCompilingTheRest() throws {
        var simple = StoreFetchRequest(entity: student, predicate: .key("school") == school, resultType: .count)
        try simple.validate(in: model)
        #expect(simple.toOneComparison?.relationship.name == "school")
        // Compiled on demand, to the same comparison.
        guard case .comparison(let compiled)? = try simple.compiled(in: model).predicate,
              case .object(let object) = compiled.right else {
            Issue.record("expected a compiled comparison with an object")
            return
        }
        #expect(object == school)
        // A change of predicate forgets the kept form.
        simple.predicate = .key("key") == "a"
        #expect(simple.toOneComparison == nil)

        var sorted = StoreFetchRequest(entity: student, predicate: .key("school") == school, sortKeys: [SortKey("nickname")])
        #expect(throws: ObjectGraphError.self) { try sorted.validate(in: model) }
        var toMany = StoreFetchRequest(entity: student, predicate: .key("grades") == grade)
        #expect(throws: ObjectGraphError.self) { try toMany.validate(in: model) }
        var attribute = StoreFetchRequest(entity: student, predicate: .key("text") == school)
        #expect(throws: ObjectGraphError.self) { try attribute.validate(in: model) }
    }
}
