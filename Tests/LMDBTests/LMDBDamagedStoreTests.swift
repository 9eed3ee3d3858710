import CLMDB
import Foundation
import ObjectGraph
import ObjectGraphConformance
import ObjectGraphLMDB
import OrderedCollections
import Testing

/// Environments whose ObjectGraph contents were damaged (values of a wrong length, counters
/// out of range): each is a typed error naming the file, never a crash, and the context keeps
/// its changes. (Damage inside LMDB's own B-tree pages is liblmdb's to detect, and not here.)
@Suite("LMDB store: damaged contents")
struct LMDBDamagedStoreTests {
    /// A store holding one doc (key 1), closed.
    static func seededStore() throws -> URL {
        let url = try LMDBFixture.temporaryFile()
        let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let doc = try context.insertObject(entityName: "Doc")
            try doc.setValue("kept", forKey: "title")
            try LMDBFixture.insertReply("a reply", to: doc, in: context)
            try context.save()
        }
        return url
    }

    /// The 8-byte key of primary key `pk`, as the store writes it.
    static func key(_ pk: Int64) -> [UInt8] {
        withUnsafeBytes(of: (UInt64(bitPattern: pk) ^ (1 << 63)).bigEndian) { Array($0) }
    }

    /// Writes `value` under `key` in the named database `name`, with no store open.
    static func put(_ url: URL, _ name: String, _ key: [UInt8], _ value: [UInt8]) throws {
        try LMDBFixture.withRawEnvironment(url) { _, txn in
            var dbi: MDB_dbi = 0
            try #require(mdb_dbi_open(txn, name, 0, &dbi) == MDB_SUCCESS)
            try #require(LMDBFixture.rawPut(txn, dbi, key, value) == MDB_SUCCESS)
        }
    }

    /// The value under `key` in the named database `name`.
    static func get(_ url: URL, _ name: String, _ key: [UInt8]) throws -> [UInt8]? {
        try LMDBFixture.withRawEnvironment(url) { _, txn in
            var dbi: MDB_dbi = 0
            try #require(mdb_dbi_open(txn, name, 0, &dbi) == MDB_SUCCESS)
            var key = key
            return key.withUnsafeMutableBytes { keyBytes -> [UInt8]? in
                var k = MDB_val(mv_size: keyBytes.count, mv_data: keyBytes.baseAddress)
                var v = MDB_val()
                guard mdb_get(txn, dbi, &k, &v) == MDB_SUCCESS else { return nil }
                return Array(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
            }
        }
    }

    /// Inserts a doc in a new coordinator on `url` and returns the error its save throws,
    /// checking that the context keeps the insert.
    static func insertError(_ url: URL) throws -> StoreError? {
        let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            try context.insertObject(entityName: "Doc").setValue("new", forKey: "title")
            let error = #expect(throws: StoreError.self) { try context.save() }
            #expect(context.insertedObjects.count == 1, "the context keeps its insert")
            return error
        }
    }

    @Test("a key counter or a row key at the end of Int64 is a typed error at the next insert, not an overflow crash", arguments: [true, false])
    func exhaustedKeys(counterDamaged: Bool) throws {
        let url = try Self.seededStore()
        if counterDamaged {
            try Self.put(url, "og:meta", Array("pk:Doc".utf8), Self.key(Int64.max))
        } else {
            let row = try #require(try Self.get(url, "og:rows:Doc", Self.key(1)))
            try Self.put(url, "og:rows:Doc", Self.key(Int64.max), row)
        }
        let error = try Self.insertError(url)
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains(url.path) == true, "names the file: \(String(describing: error))")
        #expect(error?.message.contains("Doc") == true, "names the hierarchy: \(String(describing: error))")
    }

    @Test("the last keys below Int64.max are still handed out, with a smaller spare block")
    func lastKeys() throws {
        let url = try Self.seededStore()
        try Self.put(url, "og:meta", Array("pk:Doc".utf8), Self.key(Int64.max - 2))
        let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        let key = try context.performAndWait {
            let doc = try context.insertObject(entityName: "Doc")
            try doc.setValue("last", forKey: "title")
            try context.save()
            return doc.objectID.primaryKey
        }
        #expect(key == Int64.max - 2)
    }

    @Test("a key counter or row key of the wrong length is a typed error naming the file, not the reader's untyped one", arguments: [
        ("og:meta", Array("pk:Doc".utf8), [1, 2, 3]), ("og:rows:Doc", [1, 2, 3], []), ("og:rows:Doc", Self.key(2) + [0], []),
    ] as [(String, [UInt8], [UInt8])])
    func keysOfAWrongLength(database: String, key: [UInt8], value: [UInt8]) throws {
        let url = try Self.seededStore()
        // A row under a damaged key holds a sound row's bytes: only its key is wrong.
        let row = try #require(try Self.get(url, "og:rows:Doc", Self.key(1)))
        try Self.put(url, database, key, value.isEmpty ? row : value)
        let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        let error = context.performAndWait { () -> StoreError? in
            try? context.insertObject(entityName: "Doc").setValue("new", forKey: "title")
            do {
                // The save allocates a key (reading the counter); the fetch reads every row.
                try context.save()
                _ = try context.fetch(FetchRequest<ManagedObject>(entityName: "Doc"))
                return nil
            } catch {
                return error as? StoreError
            }
        }
        #expect(error?.code == .corrupt, "\(String(describing: error))")
        #expect(error?.message.contains(url.path) == true, "names the file: \(String(describing: error))")
    }

    @Test("metadata entries that are garbled or empty refuse the store as corrupt, naming the file, instead of reading as empty", arguments: [
        ("userInfo", Array("{\"owner\": 1".utf8), "user metadata"), ("userInfo", Array("not json".utf8), "user metadata"),
        ("modelVersionHash", [], "no model version hash"),
    ])
    func damagedMetadata(key: String, value: [UInt8], named: String) throws {
        let url = try Self.seededStore()
        try Self.put(url, "og:meta", Array(key.utf8), value)
        let error = #expect(throws: StoreError.self) {
            try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)]).close()
        }
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains(url.path) == true && error?.message.contains(named) == true, "\(String(describing: error))")
    }

    @Test("an integer too wide for its attribute's width is refused as damaged, not handed to an Int32 that cannot hold it")
    func integerWiderThanItsAttribute() throws {
        let model = try LMDBFixture.model(extraAttribute: true)
        let url = try LMDBFixture.temporaryFile()
        try PersistentContainer(model: model, stores: [.lmdb(at: url)]).close()
        // A Doc (code 0), version 1: title "A", rank nil, extra (an Int32) 2^40; no to-ones.
        let row: [UInt8] = [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 3, 4, 0, 0, 0, 1, 65, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]
        try Self.put(url, "og:rows:Doc", Self.key(1), row)
        let container = try PersistentContainer(model: model, stores: [.lmdb(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        var request = FetchRequest<ManagedObject>(entityName: "Doc")
        request.returnsObjectsAsFaults = false
        let error = context.performAndWait { #expect(throws: StoreError.self) { _ = try context.fetch(request) } }
        #expect(error?.code == .corrupt && error?.message.contains(url.path) == true, "\(String(describing: error))")
    }

    /// Titles as a row holds them (tag, then a length and bytes), with the title each reads
    /// as, or nil when the row is damage.
    static let titles: [(bytes: [UInt8], reads: String?)] = [
        ([0], nil),                                 // nil in a required attribute
        ([4, 0, 0, 0, 2, 65, 0xFF], nil),           // "A" and a byte that is not UTF-8
        ([4, 0, 0, 0, 1, 65], "A"),
        ([4, 0, 0, 0, 3, 65, 0xC3, 0xA9], "Aé"),
    ]

    @Test("nil in a required attribute, or a string whose bytes are not UTF-8, is refused as damaged (nil stopped the process at a non-optional typed accessor; the bytes were repaired into other text); the same row with a valid title reads", arguments: titles.indices)
    func damagedTitle(index: Int) throws {
        let (title, reads) = Self.titles[index]
        let url = try LMDBFixture.temporaryFile()
        try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)]).close()
        // A Doc (code 0), version 1: the title, rank nil; no to-ones.
        let row: [UInt8] = [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 2] + title + [0, 0, 0]
        try Self.put(url, "og:rows:Doc", Self.key(1), row)
        let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        var request = FetchRequest<ManagedObject>(entityName: "Doc")
        request.returnsObjectsAsFaults = false
        let id = ObjectID(entityName: "Doc", storeIdentifier: try #require(container.coordinator.persistentStores.first).identifier, primaryKey: 1)
        if let reads {
            let titles = try context.performAndWait { try context.fetch(request).map { try $0.value(forKey: "title") as? String } }
            #expect(titles == [reads])
        } else {
            let errors = context.performAndWait {
                [#expect(throws: StoreError.self) { _ = try context.fetch(request) },
                 #expect(throws: StoreError.self) { _ = try context.existingObject(with: id) }]
            }
            for error in errors {
                #expect(error?.code == .corrupt && error?.message.contains(url.path) == true, "\(String(describing: error))")
            }
        }
    }

    @Test("a row of another hierarchy's entity, or too short to name one, is refused as damaged, not passed over (it vanished from fetches, and its fault read as deleted)", arguments: [true, false])
    func rowOfNoEntityOfItsTable(foreign: Bool) throws {
        let url = try Self.seededStore()
        let reply = try #require(try Self.get(url, "og:rows:Reply", Self.key(1)))
        let doc = try #require(try Self.get(url, "og:rows:Doc", Self.key(1)))
        // The doc's row replaced by the reply's bytes (a Reply's entity code), or by two bytes.
        try Self.put(url, "og:rows:Doc", Self.key(1), foreign ? reply : [2, 0])
        try Self.put(url, "og:rows:Doc", Self.key(2), doc)
        let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        var rows = FetchRequest<ManagedObject>(entityName: "Doc")
        rows.returnsObjectsAsFaults = false
        let id = try #require(container.coordinator.persistentStores.first).identifier
        let errors = context.performAndWait {
            [#expect(throws: StoreError.self) { _ = try context.fetch(rows) },
             #expect(throws: StoreError.self) { _ = try context.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: "Doc")) },
             #expect(throws: StoreError.self) { _ = try context.existingObject(with: ObjectID(entityName: "Doc", storeIdentifier: id, primaryKey: 1)) }]
        }
        for error in errors {
            #expect(error?.code == .corrupt && error?.message.contains(url.path) == true, "\(String(describing: error))")
        }
    }

    @Test("a counter below 1 with no rows hands out keys from 1, as the SQLite store does, where the spare block's end overflowed and stopped the process (the fuzz test)")
    func counterBelowOne() throws {
        let url = try LMDBFixture.temporaryFile()
        try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)]).close()
        try Self.put(url, "og:meta", Array("pk:Doc".utf8), Self.key(-(1 << 62)))
        let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        let key = try context.performAndWait {
            let doc = try context.insertObject(entityName: "Doc")
            try doc.setValue("first", forKey: "title")
            try context.save()
            return doc.objectID.primaryKey
        }
        #expect(key == 1)
    }

    @Test("a member or a to-one naming an entity outside the relationship's destination is refused as damaged (a member of another entity stopped the process when its owner was deleted; a typed accessor would stop on either)", arguments: [true, false])
    func referenceOutsideDestination(member: Bool) throws {
        let url = try Self.seededStore()
        // Entity codes are the entities sorted by name: Doc 0, Label 1, Reply 2.
        if member {
            // Doc 1's replies gain an entry naming Doc 1 itself.
            try Self.put(url, "og:m:Doc.replies", Self.key(1), Self.key(1) + [0, 0])
        } else {
            // Reply 1's doc (its row ends with 1 · u16 code · key) names Label 1.
            var reply = try #require(try Self.get(url, "og:rows:Reply", Self.key(1)))
            try #require(Array(reply.suffix(11)) == [1, 0, 0] + Self.key(1))
            reply[reply.count - 10] = 1
            try Self.put(url, "og:rows:Reply", Self.key(1), reply)
        }
        let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        let errors = context.performAndWait {
            var all = FetchRequest<ManagedObject>(entityName: member ? "Doc" : "Reply")
            all.returnsObjectsAsFaults = false
            return [
                #expect(throws: StoreError.self) {
                    for object in try context.fetch(all) { _ = try object.value(forKey: member ? "replies" : "doc") }
                },
                #expect(throws: StoreError.self) {
                    for object in try context.fetch(all) { context.delete(object) }
                    try context.save()
                },
            ]
        }
        for error in errors {
            #expect(error?.code == .corrupt && error?.message.contains(url.path) == true, "\(String(describing: error))")
        }
        if member { #expect(errors.first??.message.contains("Doc.replies") == true, "names the relationship") }
    }

    @Test("a row version outside 1..<Int64.max is damage when the row is read (a negative one read as no saved row, and the update was left out of the save)", arguments: [Int64(-5), 0, Int64.max])
    func versionOutsideItsRange(version: Int64) throws {
        let url = try Self.seededStore()
        var row = try #require(try Self.get(url, "og:rows:Doc", Self.key(1)))
        // format · u16 entity code · u64 version.
        withUnsafeBytes(of: UInt64(bitPattern: version).bigEndian) { row.replaceSubrange(3..<11, with: $0) }
        try Self.put(url, "og:rows:Doc", Self.key(1), row)
        let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        let error = context.performAndWait {
            #expect(throws: StoreError.self) {
                let doc = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Doc")).first)
                try doc.setValue("changed", forKey: "title")
                try context.save()
            }
        }
        #expect(error?.code == .corrupt && error?.message.contains(url.path) == true, "\(String(describing: error))")
    }
}

