import CLMDB
import Foundation
import ObjectGraph
import ObjectGraphLMDB
import Testing

@Suite("LMDB store")
struct LMDBStoreTests {
    @Test("the layout: metadata, one row database per hierarchy, member databases, an owners database for many-to-nil, an index")
    func layout() throws {
        let url = try LMDBFixture.temporaryFile()
        try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)]).close()
        #expect(try LMDBFixture.databaseNames(url) == [
            "og:i:Doc.rank", "og:m:Doc.labels", "og:m:Doc.replies", "og:meta", "og:mr:Doc.labels",
            "og:rows:Doc", "og:rows:Label", "og:rows:Reply",
        ])
    }

    @Test("a file that is not LMDB is refused with a typed error keeping LMDB's")
    func notLMDB() throws {
        let url = try LMDBFixture.temporaryFile()
        try Data(String(repeating: "this is not a database, only text. ", count: 400).utf8).write(to: url)
        let error = #expect(throws: StoreError.self) { _ = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)]) }
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains(url.path) == true)
        #expect((error?.underlying as? LMDBError)?.code == MDB_INVALID)
    }

    @Test("an LMDB environment that is not an ObjectGraph store is refused")
    func foreignEnvironment() throws {
        let url = try LMDBFixture.temporaryFile()
        try LMDBFixture.withRawEnvironment(url) { _, txn in
            var dbi: MDB_dbi = 0
            mdb_dbi_open(txn, "people", UInt32(MDB_CREATE), &dbi)
        }
        let error = #expect(throws: StoreError.self) { _ = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)]) }
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains("not an ObjectGraph store") == true)
        #expect(try LMDBFixture.databaseNames(url) == ["people"], "the foreign file is left alone")
    }

    @Test("a store written by another model is refused as incompatible, and left as it was")
    func incompatibleModel() throws {
        let url = try LMDBFixture.temporaryFile()
        try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)]).close()
        let before = try LMDBFixture.databaseNames(url)
        let error = #expect(throws: StoreError.self) {
            _ = try PersistentContainer(model: try LMDBFixture.model(extraAttribute: true), stores: [.lmdb(at: url)])
        }
        #expect(error?.code == .incompatibleModel)
        #expect(error?.message.contains(url.path) == true)
        #expect(try LMDBFixture.databaseNames(url) == before)
    }

    /// Bytes that are not a row, a well-formed row with none of a Doc's values (read as
    /// one, a fault would have no value to return for its title), and well-formed rows whose
    /// title is an integer or whose rank is a string (handed up, `value(forKey: "title")`
    /// answered 7, and a typed `String` accessor stopped the process).
    static let damagedRows: [[UInt8]] = [
        [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 9, 4, 255, 255],
        [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0],
        [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 2, 1, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0],
        [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 2, 4, 0, 0, 0, 1, 65, 4, 0, 0, 0, 1, 66, 0, 0],
    ]

    @Test("a damaged row is a typed error naming the file, not a crash", arguments: damagedRows)
    func damagedRow(_ damaged: [UInt8]) throws {
        let url = try LMDBFixture.temporaryFile()
        let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        let context = container.newBackgroundContext()
        let id = try context.performAndWait {
            let doc = try context.insertObject(entityName: "Doc")
            try doc.setValue("intact", forKey: "title")
            try context.save()
            return doc.objectID
        }
        container.close()
        try LMDBFixture.withRawEnvironment(url) { _, txn in
            var dbi: MDB_dbi = 0
            mdb_dbi_open(txn, "og:rows:Doc", 0, &dbi)
            var key = (UInt64(bitPattern: id.primaryKey!) ^ (1 << 63)).bigEndian
            var garbage = damaged
            try withUnsafeMutableBytes(of: &key) { keyBytes in
                try garbage.withUnsafeMutableBytes { valueBytes in
                    var k = MDB_val(mv_size: 8, mv_data: keyBytes.baseAddress)
                    var v = MDB_val(mv_size: valueBytes.count, mv_data: valueBytes.baseAddress)
                    guard mdb_put(txn, dbi, &k, &v, 0) == MDB_SUCCESS else { throw CocoaError(.fileWriteUnknown) }
                }
            }
        }
        let reopened = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        let check = reopened.newBackgroundContext()
        check.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Doc")
            request.returnsObjectsAsFaults = false
            let error = #expect(throws: StoreError.self) { _ = try check.fetch(request) }
            #expect(error?.code == .corrupt)
            #expect(error?.message.contains(url.lastPathComponent) == true)
            let faultError = #expect(throws: StoreError.self) { _ = try check.existingObject(with: id) }
            #expect(faultError?.code == .corrupt)
        }
        reopened.close()
    }

    @Test("strings with quotes, NUL bytes and long text round-trip exactly, and equality finds them")
    func hostileStrings() throws {
        let url = try LMDBFixture.temporaryFile()
        let texts = ["it's \"quoted\"", "a\u{0}b\u{0}", "", "\u{0}", "emoji 👩‍👩‍👧 and é", String(repeating: "x", count: 100_000)]
        let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for text in texts { try context.insertObject(entityName: "Doc").setValue(text, forKey: "title") }
            try context.save()
        }
        container.close()
        let reopened = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        let fresh = reopened.newBackgroundContext()
        try fresh.performAndWait {
            let stored = try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Doc")).map { try $0.value(forKey: "title") as? String }
            #expect(stored == texts.map { Optional($0) })
            #expect(try fresh.count(for: FetchRequest<ManagedObject>(entityName: "Doc", predicate: key("title") == "a\u{0}b\u{0}")) == 1)
        }
        reopened.close()
    }

    @Test("a change set that fails part-way (stale version, or a key already taken) writes nothing, index entries included")
    func failedChangeSetWritesNothing() throws {
        let url = try LMDBFixture.temporaryFile()
        let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        let store = try #require(container.coordinator.persistentStores.first)
        let model = container.model
        func doc(_ pk: Int64, _ title: String, rank: Double, version: Int64 = 1) -> RowSnapshot {
            RowSnapshot(objectID: ObjectID(entityName: "Doc", storeIdentifier: store.identifier, primaryKey: pk), version: version,
                        attributes: [.string(title), .double(rank)], toOne: [])
        }
        var first = StoreChangeSet()
        first.inserted = [doc(1, "one", rank: 1)]
        try store.save(first)

        var stale = StoreChangeSet()
        stale.inserted = [doc(2, "two", rank: 2)]
        stale.updated = [RowUpdate(values: doc(1, "changed", rank: 5, version: 3), expectedVersion: 2)]
        let conflict = #expect(throws: StoreError.self) { try store.save(stale) }
        #expect(conflict?.code == .conflict)
        #expect(conflict?.conflicts.first?.storedVersion == 1)
        #expect(conflict?.conflicts.first?.storedSnapshot?.attributes.first == .string("one"))

        var taken = StoreChangeSet()
        taken.inserted = [doc(3, "three", rank: 3), doc(1, "again", rank: 4)]
        let duplicate = #expect(throws: StoreError.self) { try store.save(taken) }
        #expect(duplicate?.message.contains("exists") == true)

        let docs = try #require(model.entity(named: "Doc"))
        #expect(try store.fetch(StoreFetchRequest(entity: docs, resultType: .count)).count == 1)
        let ranked = try store.fetch(StoreFetchRequest(entity: docs, predicate: key("rank") >= 0.0, resultType: .snapshots)).snapshots
        #expect(ranked.map(\.objectID.primaryKey) == [1], "the rank index holds only the saved row")
        container.close()
    }

    @Test("metadata and user metadata survive reopening; the store UUID is stable")
    func metadataIsStable() throws {
        let url = try LMDBFixture.temporaryFile()
        let first = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        let store = try #require(first.coordinator.persistentStores.first)
        let identifier = store.identifier
        var changes = StoreChangeSet()
        changes.userMetadata = ["owner": "tests"]
        try store.save(changes)
        first.close()
        let second = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        let reopened = try #require(second.coordinator.persistentStores.first)
        #expect(reopened.identifier == identifier)
        #expect(try reopened.metadata().modelVersionHash == second.model.versionHash)
        #expect(try reopened.metadata().userInfo == ["owner": "tests"])
        #expect(reopened.capabilities.isSuperset(of: [.persistent, .durable, .multiProcess, .concurrentReaders]))
        second.close()
    }

    @Test("a to-many's members are counted without reading them, and follow deletes")
    func memberCount() throws {
        let url = try LMDBFixture.temporaryFile()
        let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        let context = container.newBackgroundContext()
        let (noteID, commentIDs) = try context.performAndWait {
            let note = try context.insertObject(entityName: "Doc")
            try note.setValue("with comments", forKey: "title")
            var comments: [ManagedObject] = []
            for index in 0..<5 { comments.append(try LMDBFixture.insertReply("c\(index)", to: note, in: context)) }
            try context.save()
            return (note.objectID, comments.map(\.objectID))
        }
        let store = try #require(container.coordinator.persistentStores.first as? LMDBStore)
        let comments = try #require(container.model.entity(named: "Doc")?.relationship(named: "replies"))
        #expect(try store.memberCount(of: comments, for: noteID) == 5)
        try context.performAndWait {
            context.delete(try context.existingObject(with: commentIDs[0]))
            try context.save()
        }
        #expect(try store.memberCount(of: comments, for: noteID) == 4)
        #expect(try store.relatedIDs(for: comments, of: [noteID]) == [Array(commentIDs.dropFirst())])
        container.close()
    }

    @Test("one save inserting, updating and deleting thousands of rows through its kept cursors leaves exactly the expected rows, members and index entries")
    func bulkMixedSave() throws {
        let url = try LMDBFixture.temporaryFile()
        let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        let context = container.newBackgroundContext()
        // 20 docs × 150 replies span many leaf pages, so deleting every other doc's replies
        // rebalances and merges pages under the cursors the save keeps open.
        let docIDs: [ObjectID] = try context.performAndWait {
            var docs: [ManagedObject] = []
            for d in 0..<20 {
                let doc = try context.insertObject(entityName: "Doc")
                try doc.setValue("doc \(d)", forKey: "title")
                try doc.setValue(Double(d), forKey: "rank")
                for r in 0..<150 { try LMDBFixture.insertReply("reply \(d).\(r)", to: doc, in: context) }
                docs.append(doc)
            }
            try context.save()
            return docs.map(\.objectID)
        }
        try context.performAndWait {
            for (d, id) in docIDs.enumerated() {
                let doc = try context.existingObject(with: id)
                if d % 2 == 0 {
                    context.delete(doc)
                    continue
                }
                try doc.setValue(Double(100 + d), forKey: "rank")
                let replies = try #require(doc.value(forKey: "replies") as? Set<ManagedObject>)
                for (r, reply) in replies.enumerated() where r % 3 == 0 {
                    try reply.setValue("edited \(d).\(r)", forKey: "content")
                }
                try LMDBFixture.insertReply("extra \(d)", to: doc, in: context)
            }
            let late = try context.insertObject(entityName: "Doc")
            try late.setValue("late", forKey: "title")
            try context.save()
        }
        let store = try #require(container.coordinator.persistentStores.first as? LMDBStore)
        let replies = try #require(container.model.entity(named: "Doc")?.relationship(named: "replies"))
        let fresh = container.newBackgroundContext()
        try fresh.performAndWait {
            #expect(try fresh.count(for: FetchRequest<ManagedObject>(entityName: "Doc")) == 11)
            #expect(try fresh.count(for: FetchRequest<ManagedObject>(entityName: "Reply")) == 10 * 151)
            #expect(try fresh.count(for: FetchRequest<ManagedObject>(entityName: "Reply", predicate: key("content").beginsWith("edited"))) == 10 * 50)
            let ranked = try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Doc", predicate: key("rank") >= 100.0))
            #expect(ranked.count == 10, "the rank index moved with every update and lost every deleted doc")
            #expect(try fresh.count(for: FetchRequest<ManagedObject>(entityName: "Doc", predicate: key("rank") < 100.0)) == 0)
        }
        for (d, id) in docIDs.enumerated() {
            #expect(try store.memberCount(of: replies, for: id) == (d % 2 == 0 ? 0 : 151))
        }
        container.close()
    }
}
