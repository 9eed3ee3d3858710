import ObjectGraph

/// Reads rows for the shared ``ObjectGraph/PredicateEvaluator`` and sort inside one read
/// transaction, so a whole fetch — including key paths through relationships — sees one
/// snapshot.
struct LMDBRowSource: PredicateRowSource {
    let store: LMDBStore
    let txn: LMDBTransaction

    func toOne(_ relationship: RelationshipDescription, of row: RowSnapshot) throws -> RowSnapshot? {
        guard let id = row.toOne[relationship.slot] else { return nil }
        return try store.row(id, in: txn)
    }

    func toMany(_ relationship: RelationshipDescription, of row: RowSnapshot) throws -> [RowSnapshot] {
        guard !relationship.isTransient, let pk = row.objectID.primaryKey else { return [] }
        let members = try store.members(relationship, of: pk, in: txn)
        return try txn.withCursorSet { cursors in try members.compactMap { try store.row($0, through: &cursors) } }
    }

    /// `members.@count` from the member entries (`mdb_cursor_count`), reading no member row.
    func toManyCount(_ relationship: RelationshipDescription, of row: RowSnapshot) throws -> Int {
        guard !relationship.isTransient, let pk = row.objectID.primaryKey else { return 0 }
        return try store.memberCount(of: relationship, key: pk, in: txn)
    }
}