extension LMDBDamagedStoreTests {
    @Test("a row whose version is damaged is deleted through its unread fault whether its entity has an index (its values read for their entries) or not, as the SQLite store deletes it: it was refused only when an index was kept", arguments: ["Plain", "Indexed"])
    func deletingARowWithADamagedVersion(entity: String) throws {
        let url = try LMDBFixture.temporaryFile()
        let model = try StoreDamageProbe.relationshipFreeModel()
        let seeding = try PersistentContainer(model: model, stores: [.lmdb(at: url)])
        try StoreDamageProbe.seedRelationshipFree(seeding)
        seeding.close()
        var row = try #require(try Self.get(url, "og:rows:\(entity)", Self.key(1)))
        // format · u16 entity code · u64 version: 0, which no saved row holds.
        withUnsafeBytes(of: UInt64(0).bigEndian) { row.replaceSubrange(3..<11, with: $0) }
        try Self.put(url, "og:rows:\(entity)", Self.key(1), row)
        let container = try PersistentContainer(model: model, stores: [.lmdb(at: url)])
        defer { container.close() }
        // Plains, Indexeds, Indexeds found by their score: the index entry went with the row.
        #expect(try StoreDamageProbe.deleteUnread(entity, in: container) == (entity == "Plain" ? [0, 1, 1] : [1, 0, 0]))
    }
}

