/// Reads an atomic store's rows for the shared evaluator.
struct AtomicRowSource: PredicateRowSource {
    struct Row {
        let primaryKey: Int64
        let row: StoredRow
    }

    let contents: AtomicStoreContents
    let model: ManagedObjectModel
    let storeIdentifier: String
    /// The store's ID namespaces by entity name (``AtomicStore``).
    let namespaces: [String: ObjectID.Namespace]

    func row(for id: ObjectID) -> Row? {
        guard let pk = id.primaryKey, let entity = model.entity(for: id), namespaces[entity.name] == id.namespace,
              let row = contents.tables[entity.rootName]?[pk], row.entityName == entity.name else { return nil }
        return Row(primaryKey: pk, row: row)
    }

    func snapshot(_ row: Row) -> RowSnapshot {
        RowSnapshot(objectID: objectID(of: row), version: row.row.version, attributes: row.row.attributes, toOne: row.row.toOne)
    }

    func objectID(of row: Row) -> ObjectID {
        if let namespace = namespaces[row.row.entityName] { return namespace.objectID(primaryKey: row.primaryKey) }
        return ObjectID(entityName: row.row.entityName, storeIdentifier: storeIdentifier, primaryKey: row.primaryKey)
    }

    func attribute(_ attribute: AttributeDescription, of row: Row) throws -> AttributeValue {
        row.row.attributes[attribute.slot]
    }

    func toOneID(_ relationship: RelationshipDescription, of row: Row) throws -> ObjectID? {
        row.row.toOne[relationship.slot]
    }

    func toOne(_ relationship: RelationshipDescription, of row: Row) throws -> Row? {
        row.row.toOne[relationship.slot].flatMap(self.row(for:))
    }

    func toMany(_ relationship: RelationshipDescription, of row: Row) throws -> [Row] {
        row.row.toMany[relationship.slot].compactMap(self.row(for:))
    }
}
