import CLMDB
import Foundation
import ObjectGraph

/// Saving: one LMDB write transaction per change set; any error aborts it, so nothing lands.
extension LMDBStore {
    /// Checks versions and applies the change set in one write transaction.
    public func save(_ changes: StoreChangeSet) throws {
        try checkOpen()
        try environment.write { txn in try txn.withCursorSet { try apply(changes, txn, &$0) } }
    }

    /// The check reads the write transaction itself: no other writer, in this process or
    /// another, commits before these changes do. (A read transaction of its own, inside the
    /// write, would take the map lock a second time, which its writer preference forbids.)
    public func save(_ changes: StoreChangeSet, checking check: (_ fetch: (StoreFetchRequest) throws -> StoreFetchResult) throws -> Void) throws {
        try checkOpen()
        try environment.write { txn in
            try check { try fetch($0, in: txn) }
            try txn.withCursorSet { try apply(changes, txn, &$0) }
        }
    }

    /// The key and row location of `id`, a permanent ID of this store.
    @inline(__always)
    private func location(_ id: ObjectID) throws -> (pk: Int64, location: RowLocation) {
        guard let pk = id.primaryKey, let location = rowLocations[id.namespace] else { throw notHere(id) }
        return (pk, location)
    }

    /// The key and route of `id`, a permanent ID of this store (for the entity and indexes).
    @inline(__always)
    private func route(_ id: ObjectID) throws -> (pk: Int64, route: Route) {
        guard let pk = id.primaryKey, let route = routes[id.namespace] else { throw notHere(id) }
        return (pk, route)
    }

    private func notHere(_ id: ObjectID) -> StoreError {
        StoreError(.missingRow, "\(id) is not a permanent ID of an entity of the LMDB store \(identifier)")
    }