extension LMDBDamagedStoreTests {
    @Test("an ordered member naming an entity outside the destination is damage when the store rewrites the list, as it is when the list is read; the store kept it and wrote it back (a context reads the list first, so the store is asked directly)")
    func orderedMemberOutsideDestination() throws {
        let url = try LMDBFixture.temporaryFile()
        try LMDBOrderedFixture.withContext(url) { context in
            let playlist = try context.insertObject(entityName: "Playlist")
            try playlist.setValue("mix", forKey: "name")
            for n in 1...3 { _ = try LMDBOrderedFixture.track(n, context) }
            try playlist.setValue(OrderedSet(try context.fetch(FetchRequest<ManagedObject>(entityName: "Track")).prefix(2)), forKey: "queue")
        }
        // Playlist 1's queue gains, at the end, a duplicate naming Playlist 1 (code 0; Track is 1).
        try Self.put(url, LMDBOrderedFixture.queueDatabase, Self.key(1), Self.key(1 << 40) + Self.key(1) + [0, 0])
        let model = try LMDBOrderedFixture.model()
        let container = try PersistentContainer(model: model, stores: [.lmdb(at: url)])
        defer { container.close() }
        let store = try #require(container.coordinator.persistentStores.first)
        let queue = try #require(model.entity(named: "Playlist")?.relationship(named: "queue"))
        func id(_ entity: String, _ pk: Int64) -> ObjectID { ObjectID(entityName: entity, storeIdentifier: store.identifier, primaryKey: pk) }
        var changes = StoreChangeSet()
        changes.toMany = [ToManyChange(source: id("Playlist", 1), relationship: queue, added: [id("Track", 3)], removed: [], order: nil)]
        let error = #expect(throws: StoreError.self) { try store.save(changes) }
        #expect(error?.code == .corrupt && error?.message.contains(url.path) == true && error?.message.contains("Playlist.queue") == true, "\(String(describing: error))")
    }
}

