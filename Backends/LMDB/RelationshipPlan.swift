import CLMDB
import ObjectGraph

/// Candidates for `toOne == object` from the member database of the to-one's to-many
/// inverse: the messages of `chat == X` are the members of X's `messages`, one range scan
/// instead of a scan of every message. Like ``IndexPlan`` it only narrows the candidates
/// (the fetch evaluates the whole predicate on each), except for counting a predicate that is
/// exactly this comparison, which needs no row at all.
struct RelationshipPlan {
    /// The to-many whose members are the candidates.
    let inverse: RelationshipDescription
    /// The key of the object compared with.
    let ownerKey: Int64
    /// Whether the predicate is this comparison alone.
    let isWholePredicate: Bool
    /// Entity codes every candidate can have (the to-one's declaring hierarchy).
    let candidateCodes: Set<UInt16>

    /// A plan for the first usable conjunct. The object compared with must exist: the
    /// members of a deleted owner are gone while no-action to-ones may still name it.
    static func make(_ predicate: CompiledPredicate, store: LMDBStore, in txn: LMDBTransaction) throws -> RelationshipPlan? {
        var found: (plan: RelationshipPlan, owner: ObjectID)? = nil
        if case .comparison(let comparison) = predicate {
            found = plan(comparison, store: store, whole: true)
        } else if case .and(let parts) = predicate {
            for part in parts {
                if case .comparison(let comparison) = part, let candidate = plan(comparison, store: store, whole: false) {
                    found = candidate
                    break
                }
            }
        }
        guard let found, try store.exists(found.owner, in: txn) else { return nil }
        return found.plan
    }

    private static func plan(_ comparison: CompiledComparison, store: LMDBStore, whole: Bool) -> (plan: RelationshipPlan, owner: ObjectID)? {
        let model = store.model
        guard comparison.modifier == .direct, comparison.op == .equal,
              case .keyPath(let path) = comparison.left, path.steps.isEmpty,
              case .relationship(let relationship) = path.terminal, !relationship.isToMany, !relationship.isTransient,
              let inverse = model.inverse(of: relationship), inverse.isToMany, !inverse.isTransient,
              store.handles.members[LMDBLayout.key(inverse)] != nil,
              case .object(let owner) = comparison.right, owner.storeIdentifier == store.identifier, let ownerKey = owner.primaryKey,
              let ownerEntity = model.entity(named: owner.entityName), let inverseEntity = model.entity(named: inverse.entityName),
              ownerEntity.isKind(of: inverseEntity),
              let declaring = model.entity(named: relationship.entityName) else { return nil }
        let codes = Set(declaring.hierarchyNames.compactMap { store.layout.codes[$0] })
        return (RelationshipPlan(inverse: inverse, ownerKey: ownerKey, isWholePredicate: whole, candidateCodes: codes), owner)
    }

    /// Calls `body` with each candidate's key and entity code.
    func forEachEntry(store: LMDBStore, in txn: LMDBTransaction, _ body: (Int64, UInt16) throws -> Void) throws {
        guard let dbi = store.handles.members[LMDBLayout.key(inverse)] else { return }
        func entry(_ bytes: UnsafeRawBufferPointer) throws {
            var reader = ByteReader(bytes)
            try body(try reader.orderedInt64(), try reader.u16())
        }
        let key = PrimaryKeyBytes.encode(ownerKey)
        if LMDBLayout.keepsList(inverse) {
            guard let list = try txn.get(dbi, key) else { return }
            for start in stride(from: 0, to: list.count - 9, by: 10) { try entry(UnsafeRawBufferPointer(rebasing: list[start..<start + 10])) }
        } else {
            try txn.duplicates(dbi, key, entry)
        }
    }

    /// The answer to a count of exactly this comparison over entities `codes`, without reading
    /// a row; `nil` when the predicate has more to it.
    func count(store: LMDBStore, codes: Set<UInt16>, in txn: LMDBTransaction) throws -> Int? {
        guard isWholePredicate else { return nil }
        if candidateCodes.isSubset(of: codes), !LMDBLayout.keepsList(inverse), let dbi = store.handles.members[LMDBLayout.key(inverse)] {
            return try txn.withCursor(dbi) { cursor in
                try cursor.position(MDB_SET_KEY, key: PrimaryKeyBytes.encode(ownerKey)) == nil ? 0 : try cursor.duplicateCount()
            }
        }
        var count = 0
        try forEachEntry(store: store, in: txn) { _, code in if codes.contains(code) { count += 1 } }
        return count
    }
}