    private func apply(_ changes: StoreChangeSet, _ txn: LMDBTransaction, _ cursors: inout CursorSet) throws {
        try checkVersions(changes, &cursors)
        // Every row is encoded into this one buffer, in turn.
        var encoded = RowBuffer(capacity: 256)
        // A to-many whose inverse is a to-one lists exactly the rows whose to-one names its
        // owner, as a foreign key would: its members follow the to-ones saved here (see
        // ForeignKeyFollowers), not the to-many changes the context recorded.
        var followers = ForeignKeyFollowers(model: model)
        var run = FollowingRun()
        // Each row read where it lies in the array's storage (see RowCodec.encode), and found
        // through its plain-integer location unless its entity has indexes: copying each row
        // and its route retained four references per inserted row (uprobe count). (Nothing
        // here is a local function: one called in this closure read its captures through
        // dynamic exclusivity checks, two per row.)
        try changes.inserted.withUnsafeBufferPointer { inserted in
            guard let first = inserted.baseAddress else { return }
            for index in inserted.indices {
                let row = first + index
                let id = row.pointee.objectID
                let (pk, location) = try location(id)
                // One B-tree operation, not a lookup and then a put: LMDB refuses an existing key.
                codec.encode(row, into: &encoded)
                guard try cursors.cursor(location.rows).put(primaryKey: pk, lent: encoded.bytes, flags: UInt32(MDB_NOOVERWRITE)) else {
                    throw StoreError(.backend, "cannot insert \(id): a row with that key exists in \(url.path)")
                }
                if location.indexed {
                    let route = try route(id).route
                    try writeIndexEntries(of: row.pointee, entity: route.entity, indexes: route.indexes, old: nil, txn)
                }
                if let entity = run.entity(of: id, model: model, &followers) {
                    followers.inserted(id, toOne: row.pointee.toOne, of: entity)
                }
            }
        }
        // Read in place, as the inserted rows: `for update in` copied each update, retaining
        // its arrays (a tenth of saving 10,000 updates, with the same copies in checkVersions).
        try changes.updated.withUnsafeBufferPointer { updated in
            guard let first = updated.baseAddress else { return }
            for index in updated.indices {
                let update = first + index
                // (A stored property of a struct always has an address.)
                guard let row = update.pointer(to: \.values) else { preconditionFailure("RowUpdate.values is stored") }
                let id = row.pointee.objectID
                let (pk, location) = try location(id)
                // The stored to-ones, when one may have changed: the version check made the row
                // the context compared with (changedToOne) the stored one, so an update naming
                // no changed to-one moves no member and reads nothing more.
                if update.pointee.changedToOne?.isEmpty != true, let entity = run.entity(of: id, model: model, &followers),
                   let bytes = try cursors.cursor(location.rows).position(MDB_SET_KEY, primaryKey: pk)?.value {
                    let old: ToOneValues
                    do { old = try codec.decodeToOne(bytes) } catch { throw damagedRow(pk) }
                    followers.moved(id, of: entity, from: old, to: row.pointee.toOne)
                }
                codec.encode(row, into: &encoded)
                guard location.indexed else {
                    try cursors.cursor(location.rows).put(primaryKey: pk, lent: encoded.bytes)
                    continue
                }
                let route = try route(id).route
                let old = try self.row(id, in: txn)
                try cursors.cursor(location.rows).put(primaryKey: pk, lent: encoded.bytes)
                try writeIndexEntries(of: row.pointee, entity: route.entity, indexes: route.indexes, old: old, txn)
            }
        }
        // Rows inserted above exist without looking them up (a bulk insert's memberships name
        // 100,000 of them: one B-tree lookup each, a tenth of the save).
        let insertedHere = changes.toMany.isEmpty && followers.changes.isEmpty ? InsertedKeys() : InsertedKeys(changes.inserted)
        for change in changes.toMany where !change.relationship.isTransient {
            if followers.isFollowing(change.relationship) {
                // Only the order is the context's (a list's); the members follow the to-ones.
                if let order = change.order, change.relationship.isOrdered {
                    followers.order(change.source, relationship: change.relationship, order)
                }
                continue
            }
            guard let (rows, pk, _) = locate(change.source) else { continue }
            guard try insertedHere.contains(change.source) || txn.get(rows, primaryKey: pk) != nil else { continue }
            try applyMembership(change, sourceKey: pk, insertedHere: insertedHere, txn, &cursors)
        }
        // An owner without a row here (deleted by a save that landed first) lists nothing, as
        // a foreign key naming a missing row is in no list.
        var ownerChecked: (id: ObjectID, exists: Bool)?
        for change in followers.changes {
            guard let (rows, pk, _) = locate(change.source) else { continue }
            if ownerChecked?.id != change.source {
                ownerChecked = (change.source, try insertedHere.contains(change.source) || txn.get(rows, primaryKey: pk) != nil)
            }
            guard ownerChecked?.exists == true else { continue }
            try applyMembership(change, sourceKey: pk, insertedHere: insertedHere, following: true, txn, &cursors)
        }
        if !changes.deleted.isEmpty {
            let deleted = Set(changes.deleted.map(\.objectID))
            for deletion in changes.deleted {
                try delete(deletion.objectID, alsoDeleted: deleted, cursors: &cursors, txn)
            }
        }
        if let user = changes.userMetadata {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try txn.put(handles.metadata, Array("userInfo".utf8), Array(try encoder.encode(user)))
        }
    }

    private func checkVersions(_ changes: StoreChangeSet, _ cursors: inout CursorSet) throws {
        var conflicts: [StoreError.Conflict] = []
        func stored(_ id: ObjectID) throws -> (version: Int64, bytes: UnsafeRawBufferPointer, pk: Int64)? {
            let (pk, location) = try location(id)
            guard let bytes = try cursors.cursor(location.rows).position(MDB_SET_KEY, primaryKey: pk)?.value,
                  codec.entityCode(of: bytes) == location.code else { return nil }
            return (try codec.version(of: bytes), bytes, pk)
        }
        func record(_ id: ObjectID, expected: Int64) throws {
            let current = try stored(id)
            guard current?.version != expected else { return }
            let snapshot = try current.map { try decode($0.bytes, pk: $0.pk) }
            conflicts.append(.init(objectID: id, expectedVersion: expected, storedVersion: current?.version, storedSnapshot: snapshot))
        }
        for index in changes.updated.indices {
            try record(changes.updated[index].values.objectID, expected: changes.updated[index].expectedVersion)
        }
        for deletion in changes.deleted {
            if let expected = deletion.expectedVersion { try record(deletion.objectID, expected: expected) }
        }
        if !conflicts.isEmpty {
            throw StoreError(.conflict, "\(conflicts.count) object\(conflicts.count == 1 ? "" : "s") changed in the store since they were read", conflicts: conflicts)
        }
    }

