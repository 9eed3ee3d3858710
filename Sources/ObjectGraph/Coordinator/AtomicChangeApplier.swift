/// Applies a ``StoreChangeSet`` to atomic-store contents, all or nothing: every version is
/// checked before anything changes, and the caller works on a copy.
struct AtomicChangeApplier {
    let model: ManagedObjectModel
    let storeIdentifier: String
    /// The interned ``storeIdentifier``: checking each row's store compares integers.
    let storeToken: UInt32

    init(model: ManagedObjectModel, storeIdentifier: String) {
        self.model = model
        self.storeIdentifier = storeIdentifier
        self.storeToken = InternedNames.shared.token(for: storeIdentifier)
    }

    func apply(_ changes: StoreChangeSet, to contents: inout AtomicStoreContents) throws {
        try checkVersions(changes, contents)
        var followers = ForeignKeyFollowers(model: model)
        for snapshot in changes.inserted {
            let (root, pk, entity) = try locate(snapshot.objectID)
            if contents.tables[root]?[pk] != nil {
                throw StoreError(.backend, "cannot insert \(snapshot.objectID): a row with that key exists")
            }
            contents.tables[root, default: [:]][pk] = StoredRow(
                entityName: entity.name, version: snapshot.version, attributes: snapshot.attributes.array,
                toOne: snapshot.toOne.array, toMany: Array(repeating: [], count: entity.toManyRelationships.count))
            if pk >= contents.nextPrimaryKey[root] ?? 1 { contents.nextPrimaryKey[root] = pk + 1 }
            followers.moved(snapshot.objectID, of: entity, from: ToOneValues(), to: snapshot.toOne)
        }
        for update in changes.updated {
            let (root, pk, entity) = try locate(update.values.objectID)
            followers.moved(update.values.objectID, of: entity, from: contents.tables[root]![pk]!.toOne, to: update.values.toOne.array)
            contents.tables[root]![pk]!.attributes = update.values.attributes.array
            contents.tables[root]![pk]!.toOne = update.values.toOne.array
            contents.tables[root]![pk]!.version = update.values.version
        }
        for change in changes.toMany {
            // A to-many whose inverse is a to-one lists the rows whose to-one names its owner:
            // its members follow those to-ones (below), as a foreign key's do in SQL. Applying
            // the change as recorded could contradict them: after a merge policy chose one
            // to-one, both saves' additions were kept, listing a row under two owners.
            if followers.isFollowing(change.relationship) {
                if let order = change.order { followers.order(change.source, relationship: change.relationship, order) }
                continue
            }
            let (root, pk, _) = try locate(change.source)
            guard var row = contents.tables[root]?[pk] else { continue }  // source deleted in this save
            var members = row.toMany[change.relationship.slot]
            // A member whose row is gone (deleted by a save that ran first) is not added: a store
            // never keeps a membership in a missing row.
            // (A member in another store cannot be checked here and is kept.)
            func exists(_ id: ObjectID) -> Bool {
                guard id.storeToken == storeToken else { return true }
                guard let (root, pk, _) = try? locate(id) else { return false }
                return contents.tables[root]?[pk] != nil
            }
            if !change.removed.isEmpty {
                let removed = Set(change.removed)
                members.removeAll { removed.contains($0) }
            }
            var present = Set(members)
            for id in change.added where exists(id) && present.insert(id).inserted { members.append(id) }
            if let order = change.order { members = ToManyChange.ordered(members, by: order) }
            row.toMany[change.relationship.slot] = members
            contents.tables[root]![pk] = row
        }
        applyFollowing(followers.changes, to: &contents)
        var deletedByEntity: [String: Set<ObjectID>] = [:]
        var leaving = ForeignKeyFollowers(model: model)
        for deletion in changes.deleted {
            let (root, pk, entity) = try locate(deletion.objectID)
            // An ID naming another entity of the hierarchy than the row's does not name that
            // row (a URI edited by hand can): the row stays, as if already gone.
            guard contents.tables[root]?[pk]?.entityName == entity.name,
                  let row = contents.tables[root]?.removeValue(forKey: pk) else { continue }
            deletedByEntity[entity.name, default: []].insert(deletion.objectID)
            leaving.moved(deletion.objectID, of: entity, from: row.toOne, to: [])
        }
        applyFollowing(leaving.changes, to: &contents)
        if !deletedByEntity.isEmpty { dropDanglingMemberships(deletedByEntity, in: &contents) }
        if let user = changes.userMetadata { contents.metadata.userInfo = user }
    }

