import CLMDB
import ObjectGraph

/// Reading rows and relationship members inside a transaction.
extension LMDBStore {
    /// Where one of this store's entities is stored. A class: a deletion or indexed write
    /// looks its route up per row, and copying a struct out of the table retained (and then
    /// released) its entity and both arrays, where a class reference is one count each way.
    final class Route: Sendable {
        /// The row database of the entity's hierarchy.
        let rows: MDB_dbi
        /// The entity's code in rows.
        let code: UInt16
        let entity: EntityDescription
        /// The entity's indexed attributes, found once (every written row asks, and looking
        /// them up by entity name hashed the name twice per row).
        let indexes: [AttributeDescription]
        /// The relationships a deleted row of the entity must leave (see ``Reaching``): kept
        /// here, a deletion's one route lookup finds them too (looking them up apart hashed the
        /// entity's identity once per deleted row, a twentieth of deleting it, perf).
        let reaching: [Reaching]

        init(rows: MDB_dbi, code: UInt16, entity: EntityDescription, indexes: [AttributeDescription], reaching: [Reaching]) {
            self.rows = rows
            self.code = code
            self.entity = entity
            self.indexes = indexes
            self.reaching = reaching
        }
    }

    /// Where an entity's rows are: its hierarchy's row database and its entity code.
    struct RowLocation: Sendable {
        let rows: MDB_dbi
        let code: UInt16
        /// Whether the entity has secondary indexes (which a write must then find in its route).
        let indexed: Bool
    }

    /// A to-many relationship whose members may include rows of an entity, and how deleting
    /// such a row finds the holders to drop it from: through `own`, the relationship's inverse
    /// on the entity, or else (`own` is `nil`) through the relationship's reverse database.
    /// Resolved once per entity: per deleted row, finding them by name hashed five strings.
    struct Reaching: Sendable {
        let relationship: RelationshipDescription
        let own: RelationshipDescription?
        /// The entity declaring `relationship`; holders must be of it.
        let owningEntity: EntityDescription?

        /// The relationships reaching each entity of `layout`, by entity identity.
        static func plans(_ layout: LMDBLayout, model: ManagedObjectModel) -> [IdentityKey: [Reaching]] {
            var plans: [IdentityKey: [Reaching]] = [:]
            for (name, relationships) in layout.toManyReaching {
                guard let entity = model.entity(named: name) else { continue }
                plans[IdentityKey(entity)] = relationships.map { relationship in
                    Reaching(
                        relationship: relationship,
                        own: model.inverse(of: relationship).flatMap { entity.relationship(named: $0.name) },
                        owningEntity: model.entity(named: relationship.entityName))
                }
            }
            return plans
        }
    }

    /// The hierarchy's rows, key and entity of one of this store's IDs, or `nil` for a foreign ID.
    @inline(__always)
    func locate(_ id: ObjectID) -> (rows: MDB_dbi, pk: Int64, entity: EntityDescription)? {
        guard let pk = id.primaryKey, let route = routes[id.namespace] else { return nil }
        return (route.rows, pk, route.entity)
    }

    /// The stored row of `id`, if it exists and is of `id`'s entity.
    func row(_ id: ObjectID, in txn: LMDBTransaction) throws -> RowSnapshot? {
        guard let pk = id.primaryKey, let location = rowLocations[id.namespace],
              let bytes = try txn.get(location.rows, primaryKey: pk) else { return nil }
        return try row(bytes, pk: pk, at: location)
    }

    /// ``row(_:in:)`` read through `cursors` (one per row database): of many rows read in key
    /// order, most are on the page of the one before, which a cursor searches first (see
    /// ``CursorSet``; `mdb_get` searches from the root every time).
    func row(_ id: ObjectID, through cursors: inout CursorSet) throws -> RowSnapshot? {
        guard let pk = id.primaryKey, let location = rowLocations[id.namespace],
              let bytes = try cursors.cursor(location.rows).position(MDB_SET_KEY, primaryKey: pk)?.value else { return nil }
        return try row(bytes, pk: pk, at: location)
    }

    /// The stored row `bytes` of key `pk` found at `location`, if of its entity.
    private func row(_ bytes: UnsafeRawBufferPointer, pk: Int64, at location: RowLocation) throws -> RowSnapshot? {
        guard codec.entityCode(of: bytes) == location.code else {
            try checkSkippedRow(pk, bytes, in: location.rows)
            return nil
        }
        return try decode(bytes, pk: pk)
    }

    /// Refuses a row that a read passes over for not being of the entity it wants, when it
    /// is of no entity of its table at all: too short to name one, or naming another
    /// hierarchy's entity (a damaged row). Passed over, it vanished from every fetch, and its
    /// fault read as a missing record (the object then deleted, see
    /// `shouldDeleteInaccessibleFaults`). Called only for rows passed over, so a read of the
    /// rows it wants pays nothing.
    @inline(never)
    func checkSkippedRow(_ pk: Int64, _ bytes: UnsafeRawBufferPointer, in rows: MDB_dbi) throws {
        guard let code = codec.entityCode(of: bytes), tableCodes[rows]?.contains(code) == true else { throw damagedRow(pk) }
    }

    /// Whether the row of `id` exists (with `id`'s entity), without decoding it.
    func exists(_ id: ObjectID, in txn: LMDBTransaction) throws -> Bool {
        guard let pk = id.primaryKey, let location = rowLocations[id.namespace],
              let bytes = try txn.get(location.rows, primaryKey: pk) else { return false }
        return codec.entityCode(of: bytes) == location.code
    }

