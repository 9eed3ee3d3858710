/// Reads rows as the context's save would leave the store: an object with unsaved changes
/// (inserted or updated) by its live values, one deleted here as gone, and every other
/// object by its stored row — not by the values an unchanged object loaded earlier still
/// holds after another context's save.
///
/// A fetch whose predicate reads objects the context changed (`schoolClass.title == …` after
/// a class is renamed) cannot leave the predicate to the store, and evaluates the stored rows
/// here. Core Data trusts the store's match for every object without unsaved changes; read
/// from such an object, a match depended on whether an unrelated object had an unsaved
/// change (Ada, stored as 99 by another context, stopped matching `age > 90` once some
/// class was renamed here).
struct SavedStateRowSource: PredicateRowSource {
    /// An object with unsaved changes, or a stored row.
    enum Row {
        case object(ManagedObject)
        case stored(RowSnapshot)
    }

    let context: ManagedObjectContext
    private let live: ObjectRowSource

    init(context: ManagedObjectContext) {
        self.context = context
        self.live = ObjectRowSource(context: context)
    }

    /// The row of `id` after a save, `nil` when there would be none.
    func row(for id: ObjectID) throws -> Row? {
        if let object = context.registeredLive(id) {
            if object.isDeletedStorage { return nil }
            if object.isInsertedStorage || object.isUpdatedStorage { return .object(object) }
        }
        if id.isTemporary { return nil }
        if let cached = context.coordinator.rowCache.snapshot(for: id) { return .stored(cached) }
        return try context.coordinator.snapshot(for: id).map(Row.stored)
    }

    func objectID(of row: Row) -> ObjectID {
        switch row {
        case .object(let object): return object.objectID
        case .stored(let snapshot): return snapshot.objectID
        }
    }

    func attribute(_ attribute: AttributeDescription, of row: Row) throws -> AttributeValue {
        switch row {
        case .object(let object): return try live.attribute(attribute, of: object)
        case .stored(let snapshot): return snapshot.attributes[attribute.slot]
        }
    }

    func toOneID(_ relationship: RelationshipDescription, of row: Row) throws -> ObjectID? {
        switch row {
        case .object(let object): return try live.toOneID(relationship, of: object)
        case .stored(let snapshot): return snapshot.toOne[relationship.slot]
        }
    }

    func toOne(_ relationship: RelationshipDescription, of row: Row) throws -> Row? {
        guard let id = try toOneID(relationship, of: row) else { return nil }
        return try self.row(for: id)
    }

    func toMany(_ relationship: RelationshipDescription, of row: Row) throws -> [Row] {
        let ids: [ObjectID]
        switch row {
        case .object(let object):
            try context.loadToManyIfNeeded(object, relationship)
            ids = Array(object.toManyStates[relationship.slot].members ?? [])
        case .stored(let snapshot):
            ids = try context.coordinator.relatedIDs(for: relationship, of: [snapshot.objectID]).first ?? []
        }
        return try ids.compactMap { try self.row(for: $0) }
    }

    /// The rows of `ids` after a save, in order (those a save would remove left out): the
    /// stored ones read in one round trip.
    func rows(for ids: [ObjectID]) throws -> [Row] {
        var rows: [Row?] = []
        rows.reserveCapacity(ids.count)
        var stored: [ObjectID] = []
        for id in ids {
            if let object = context.registeredLive(id), object.isInsertedStorage || object.isUpdatedStorage || object.isDeletedStorage {
                rows.append(object.isDeletedStorage ? nil : .object(object))
            } else {
                rows.append(nil)
                if !id.isTemporary { stored.append(id) }
            }
        }
        guard !stored.isEmpty else { return rows.compactMap { $0 } }
        context.statisticsStorage.storeRoundTrips += 1
        // (Snapshots may come back in another order, grouped by store.)
        let byID = Dictionary(try context.coordinator.snapshots(for: stored).map { ($0.objectID, $0) }, uniquingKeysWith: { a, _ in a })
        for (position, id) in ids.enumerated() where rows[position] == nil {
            rows[position] = byID[id].map(Row.stored)
        }
        return rows.compactMap { $0 }
    }

    /// The IDs among `ids` whose rows after a save match `predicate`, in order.
    static func matching(_ ids: [ObjectID], _ predicate: CompiledPredicate, in context: ManagedObjectContext) throws -> [ObjectID] {
        guard !ids.isEmpty else { return [] }
        let source = SavedStateRowSource(context: context)
        let evaluator = PredicateEvaluator(source: source)
        return try source.rows(for: ids).filter { try evaluator.evaluate(predicate, on: $0) }.map(source.objectID(of:))
    }
}
