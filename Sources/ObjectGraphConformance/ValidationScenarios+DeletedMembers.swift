import Foundation
import ObjectGraph
import OrderedCollections

/// Relationship counts are checked against what the save stores. A member of a relationship
/// without an inverse that is deleted in the same save stays listed in the context until the
/// save, but the store drops it with its row (relationships.manyToNil...). Counted anyway, a
/// board at its maximum that swapped a deleted pin for a new one was refused (1590), and a
/// changed board at its minimum that lost a pin passed and was stored below it (an audit). (A board the save does not change is not validated, as in Core Data.)
extension ValidationScenarios {
    static let deletedMembers: [ConformanceScenario] = [
        ConformanceScenario("validation.countsLeaveOutMembersDeletedInTheSave") { env in
            let model = try ManagedObjectModel { m in
                m.entity("Board") { e in
                    e.attribute("name", .string)
                    e.toMany("pins", "Pin", ordered: true, min: 2, max: 2)  // many-to-nil, exactly two
                }
                m.entity("Pin") { e in e.attribute("name", .string) }
            }
            try UpsertStore.open(env, model: model) { container in
                let context = container.newBackgroundContext()
                try context.performAndWait {
                    func insert(_ entity: String, _ name: String) throws -> ManagedObject {
                        let object = try context.insertObject(entityName: entity)
                        try object.setValue(name, forKey: "name")
                        return object
                    }
                    let board = try insert("Board", "b")
                    let (p, q) = (try insert("Pin", "p"), try insert("Pin", "q"))
                    try board.setValue(OrderedSet([p, q]), forKey: "pins")
                    try context.save()

                    // At its maximum, one pin deleted and another added: two are stored.
                    context.delete(p)
                    try board.add(try insert("Pin", "r"), to: "pins")
                    try context.save()
                    try checkEqual(try (board.value(forKey: "pins") as! OrderedSet<ManagedObject>).map { try $0.value(forKey: "name") as! String }, ["q", "r"], "the pins after the save")

                    // One pin deleted, the board renamed in the same save (so it is validated):
                    // one would be stored, below the minimum of two.
                    context.delete((try board.value(forKey: "pins") as! OrderedSet<ManagedObject>)[0])
                    try board.setValue("renamed", forKey: "name")
                    let error = try checkThrows(ValidationError.self, "deleting a pin of a board that needs two") { try context.save() }
                    try checkEqual(error.violations.map(\.code), [.relationshipLacksMinimumCount], "the violation")
                    try checkEqual(error.violations.first?.objectID, board.objectID, "names the board")
                    try checkEqual(error.violations.first?.key, "pins", "and its pins")
                }
            }
        },
    ]
}