    /// Decodes a row, turning damage into a typed error.
    func decode(_ bytes: UnsafeRawBufferPointer, pk: Int64) throws -> RowSnapshot {
        do {
            return try codec.decode(bytes, primaryKey: pk)
        } catch {
            throw damagedRow(pk)
        }
    }

    /// Decodes a row into `run` (see ``ObjectGraph/RowRun``), turning damage into a typed error.
    func decode(_ bytes: UnsafeRawBufferPointer, pk: Int64, into run: inout RowRun, _ rows: inout [RowSnapshot]) throws {
        do {
            try codec.decode(bytes, primaryKey: pk, into: &run, &rows)
        } catch {
            throw damagedRow(pk)
        }
    }

    /// The error for the damaged row with key `pk`.
    func damagedRow(_ pk: Int64) -> StoreError {
        StoreError(.corrupt, "the row with key \(pk) in \(url.path) is damaged or of an unknown format")
    }

    /// Decodes a member entry (key and entity code) into an ID; with `allowed`, an entry of an
    /// entity outside those codes is damage, like a short one (a member of the wrong entity
    /// reached the context, where unlinking it from its inverse indexed past its entity's
    /// relationships: the fuzz test).
    func memberID(_ bytes: UnsafeRawBufferPointer, allowed: EntityCodes? = nil, of relationship: RelationshipDescription? = nil) throws -> ObjectID {
        var reader = ByteReader(bytes)
        do {
            let pk = try reader.orderedInt64()
            let code = try reader.u16()
            let namespace = try codec.namespace(code)
            guard allowed?.contains(code) ?? true else { throw ByteReader.Truncated() }
            return namespace.objectID(primaryKey: pk)
        } catch {
            let name = relationship.map { " of \($0.entityName).\($0.name)" } ?? ""
            throw StoreError(.corrupt, "a relationship entry\(name) in \(url.path) is damaged")
        }
    }


    /// The members of `relationship` of the row with key `pk`, in order: a range scan of the
    /// duplicates under the key (sorted by member key, or by position for an ordered one).
    func members(_ relationship: RelationshipDescription, of pk: Int64, in txn: LMDBTransaction) throws -> [ObjectID] {
        guard let read = handles.memberRead(of: relationship, layout: layout) else { return [] }
        let offset = LMDBLayout.memberOffset(relationship)
        return try txn.withCursor(read.dbi) { cursor in try members(of: pk, at: cursor, offset: offset, allowed: read.allowed, relationship) }
    }

    /// The duplicates under key `pk`, read with `cursor` (on a members database whose entries
    /// hold the member key at `offset`), which may serve many keys in turn.
    private func members(of pk: Int64, at cursor: LMDBCursor, offset: Int, allowed: EntityCodes, _ relationship: RelationshipDescription) throws -> [ObjectID] {
        guard var entry = try cursor.position(MDB_SET_KEY, primaryKey: pk) else { return [] }
        var result: [ObjectID] = []
        result.reserveCapacity(try cursor.duplicateCount())
        while true {
            result.append(try memberID(offset == 0 ? entry.value : UnsafeRawBufferPointer(rebasing: entry.value.dropFirst(offset)), allowed: allowed, of: relationship))
            guard let next = try cursor.move(MDB_NEXT_DUP) else { return result }
            entry = next
        }
    }

    /// Rows for the IDs that exist, in one read transaction.
    public func snapshots(for ids: [ObjectID]) throws -> [RowSnapshot] {
        try read { txn in
            var result: [RowSnapshot] = []
            result.reserveCapacity(ids.count)
            try txn.withCursorSet { cursors in
                for id in ids { if let row = try row(id, through: &cursors) { result.append(row) } }
            }
            return result
        }
    }

    /// One row, in its own read transaction.
    public func snapshot(for id: ObjectID) throws -> RowSnapshot? {
        try read { txn in try row(id, in: txn) }
    }

    /// Members for each source, in one read transaction.
    ///
    /// One cursor serves every source (opening one per source was a tenth of prefetching
    /// 10,000 students' subjects), and a source is recognized as this store's by its interned
    /// namespace, not by its store's name (looked up under a lock and compared as a string for
    /// every source).
    public func relatedIDs(for relationship: RelationshipDescription, of sources: [ObjectID]) throws -> [[ObjectID]] {
        try read { txn in
            guard !relationship.isTransient, let read = handles.memberRead(of: relationship, layout: layout) else {
                return [[ObjectID]](repeating: [], count: sources.count)
            }
            let offset = LMDBLayout.memberOffset(relationship)
            return try txn.withCursor(read.dbi) { cursor in
                try sources.map { source in
                    guard codec.owns(source), let pk = source.primaryKey else { return [] }
                    return try members(of: pk, at: cursor, offset: offset, allowed: read.allowed, relationship)
                }
            }
        }
    }

    /// How many members `relationship` has for `source`, counted without reading them
    /// (`mdb_cursor_count` on the source's duplicates).
    public func memberCount(of relationship: RelationshipDescription, for source: ObjectID) throws -> Int {
        try read { txn in
            guard source.storeIdentifier == identifier, let pk = source.primaryKey else { return 0 }
            return try memberCount(of: relationship, key: pk, in: txn)
        }
    }

    /// The member count of the row with key `pk`, inside `txn`.
    func memberCount(of relationship: RelationshipDescription, key pk: Int64, in txn: LMDBTransaction) throws -> Int {
        guard let dbi = handles.members(of: relationship) else { return 0 }
        return try txn.duplicateCount(dbi, primaryKey: pk)
    }
}