extension LMDBDamagedStoreTests {
    @Test("an index made for rows saved before it, at open, takes a row with a damaged version by its values: the open succeeded only without such a row, and reading the row still refuses it")
    func indexRebuiltOverADamagedVersion() throws {
        let url = try LMDBFixture.temporaryFile()
        try LMDBIndexSyncTests.insert(["alpha", "beta"], model: try LMDBIndexSyncTests.model(), url: url)
        var row = try #require(try Self.get(url, "og:rows:Item", Self.key(1)))
        withUnsafeBytes(of: UInt64(0).bigEndian) { row.replaceSubrange(3..<11, with: $0) }
        try Self.put(url, "og:rows:Item", Self.key(1), row)
        // Indexed now: the open builds the index from every row.
        let container = try PersistentContainer(model: try LMDBIndexSyncTests.model(indexed: true), stores: [.lmdb(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        let (beta, error) = try context.performAndWait {
            let beta = try context.fetch(FetchRequest<ManagedObject>(entityName: "Item", predicate: .key("name") == "beta")).map { try $0.value(forKey: "name") as? String }
            let error = #expect(throws: StoreError.self) {
                var alpha = FetchRequest<ManagedObject>(entityName: "Item", predicate: .key("name") == "alpha")
                alpha.returnsObjectsAsFaults = false
                _ = try context.fetch(alpha)
            }
            return (beta, error)
        }
        #expect(beta == ["beta"])
        #expect(error?.code == .corrupt && error?.message.contains(url.path) == true, "\(String(describing: error))")
    }
}