    /// Moves the row's secondary-index entries from its old values (if any) to its new ones.
    private func writeIndexEntries(of row: RowSnapshot, entity: EntityDescription, indexes attributes: [AttributeDescription], old: RowSnapshot?, _ txn: LMDBTransaction) throws {
        guard !attributes.isEmpty, let pk = row.objectID.primaryKey, let code = layout.codes[entity.name] else { return }
        let entry = IndexKey.entry(pk: pk, code: code)
        for attribute in attributes {
            guard let dbi = handles.index(of: attribute) else { continue }
            let key = IndexKey.storedKey(row.attributes[attribute.slot], type: attribute.type, limit: keyLimit)
            if let old {
                let oldKey = IndexKey.storedKey(old.attributes[attribute.slot], type: attribute.type, limit: keyLimit)
                if oldKey == key { continue }
                try txn.delete(dbi, oldKey, value: entry)
            }
            try txn.put(dbi, key, entry, flags: UInt32(MDB_NODUPDATA))
        }
    }

    private func memberEntry(_ id: ObjectID) throws -> [UInt8] {
        let (pk, code) = try memberKey(id)
        return IndexKey.entry(pk: pk, code: code)
    }

    /// The key and entity code a member entry of `id` holds.
    func memberKey(_ id: ObjectID) throws -> (pk: Int64, code: UInt16) {
        guard let pk = id.primaryKey, let code = codec.code(of: id) else { throw notHere(id) }
        return (pk, code)
    }

    /// Whether a member may be added: its row exists, or it belongs to another store (which
    /// this one cannot check).
    private func isStoredHere(_ id: ObjectID, insertedHere: InsertedKeys, _ txn: LMDBTransaction) throws -> Bool {
        if insertedHere.contains(id) { return true }
        if id.storeIdentifier != identifier { return true }
        return try exists(id, in: txn)
    }

    /// `following`: `change` comes from ``ForeignKeyFollowers`` (its order only orders the
    /// members the to-ones give; see ``ForeignKeyFollowers/members(_:after:)``).
    private func applyMembership(_ change: ToManyChange, sourceKey: Int64, insertedHere: InsertedKeys, following: Bool = false, _ txn: LMDBTransaction, _ cursors: inout CursorSet) throws {
        let relationship = change.relationship
        guard let dbi = handles.members(of: relationship) else { return }
        let owners = handles.owners(of: relationship)
        let key = PrimaryKeyBytes.encode(sourceKey)
        let sourceEntry = try memberEntry(change.source)
        var removed: [ObjectID] = []
        var added: [ObjectID] = []
        added.reserveCapacity(change.added.count)
        if relationship.isOrdered {
            let allowed = handles.memberRead(of: relationship, layout: layout)?.allowed
            let stored = try positionedMembers(dbi, key: key, allowed: allowed, of: relationship, in: txn)
            let before = stored.map(\.id)
            var after = before
            if following {
                // (Every member joining is a row this save wrote.)
                after = ForeignKeyFollowers.members(before, after: change)
            } else {
                if !change.removed.isEmpty {
                    let gone = Set(change.removed)
                    after.removeAll { gone.contains($0) }
                }
                // A member whose row is gone (deleted by a save that landed first) is not added.
                var present = Set(after)
                for id in change.added where try isStoredHere(id, insertedHere: insertedHere, txn) && present.insert(id).inserted { after.append(id) }
                if let order = change.order { after = ToManyChange.ordered(after, by: order) }
            }
            (removed, added) = try writeOrder(after, over: stored, dbi, key: key, txn, &cursors)
        } else {
            for id in change.removed {
                if try txn.delete(dbi, key, value: try memberEntry(id)) { removed.append(id) }
            }
            let entries = try cursors.cursor(dbi)
            try key.withUnsafeBytes { key in
                for id in change.added where try isStoredHere(id, insertedHere: insertedHere, txn) {
                    let (pk, code) = try memberKey(id)
                    try IndexKey.withEntry(pk: pk, code: code) { _ = try entries.put(key, lent: $0, flags: UInt32(MDB_NODUPDATA)) }
                    added.append(id)
                }
            }
        }
        guard let owners else { return }
        for id in removed { if let pk = id.primaryKey { try txn.delete(owners, PrimaryKeyBytes.encode(pk), value: sourceEntry) } }
        for id in added { if let pk = id.primaryKey { try txn.put(owners, PrimaryKeyBytes.encode(pk), sourceEntry, flags: UInt32(MDB_NODUPDATA)) } }
    }