    /// Applies the to-many changes ``ForeignKeyFollowers`` derived; an owner without a row here
    /// (deleted, or in another store) is skipped, as SQL has no row to list its members.
    private func applyFollowing(_ changes: [ToManyChange], to contents: inout AtomicStoreContents) {
        for change in changes {
            guard let (root, pk, _) = try? locate(change.source), var row = contents.tables[root]?[pk],
                  change.relationship.slot < row.toMany.count else { continue }
            row.toMany[change.relationship.slot] = ForeignKeyFollowers.members(row.toMany[change.relationship.slot], after: change)
            contents.tables[root]![pk] = row
        }
    }

    /// Relationships without an inverse have nobody to nullify them: a deleted destination
    /// leaves their member lists here, as a join row would leave a join table.
    private func dropDanglingMemberships(_ deleted: [String: Set<ObjectID>], in contents: inout AtomicStoreContents) {
        let deletedIDs = deleted.values.reduce(into: Set<ObjectID>()) { $0.formUnion($1) }
        for entity in model.entities where entity.parentName == nil {
            let candidates = model.entities.filter { $0.rootName == entity.name }
                .flatMap(\.toManyRelationships)
                .filter { !$0.hasInverse && !deleted.keys.filter(model.entity(named: $0.destinationName)!.hierarchyNames.contains).isEmpty }
            guard !candidates.isEmpty, var table = contents.tables[entity.name] else { continue }
            for (pk, row) in table {
                var updated = row
                for relationship in Set(candidates.map(\.slot)) where relationship < updated.toMany.count {
                    updated.toMany[relationship].removeAll { deletedIDs.contains($0) }
                }
                if updated != row { table[pk] = updated }
            }
            contents.tables[entity.name] = table
        }
    }

    private func checkVersions(_ changes: StoreChangeSet, _ contents: AtomicStoreContents) throws {
        var conflicts: [StoreError.Conflict] = []
        func current(_ id: ObjectID) throws -> StoredRow? {
            let (root, pk, entity) = try locate(id)
            // (A row of another entity of the hierarchy is not this ID's row.)
            guard let row = contents.tables[root]?[pk], row.entityName == entity.name else { return nil }
            return row
        }
        for update in changes.updated {
            let id = update.values.objectID
            let row = try current(id)
            if row?.version != update.expectedVersion {
                conflicts.append(.init(objectID: id, expectedVersion: update.expectedVersion, storedVersion: row?.version, storedSnapshot: row.map { snapshot(id, $0) }))
            }
        }
        for deletion in changes.deleted {
            guard let expected = deletion.expectedVersion else { continue }
            let row = try current(deletion.objectID)
            if row?.version != expected {
                conflicts.append(.init(objectID: deletion.objectID, expectedVersion: expected, storedVersion: row?.version, storedSnapshot: row.map { snapshot(deletion.objectID, $0) }))
            }
        }
        if !conflicts.isEmpty {
            throw StoreError(.conflict, "\(conflicts.count) object\(conflicts.count == 1 ? "" : "s") changed in the store since they were read", conflicts: conflicts)
        }
    }

    private func snapshot(_ id: ObjectID, _ row: StoredRow) -> RowSnapshot {
        RowSnapshot(objectID: id, version: row.version, attributes: row.attributes, toOne: row.toOne)
    }

    private func locate(_ id: ObjectID) throws -> (root: String, pk: Int64, entity: EntityDescription) {
        guard let entity = model.entity(for: id) else {
            throw StoreError(.missingRow, "the change set names entity \(id.entityName), which the model does not have")
        }
        guard let pk = id.primaryKey, id.storeToken == storeToken else {
            throw StoreError(.missingRow, "\(id) is not a permanent ID of store \(storeIdentifier)")
        }
        return (entity.rootName, pk, entity)
    }
}
