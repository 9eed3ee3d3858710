import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Testing

/// The same small graph twice: once saved (the store evaluates predicates over stored rows) and
/// once only inserted (the context evaluates them over live objects). Every check runs on both,
/// so the two paths of the shared evaluator must agree.
///
/// Students (by `key`):
///
/// | key | text      | i   | d    | m    | school | grades   |
/// |-----|-----------|-----|------|------|--------|----------|
/// | a   | "École"   | 1   | 1.5  | 2.5  | North  | 7, 9     |
/// | b   | "ecole"   | 2   | 2.0  | 2    | North  | 3, 8     |
/// | c   | "STRASSE" | 3   | 3.25 | 3.25 | South  | 6        |
/// | d   | "straße"  | nil | nil  | nil  | —      | —        |
/// | e   | nil       | 10  | -1   | 100  | North  | 9, 9, 10 |
///
/// Schools: North (a, b, e), South (c), East (none).
final class PredicateFixture {
    static let allKeys: Set<String> = ["a", "b", "c", "d", "e"]

    static func build(_ m: ModelBuilder) {
        m.entity("School") { e in
            e.attribute("name", .string, optional: true)
            e.toMany("students", "Student", inverse: "school")
        }
        m.entity("Student") { e in
            e.attribute("key", .string)
            e.attribute("text", .string, optional: true)
            e.attribute("i", .integer32, optional: true)
            e.attribute("d", .double, optional: true)
            e.attribute("m", .decimal, optional: true)
            e.toOne("school", "School", inverse: "students")
            e.toMany("grades", "Grade", inverse: "student")
        }
        m.entity("Grade") { e in
            e.attribute("score", .integer64)
            e.toOne("student", "Student", inverse: "grades")
        }
    }

    let containers: [PersistentContainer]
    let contexts: [ManagedObjectContext]
    let labels = ["saved", "pending"]

    init() throws {
        let model = try ManagedObjectModel(Self.build)
        var containers: [PersistentContainer] = []
        var contexts: [ManagedObjectContext] = []
        for save in [true, false] {
            let container = try PersistentContainer(model: model, stores: [.inMemory()])
            let context = container.newBackgroundContext()
            try context.performAndWait {
                try Self.populate(context)
                if save { try context.save() }
            }
            containers.append(container)
            contexts.append(context)
        }
        self.containers = containers
        self.contexts = contexts
    }

    private static func populate(_ context: ManagedObjectContext) throws {
        var schools: [String: ManagedObject] = [:]
        for name in ["North", "South", "East"] {
            let school = try context.insertObject(entityName: "School")
            try school.setValue(name, forKey: "name")
            schools[name] = school
        }
        let rows: [(String, String?, Int?, Double?, Decimal?, String?, [Int])] = [
            ("a", "École", 1, 1.5, Decimal(string: "2.5"), "North", [7, 9]),
            ("b", "ecole", 2, 2.0, 2, "North", [3, 8]),
            ("c", "STRASSE", 3, 3.25, Decimal(string: "3.25"), "South", [6]),
            ("d", "straße", nil, nil, nil, nil, []),
            ("e", nil, 10, -1, 100, "North", [9, 9, 10]),
        ]
        for (key, text, i, d, m, school, grades) in rows {
            let student = try context.insertObject(entityName: "Student")
            try student.setValue(key, forKey: "key")
            try student.setValue(text, forKey: "text")
            try student.setValue(i, forKey: "i")
            try student.setValue(d, forKey: "d")
            try student.setValue(m, forKey: "m")
            try student.setValue(school.flatMap { schools[$0] }, forKey: "school")
            for score in grades {
                let grade = try context.insertObject(entityName: "Grade")
                try grade.setValue(score, forKey: "score")
                try grade.setValue(student, forKey: "student")
            }
        }
    }

    /// The IDs of the objects of `entity` whose `name` or `key` is `value`, in `context`.
    func objectID(_ entity: String, _ attribute: String, _ value: String, in context: ManagedObjectContext) throws -> ObjectID {
        let request = FetchRequest<ManagedObject>(entityName: entity, predicate: key(attribute) == value)
        return try #require(try context.fetch(request).first).objectID
    }

    /// Fetches `entity` with the predicate `make` builds for each context, and returns the
    /// `label` attribute of the results; expects both contexts to give `expected`.
    func expect(
        _ expected: Set<String>, entity: String = "Student", label: String = "key",
        variables: [String: AttributeValue] = [:],
        sourceLocation: SourceLocation = #_sourceLocation,
        _ make: (ManagedObjectContext) throws -> FetchPredicate
    ) throws {
        for (context, name) in zip(contexts, labels) {
            let found: Set<String> = try context.performAndWait {
                var request = FetchRequest<ManagedObject>(entityName: entity, predicate: try make(context))
                request.substitutionVariables = variables
                return Set(try context.fetch(request).map { object in try object.value(forKey: label).map { "\($0)" } ?? "nil" })
            }
            #expect(found == expected, "\(name) objects", sourceLocation: sourceLocation)
        }
    }

    /// ``expect(_:entity:label:variables:sourceLocation:_:)`` for a predicate without object IDs.
    func expect(
        _ predicate: FetchPredicate, _ expected: Set<String>, entity: String = "Student", label: String = "key",
        variables: [String: AttributeValue] = [:], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try expect(expected, entity: entity, label: label, variables: variables, sourceLocation: sourceLocation) { _ in predicate }
    }

    /// Expects the fetch to be refused with ``ObjectGraphError/Code/invalidFetch`` mentioning
    /// every word, in both contexts.
    func expectInvalid(
        _ predicate: FetchPredicate, mentioning words: [String], entity: String = "Student",
        variables: [String: AttributeValue] = [:], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for context in contexts {
            context.performAndWait {
                var request = FetchRequest<ManagedObject>(entityName: entity, predicate: predicate)
                request.substitutionVariables = variables
                expectGraphError(.invalidFetch, mentioning: words, sourceLocation: sourceLocation) {
                    _ = try context.fetch(request)
                }
            }
        }
    }
}
