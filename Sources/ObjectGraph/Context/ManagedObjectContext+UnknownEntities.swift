/// Object IDs naming an entity the model does not have.
///
/// Such an ID is user input: `ObjectID(uri:)` and `Codable` make one from any text, and an ID
/// saved under an older model may name an entity renamed since. ``ManagedObjectContext/existingObject(with:)``
/// throws ``ObjectGraphError/Code/unknownEntity`` for it; ``ManagedObjectContext/object(with:)``,
/// which cannot throw, used to stop the process (Core Data raises there). It now answers with
/// a stand-in: an object of no entity of the model, in no context, that every use through
/// key-value access refuses with `unknownEntity`, and that casts to no model class.
extension ManagedObjectContext {
    /// The entity of every stand-in: one of a model of its own, with no properties.
    static let unknownEntityStandIn: EntityDescription = {
        // A fixed, valid model: building it cannot fail (an internal invariant).
        let model = try! ManagedObjectModel { m in m.entity("UnknownEntity") { _ in } }
        return model.entities[0]
    }()

    /// The stand-in for `id`, whose entity the model lacks (see above). Not registered: each
    /// call makes a new one, and none is ever a fault that fires.
    func standInForUnknownEntity(_ id: ObjectID) -> ManagedObject {
        let object = ManagedObject(entity: Self.unknownEntityStandIn, insertInto: nil)
        object.objectID = id
        object.isInaccessibleStorage = true
        return object
    }
}

extension ManagedObject {
    /// Whether this is a stand-in for an ID of an entity the model lacks (see
    /// `ManagedObjectContext+UnknownEntities.swift`).
    final var isUnknownEntityStandIn: Bool { entity === ManagedObjectContext.unknownEntityStandIn }
}
