import CLMDB
import ObjectGraph

/// Grouped counts answered from a relationship index (``ObjectGraph/StoreCapabilities/groups``).
///
/// The one shape served natively is the common one: rows grouped by a to-one whose to-many
/// inverse is indexed, or by an attribute of it (`count` of messages by `chat` or by
/// `chat.title`), with no predicate,
/// over every entity of the table. The members database lists, under each owner's key, its
/// members in key order: the number of duplicates is the group's count and the first
/// duplicate its first row (an ordered to-many's are in list order: its first row is the
/// smallest member key among them), so neither a member's row nor a count per row is read — only
/// each owner's row, for the key's value. Owners with equal values form one group, as in the
/// shared grouping. Anything else (a predicate, other aggregates, rows without an owner, whose
/// group would need a scan to order) is declined and the shared layer groups the rows.
extension LMDBStore {
    func groups(_ request: StoreFetchRequest, _ grouping: StoreGrouping, in txn: LMDBTransaction) throws -> StoreFetchResult {
        let declined = StoreFetchResult(applied: [])
        guard request.predicate == nil, grouping.keys.count == 1, grouping.aggregates.allSatisfy({ $0 == .count }) else { return declined }
        let steps = grouping.keys[0].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard steps.count == 1 || steps.count == 2, let relationship = request.entity.relationship(named: steps[0]), !relationship.isToMany,
              let index = inverseIndexes[IdentityKey(relationship)],
              let root = model.entity(named: request.entity.rootName), let rowsDBI = handles.rows[root.name] else { return declined }
        let destination = model.destinationEntity(of: relationship)
        guard let ownersDBI = handles.rows[destination.rootName] else { return declined }
        // Keyed by an attribute of the owner, or (grouping by the relationship itself) by the
        // owner, whose ID its row's entity code and its key give.
        let keyAttribute = steps.count == 2 ? destination.attribute(named: steps[1]) : nil
        guard steps.count == 1 || keyAttribute.map({ !$0.isTransient }) == true else { return declined }
        // Every row of the table must be one the request counts.
        let requested = layout.codes(of: request)
        guard EntityCodes(root.hierarchyNames.compactMap { layout.codes[$0] }).isSubset(of: requested) else { return declined }

        var groups: [(key: AttributeValue, count: Int, first: Int64)] = []
        // At most one group per owner: sized once instead of rehashed at each doubling.
        // (The groups too: grown by doublings, they were copied ten times for 1,000 owners.)
        let owners = try txn.entries(ownersDBI)
        var groupIndex = GroupIndex(capacity: owners)
        groups.reserveCapacity(owners)
        var members = 0
        // The key's slot per owner entity, found by name once per entity, not once per owner;
        // the last one is checked first (owners are usually of one entity: no hashing).
        var slots: [ObjectID.Namespace: Int] = [:]
        var lastSlot: (namespace: ObjectID.Namespace, slot: Int)? = nil
        let offset = LMDBLayout.memberOffset(index.inverse)
        // Owners are read in key order through a cursor of their own: each is usually on the
        // leaf page of the one before, which a cursor searches without descending from the root.
        let complete: Bool = try txn.withCursor(ownersDBI) { ownerRows in try txn.withCursor(index.members) { cursor in
            var entry = try cursor.move(MDB_FIRST)
            while let current = entry {
                let ownerKey = try PrimaryKeyBytes.decode(current.key)
                var reader = ByteReader(current.value)
                reader.offset = offset
                var first = try reader.orderedInt64()
                let count = try cursor.duplicateCount()
                if offset != 0 {
                    // In list order: the first row is the smallest key among them. (The cursor
                    // ends on the owner's last duplicate, where MDB_NEXT_NODUP leaves from.)
                    while let next = try cursor.move(MDB_NEXT_DUP) {
                        var reader = ByteReader(next.value)
                        reader.offset = offset
                        first = min(first, try reader.orderedInt64())
                    }
                }
                members += count
                guard let bytes = try ownerRows.position(MDB_SET_KEY, primaryKey: ownerKey)?.value else { return false }
                let key: AttributeValue
                do {
                    if let keyAttribute {
                        key = try codec.decodeAttribute(bytes) { namespace in
                            if let lastSlot, lastSlot.namespace == namespace { return lastSlot.slot }
                            if let known = slots[namespace] {
                                lastSlot = (namespace, known)
                                return known
                            }
                            guard let ownerEntity = model.entity(for: namespace.objectID(primaryKey: ownerKey)),
                                  let found = ownerEntity.attribute(named: keyAttribute.name)?.slot else { throw MissingKey() }
                            slots[namespace] = found
                            lastSlot = (namespace, found)
                            return found
                        }
                    } else {
                        // As the shared grouping keys a destination (see RowGrouping.value).
                        key = .uri(try ownerNamespace(bytes).objectID(primaryKey: ownerKey).uriRepresentation)
                    }
                } catch is MissingKey {
                    return false
                } catch {
                    throw damagedRow(ownerKey)
                }
                // One lookup for a new group, the common case (an owner per value).
                if let position = groupIndex.position(of: key, insertingAs: groups.count, keyAt: { groups[$0].key }) {
                    groups[position].count += count
                    // The group's key is its first member's: owners come in key order, and an
                    // owner met later may hold that member (with a canonically equivalent title).
                    if first < groups[position].first {
                        groups[position].key = key
                        groups[position].first = first
                    }
                } else {
                    groups.append((key, count, first))
                }
                entry = try cursor.move(MDB_NEXT_NODUP)
            }
            return true
        } }
        // Rows without an owner form a group whose first row only a scan would find.
        guard complete, try txn.entries(rowsDBI) == members else { return declined }
        groups.sort { $0.first < $1.first }
        // Every group's values in one array, each group a stretch of it (see AttributeValues):
        // one allocation for the answer instead of one per group.
        let width = 1 + grouping.aggregates.count
        var values: [AttributeValue] = []
        values.reserveCapacity(groups.count * width)
        for group in groups {
            values.append(group.key)
            for _ in grouping.aggregates { values.append(.integer(Int64(group.count))) }
        }
        let rows = groups.indices.map { AttributeValues(sharing: values, from: $0 * width, count: width) }
        return StoreFetchResult(groups: rows, applied: .predicate)
    }
}

extension LMDBStore {
    /// The namespace of the entity whose row `bytes` is (a row begins with its format and
    /// entity code, see RowCodec).
    private func ownerNamespace(_ bytes: UnsafeRawBufferPointer) throws -> ObjectID.Namespace {
        guard let format = bytes.first, format == RowCodec.format || format == RowCodec.positionalFormat,
              let code = codec.entityCode(of: bytes) else { throw ByteReader.Truncated() }
        return try codec.namespace(code)
    }
}

/// An owner entity without the grouping attribute: the grouping is declined.
private struct MissingKey: Error {}
