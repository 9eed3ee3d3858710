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
    let candidateCodes: EntityCodes
    /// The inverse's members database.
    let members: MDB_dbi
    /// The object compared with.
    let owner: ObjectID
    /// Whether members under ``ownerKey`` prove that ``owner`` exists (see
    /// ``InverseIndex/ownersAreAlone``).
    let membersProveOwner: Bool

    /// A plan for the first usable conjunct. The object compared with must exist: the
    /// members of a deleted owner are gone while no-action to-ones may still name it.
    static func make(_ predicate: CompiledPredicate, store: LMDBStore, in txn: LMDBTransaction) throws -> RelationshipPlan? {
        var found: RelationshipPlan? = nil
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
        guard let found else { return nil }
        guard try store.exists(found.owner, in: txn) else { return nil }
        return found
    }

    private static func plan(_ comparison: CompiledComparison, store: LMDBStore, whole: Bool) -> RelationshipPlan? {
        guard comparison.modifier == .direct, comparison.op == .equal,
              case .keyPath(let path) = comparison.left, path.steps.isEmpty,
              case .relationship(let relationship) = path.terminal,
              case .object(let owner) = comparison.right else { return nil }
        return plan(relationship, equalTo: owner, store: store, whole: whole)
    }

    /// A plan for `relationship == owner` (no check that the owner exists), when the to-one
    /// has a stored inverse and `owner` can be one of its owners in this store.
    static func plan(_ relationship: RelationshipDescription, equalTo owner: ObjectID, store: LMDBStore, whole: Bool) -> RelationshipPlan? {
        guard let index = store.inverseIndexes[IdentityKey(relationship)], index.ownerNamespaces.contains(owner.namespace),
              let ownerKey = owner.primaryKey else { return nil }
        return RelationshipPlan(
            inverse: index.inverse, ownerKey: ownerKey, isWholePredicate: whole, candidateCodes: index.candidateCodes,
            members: index.members, owner: owner, membersProveOwner: index.ownersAreAlone)
    }

    /// What a plan for `toOne == owner` needs of one to-one, worked out once per store.
    struct InverseIndex {
        /// The to-one's to-many inverse, whose members database lists the candidates.
        let inverse: RelationshipDescription
        /// Entity codes every candidate can have (the to-one's declaring hierarchy).
        let candidateCodes: EntityCodes
        /// IDs of this store that can own members: the inverse's declaring hierarchy.
        let ownerNamespaces: Set<ObjectID.Namespace>
        /// The inverse's members database.
        let members: MDB_dbi
        /// Whether the owners' table holds rows of one entity only. A deleted row's members
        /// go with it, so members under a key then prove that the row exists and is of the
        /// entity an ID of this index names (with sub-entities, the ID's entity could differ
        /// from the row's, which only reading the row tells).
        let ownersAreAlone: Bool
    }

    /// The inverse indexes of every to-one of `model` that has a stored to-many inverse, by
    /// the to-one's identity.
    static func inverseIndexes(model: ManagedObjectModel, layout: LMDBLayout, codec: RowCodec, handles: LMDBHandles) -> [IdentityKey: InverseIndex] {
        var result: [IdentityKey: InverseIndex] = [:]
        for entity in model.entities {
            // Inherited to-ones included: a sub-entity's description may be its own object.
            for relationship in entity.toOneRelationships where !relationship.isTransient {
                guard let inverse = model.inverse(of: relationship), inverse.isToMany, !inverse.isTransient,
                      let members = handles.members(of: inverse),
                      let declaring = model.entity(named: relationship.entityName),
                      let owners = model.entity(named: inverse.entityName) else { continue }
                let codes = EntityCodes(declaring.hierarchyNames.compactMap { layout.codes[$0] })
                let namespaces = Set(owners.hierarchyNames.compactMap { name in layout.codes[name].map { codec.namespaces[Int($0)] } })
                let alone = model.entity(named: owners.rootName)?.hierarchyNames.count == 1
                result[IdentityKey(relationship)] = InverseIndex(
                    inverse: inverse, candidateCodes: codes, ownerNamespaces: namespaces, members: members, ownersAreAlone: alone)
            }
        }
        return result
    }

    /// Calls `body` with each candidate's key and entity code.
    func forEachEntry(store: LMDBStore, in txn: LMDBTransaction, _ body: (Int64, UInt16) throws -> Void) throws {
        // (An ordered to-many's entries begin with the member's position.)
        let offset = LMDBLayout.memberOffset(inverse)
        try txn.duplicates(members, PrimaryKeyBytes.encode(ownerKey)) { bytes in
            var reader = ByteReader(bytes)
            reader.offset = offset
            try body(try reader.orderedInt64(), try reader.u16())
        }
    }

    /// The answer to a count of exactly this comparison over entities `codes`, without reading
    /// a row; `nil` when the predicate has more to it, or the owner does not exist. A plan
    /// made without checking its owner may be used here: when members prove their owner
    /// (``membersProveOwner``), only a count of none looks the owner up — one B-tree lookup
    /// fewer per count (perf).
    func count(store: LMDBStore, codes: EntityCodes, in txn: LMDBTransaction) throws -> Int? {
        guard isWholePredicate else { return nil }
        var count = 0
        if candidateCodes.isSubset(of: codes) {
            count = try txn.duplicateCount(members, primaryKey: ownerKey)
        } else {
            try forEachEntry(store: store, in: txn) { _, code in if codes.contains(code) { count += 1 } }
        }
        if count == 0 || !membersProveOwner, try !store.exists(owner, in: txn) { return nil }
        return count
    }
}
