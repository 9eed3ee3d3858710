import CLMDB
import ObjectGraph

/// Brings a store of the layout `objectgraph-lmdb-1` (``LMDBLayout/listFormatValue``) to the
/// current one. Format 1 kept each ordered to-many's members as one list value under the
/// owner's key (10 bytes per member: member key · entity code), rewritten whole at every
/// change; format 2 keeps one duplicate per member with its position in front (see
/// `LMDBStore+OrderedMembers.swift`). Nothing else differs, so the upgrade rewrites only the
/// ordered members databases, inside the write transaction that opens the store: it lands
/// whole with the new format value, or not at all.
enum LMDBLayoutUpgrade {
    /// Rewrites every ordered members database of `layout` as duplicates (positions
    /// `index × OrderPositions.gap`, in list order) and records the current format. Run only
    /// when the stored model version hash is the request's, so the layout's relationships are
    /// the ones the file was written with.
    static func upgrade(_ txn: LMDBTransaction, layout: LMDBLayout, metadata: MDB_dbi, path: String) throws {
        let environment = txn.environment
        for relationship in layout.toManyRelationships where relationship.isOrdered {
            let name = LMDBLayout.membersName(relationship)
            guard let old = try environment.database(name, in: txn, create: false, duplicates: false) else { continue }
            var lists: [(key: [UInt8], list: [UInt8])] = []
            try txn.withCursor(old) { cursor in
                var next = try cursor.move(MDB_FIRST)
                while let entry = next {
                    lists.append((Array(entry.key), Array(entry.value)))
                    next = try cursor.move(MDB_NEXT)
                }
            }
            // A database's flags are fixed when it is made: the plain one goes (with its
            // handle), and one of the same name is made duplicate-sorted.
            try check(mdb_drop(txn.txn, old, 1), "upgrading \(name) in \(path)")
            guard let dbi = try environment.database(name, in: txn, create: true, duplicates: true) else {
                throw StoreError(.backend, "\(path): database \(name) could not be made again while upgrading its layout")
            }
            for (key, list) in lists {
                guard list.count % 10 == 0 else {
                    let owner = key.count == 8 ? (try? key.withUnsafeBytes(PrimaryKeyBytes.decode)).map(String.init) ?? "?" : "?"
                    throw StoreError(.corrupt, "\(path): the member list of the row with key \(owner) in \(name) is damaged (\(list.count) bytes, not 10 per member); the layout cannot be upgraded")
                }
                try list.withUnsafeBytes { list in
                    for index in 0..<list.count / 10 {
                        var member = ByteReader(UnsafeRawBufferPointer(rebasing: list[index * 10..<index * 10 + 10]))
                        let pk = try member.orderedInt64(), code = try member.u16()
                        try LMDBStore.positionedEntry(position: Int64(index) * OrderPositions.gap, pk: pk, code: code) {
                            try txn.put(dbi, key, lent: $0, flags: UInt32(MDB_NODUPDATA))
                        }
                    }
                }
            }
        }
        try txn.put(metadata, Array(LMDBLayout.formatKey.utf8), Array(LMDBLayout.formatValue.utf8))
    }

    /// The format value of the ObjectGraph store at `path`, read without writing anything or
    /// taking LMDB's lock (for an error message about a file this process may not write);
    /// `nil` when it cannot be read.
    static func storedFormat(readOnly path: String) -> String? {
        var env: OpaquePointer?
        guard mdb_env_create(&env) == MDB_SUCCESS, let env else { return nil }
        defer { mdb_env_close(env) }
        mdb_env_set_maxdbs(env, 4)
        guard mdb_env_open(env, path, UInt32(MDB_NOSUBDIR | MDB_RDONLY | MDB_NOLOCK), 0o644) == MDB_SUCCESS,
              (try? LMDBFileExtent.verify(env, path: path)) != nil else { return nil }
        var txn: OpaquePointer?
        guard mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn) == MDB_SUCCESS else { return nil }
        defer { mdb_txn_abort(txn) }
        var dbi: MDB_dbi = 0
        guard mdb_dbi_open(txn, LMDBLayout.metadataName, 0, &dbi) == MDB_SUCCESS else { return nil }
        return Array(LMDBLayout.formatKey.utf8).withUnsafeBytes { raw in
            var key = MDB_val(mv_size: raw.count, mv_data: UnsafeMutableRawPointer(mutating: raw.baseAddress))
            var value = MDB_val()
            guard mdb_get(txn, dbi, &key, &value) == MDB_SUCCESS else { return nil }
            return String(decoding: UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size), as: UTF8.self)
        }
    }
}
