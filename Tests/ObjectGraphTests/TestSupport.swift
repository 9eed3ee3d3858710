import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Testing

/// Builds a model that is expected to be refused, and returns the error it was refused with.
@discardableResult
func expectModelError(
    _ code: ModelError.Code, entity: String?, property: String?,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ build: (ModelBuilder) throws -> Void
) -> ModelError? {
    let error = #expect(throws: ModelError.self, sourceLocation: sourceLocation) {
        _ = try ManagedObjectModel(build)
    }
    guard let error else { return nil }
    #expect(error.code == code, "expected \(code), got \(error)", sourceLocation: sourceLocation)
    #expect(error.entity == entity, "wrong entity in \(error)", sourceLocation: sourceLocation)
    #expect(error.property == property, "wrong property in \(error)", sourceLocation: sourceLocation)
    return error
}

/// Runs `body`, expects an ``ObjectGraphError`` of `code` whose message mentions every string
/// in `mentioning`, and returns it.
@discardableResult
func expectGraphError(
    _ code: ObjectGraphError.Code, mentioning: [String] = [],
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) -> ObjectGraphError? {
    let error = #expect(throws: ObjectGraphError.self, sourceLocation: sourceLocation) { try body() }
    guard let error else { return nil }
    #expect(error.code == code, "expected \(code), got \(error)", sourceLocation: sourceLocation)
    for word in mentioning {
        #expect(error.message.contains(word), "'\(error.message)' does not mention '\(word)'", sourceLocation: sourceLocation)
    }
    return error
}

/// A container with one in-memory store and a background context on it.
func makeContext(_ build: (ModelBuilder) throws -> Void) throws -> (PersistentContainer, ManagedObjectContext) {
    let model = try ManagedObjectModel(build)
    let container = try PersistentContainer(model: model, stores: [.inMemory()])
    return (container, container.newBackgroundContext())
}

/// A string attribute's value, read through key-value access.
func string(_ object: ManagedObject, _ key: String) throws -> String? {
    try object.value(forKey: key) as? String
}

/// A key-path operand: `key("age") > 30`, `key("name").beginsWith("A")`.
func key(_ path: String) -> ObjectGraph.PredicateOperand { .keyPath(path) }