    /// Deletes a row with its index entries, its own memberships, and every membership that
    /// points at it (found through its to-one foreign key, its many-to-many inverse, or the
    /// owners database of a relationship without an inverse), so nothing dangles.
    private func delete(_ id: ObjectID, alsoDeleted: Set<ObjectID>, cursors: inout CursorSet, _ txn: LMDBTransaction) throws {
        let (pk, route) = try route(id)
        // Found and deleted through the save's cursor on the rows: one B-tree search (often
        // within the page the previous deletion left it on) instead of a lookup and a delete
        // that each descend from the root (two fifths of LMDB's work in a cascade, perf).
        let rows = try cursors.cursor(route.rows)
        guard let bytes = try rows.position(MDB_SET_KEY, primaryKey: pk)?.value, codec.entityCode(of: bytes) == route.code else { return }
        // The old values matter only for index entries; the to-ones for the holders (a fifth of
        // deleting a row was decoding values nobody read, perf).
        let oldAttributes: AttributeValues
        let oldToOne: ToOneValues
        do {
            if route.indexes.isEmpty {
                oldAttributes = []
                oldToOne = try codec.decodeToOne(bytes)
            } else {
                let old = try codec.decode(bytes, primaryKey: pk, checkingVersion: false)
                (oldAttributes, oldToOne) = (old.attributes, old.toOne)
            }
        } catch {
            throw damagedRow(pk)
        }
        // Decoded above: the bytes point into the page this frees.
        try rows.deleteCurrent()
        // (Built only when an owners database or index needs it: most deleted rows, a
        // cascade's members, have neither.)
        var builtEntry: [UInt8]?
        func entry() throws -> [UInt8] {
            if let builtEntry { return builtEntry }
            let made = try memberEntry(id)
            builtEntry = made
            return made
        }
        for reaching in route.reaching {
            let relationship = reaching.relationship
            func leave(_ holder: ObjectID) throws {
                guard let owningEntity = reaching.owningEntity, !alsoDeleted.contains(holder),
                      model.entity(for: holder)?.isKind(of: owningEntity) == true, let holderKey = holder.primaryKey else { return }
                let change = ToManyChange(source: holder, relationship: relationship, added: [], removed: [id], order: nil)
                try applyMembership(change, sourceKey: holderKey, insertedHere: InsertedKeys(), txn, &cursors)
            }
            if let own = reaching.own {
                if own.isToMany {
                    for holder in try members(own, of: pk, in: txn) { try leave(holder) }
                } else if let holder = oldToOne[own.slot] {
                    // (One holder: no array is made for it.)
                    try leave(holder)
                }
            } else if let owners = handles.owners(of: relationship) {
                let ownerKey = PrimaryKeyBytes.encode(pk)
                var holders: [ObjectID] = []
                try txn.duplicates(owners, ownerKey) { holders.append(try memberID($0)) }
                try txn.delete(owners, ownerKey)
                for holder in holders { try leave(holder) }
            }
        }
        for relationship in route.entity.toManyRelationships where !relationship.isTransient {
            guard let dbi = handles.members(of: relationship) else { continue }
            if let owners = handles.owners(of: relationship) {
                for member in try members(relationship, of: pk, in: txn) {
                    if let memberKey = member.primaryKey { try txn.delete(owners, PrimaryKeyBytes.encode(memberKey), value: try entry()) }
                }
            }
            try txn.delete(dbi, primaryKey: pk)
        }
        for attribute in route.indexes {
            guard let dbi = handles.index(of: attribute) else { continue }
            try txn.delete(dbi, IndexKey.storedKey(oldAttributes[attribute.slot], type: attribute.type, limit: keyLimit), value: try entry())
        }
    }
}

/// The entity of the current run of saved rows (they come grouped by entity) when lists follow
/// its to-ones (see ``ForeignKeyFollowers``); nil when none do. A row of the run asks one
/// namespace comparison.
private struct FollowingRun {
    private var last: (namespace: ObjectID.Namespace, entity: EntityDescription?)?

    mutating func entity(of id: ObjectID, model: ManagedObjectModel, _ followers: inout ForeignKeyFollowers) -> EntityDescription? {
        if let last, last.namespace == id.namespace { return last.entity }
        let entity = model.entity(for: id).flatMap { followers.hasFollowedToOnes($0) ? $0 : nil }
        last = (id.namespace, entity)
        return entity
    }
}
