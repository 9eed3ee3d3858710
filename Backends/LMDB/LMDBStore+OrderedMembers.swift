import CLMDB
import ObjectGraph

/// Ordered to-many members: one duplicate per member under the owner's key, `position ·
/// member key · entity code` (18 bytes), so the duplicates sort in list order. Positions have
/// gaps (``ObjectGraph/OrderPositions``, as the SQLite store's): a change writes only the
/// members that join or move — an insert in the middle or an append is one duplicate — where
/// the list kept as one value (format `objectgraph-lmdb-1`) was rewritten whole, an append to
/// a list of 100,000 writing a megabyte.
extension LMDBStore {
    /// One stored duplicate of an ordered to-many: its member, and the position, key and
    /// entity code it holds (the exact bytes, which deleting it names).
    struct PositionedMember {
        let id: ObjectID
        let position: Int64
        let pk: Int64
        let code: UInt16

        /// The duplicate's bytes.
        var entry: [UInt8] { LMDBStore.positionedEntry(position: position, pk: pk, code: code) { Array($0) } }
    }

    /// The duplicates under `key` of the ordered members database `dbi`, in list order.
    ///
    /// With `allowed`, a member of an entity outside those codes is damage, as reading the
    /// list refuses it: kept in the list the save rewrites, it was written back without a word.
    func positionedMembers(_ dbi: MDB_dbi, key: [UInt8], allowed: EntityCodes? = nil, of relationship: RelationshipDescription? = nil, in txn: LMDBTransaction) throws -> [PositionedMember] {
        var result: [PositionedMember] = []
        func named() -> String { relationship.map { " of \($0.entityName).\($0.name)" } ?? "" }
        do {
            try txn.duplicates(dbi, key) { bytes in
                var reader = ByteReader(bytes)
                let position = try reader.orderedInt64(), pk = try reader.orderedInt64(), code = try reader.u16()
                guard reader.isAtEnd else { throw ByteReader.Truncated() }
                // (An unknown code first, as damage of the entry: see memberID.)
                let namespace = try codec.namespace(code)
                guard allowed?.contains(code) ?? true else {
                    throw StoreError(.corrupt, "a relationship entry\(named()) in \(url.path) is damaged (its member, key \(pk), is of an entity outside the destination)")
                }
                result.append(PositionedMember(id: namespace.objectID(primaryKey: pk), position: position, pk: pk, code: code))
            }
        } catch is ByteReader.Truncated {
            throw StoreError(.corrupt, "a relationship entry\(named()) in \(url.path) is damaged (not an 18-byte position, key and entity code of this store)")
        }
        return result
    }

    /// `body` given the duplicate of the member with key `pk` and entity code `code` at
    /// `position`, laid out on the stack (a list built by appends writes one per member).
    @inline(__always)
    static func positionedEntry<T>(position: Int64, pk: Int64, code: UInt16, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        // (The tuple's three big-endian integers are its first 18 bytes, without padding.)
        let entry = ((UInt64(bitPattern: position) ^ (1 << 63)).bigEndian, (UInt64(bitPattern: pk) ^ (1 << 63)).bigEndian, code.bigEndian)
        return try withUnsafeBytes(of: entry) { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(18))) }
    }

    /// Makes the duplicates under `key` list `order`, given the ones `stored` there, and
    /// returns the members that left and joined: members that keep their place keep their
    /// duplicates; only those of members that leave or move are deleted, and only those of
    /// members that join or move are written. Each member is hashed once, to find where it
    /// stands: with sets of the members before and after and positions by member, saving an
    /// append to a list of 20,000 took 18 ms where rewriting the whole list had taken 10; it
    /// takes 8–10 ms now, the rest being the shared layer's (release, `sync: none`, measured).
    func writeOrder(_ order: [ObjectID], over stored: [PositionedMember], _ dbi: MDB_dbi, key: [UInt8], _ txn: LMDBTransaction, _ cursors: inout CursorSet) throws -> (removed: [ObjectID], added: [ObjectID]) {
        var storedIndex: [ObjectID: Int] = [:]
        storedIndex.reserveCapacity(stored.count)
        for (index, member) in stored.enumerated() where storedIndex[member.id] == nil { storedIndex[member.id] = index }
        // Per stored duplicate, the index in `order` of its member (-1: it leaves, or it is a
        // second duplicate of one member, never written so).
        var listed = [Int](repeating: -1, count: stored.count)
        var current: [Int64?] = []
        current.reserveCapacity(order.count)
        var added: [ObjectID] = []
        for (index, id) in order.enumerated() {
            if let at = storedIndex[id], listed[at] < 0 {
                listed[at] = index
                current.append(stored[at].position)
            } else {
                current.append(nil)
                if storedIndex[id] == nil { added.append(id) }
            }
        }
        let planned = OrderPositions.plan(positions: current)
        var removed: [ObjectID] = []
        for (index, member) in stored.enumerated() {
            let at = listed[index]
            if at < 0, storedIndex[member.id] == index { removed.append(member.id) }
            if at < 0 || planned[at] != nil { try txn.delete(dbi, key, value: member.entry) }
        }
        // In list order: positions grow, so each lands next to the one before.
        let cursor = try cursors.cursor(dbi)
        try key.withUnsafeBytes { key in
            for (index, id) in order.enumerated() {
                guard let position = planned[index] else { continue }
                let (pk, code) = try memberKey(id)
                try Self.positionedEntry(position: position, pk: pk, code: code) { _ = try cursor.put(key, lent: $0, flags: UInt32(MDB_NODUPDATA)) }
            }
        }
        return (removed, added)
    }
}
