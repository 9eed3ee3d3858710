import Foundation
import ObjectGraph

/// Deleting rows the context never reads: a fault deleted unfired, of an entity whose delete
/// rules read nothing of its row, is deleted by the store alone, so a store-specific test can
/// damage such a row (its version, say) and check that the store still deletes it.
extension StoreDamageProbe {
    /// Two entities without relationships, so that no delete rule reads their rows: `Plain`
    /// (a string `name`) and `Indexed` (an indexed double `score`, whose index entry a store
    /// must find from the row's values when it deletes it).
    public static func relationshipFreeModel() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Plain") { e in e.attribute("name", .string) }
            m.entity("Indexed") { e in e.attribute("score", .double, indexed: true) }
        }
    }

    /// Saves one `Plain` ("one") and one `Indexed` (1.5) into `container`, each the first row
    /// of its entity (primary key 1 in the built-in stores).
    public static func seedRelationshipFree(_ container: PersistentContainer) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            try context.insertObject(entityName: "Plain").setValue("one", forKey: "name")
            try context.insertObject(entityName: "Indexed").setValue(1.5, forKey: "score")
            try context.save()
        }
    }

    /// Deletes the object of `entity` with primary key `primaryKey` through its fault, never
    /// fired, and saves; then counts, in a fresh context, the `Plain`s, the `Indexed`s and the
    /// `Indexed`s whose score is 1.5 (found through the index where a store keeps one).
    public static func deleteUnread(_ entity: String, primaryKey: Int64 = 1, in container: PersistentContainer) throws -> [Int] {
        guard let store = container.coordinator.persistentStores.first else { return [] }
        let id = ObjectID(entityName: entity, storeIdentifier: store.identifier, primaryKey: primaryKey)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            context.delete(context.object(with: id))
            try context.save()
        }
        let check = container.newBackgroundContext()
        var scored = FetchRequest<ManagedObject>(entityName: "Indexed")
        scored.predicate = .key("score") == 1.5
        return try check.performAndWait {
            try [FetchRequest<ManagedObject>(entityName: "Plain"), FetchRequest<ManagedObject>(entityName: "Indexed"), scored]
                .map { try check.count(for: $0) }
        }
    }
}
