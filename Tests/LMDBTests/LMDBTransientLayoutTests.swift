import CLMDB
import Foundation
import ObjectGraph
@testable import ObjectGraphLMDB
import Testing

/// Transient properties are not part of the model version hash, so a model that only adds,
/// removes or moves a transient attribute or to-one opens an existing store. LMDB rows used to
/// hold every attribute slot (transient ones as nil) and every to-one, read back by position:
/// a moved transient made a read return another slot's value (name read as nil), and an added
/// one made every row of the entity "damaged" (an audit). Rows of format 2 hold only the
/// persistent values and to-ones; rows of format 1 (files written before) are still read.
@Suite("LMDB rows and transient properties")
struct LMDBTransientLayoutTests {
    /// `Item` with the attributes `names` in this order; a name ending in `*` is transient.
    static func items(_ names: [String], indexed: Bool = false) throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Item") { e in
                for name in names {
                    let transient = name.hasSuffix("*")
                    let bare = transient ? String(name.dropLast()) : name
                    e.attribute(bare, .string, optional: true, indexed: indexed && !transient, transient: transient)
                }
            }
        }
    }

    /// `Owner` (a transient attribute before its title) and `Item` (a name and the to-ones
    /// `toOnes` in this order: `owner`, persistent, with the inverse `items`; any other is a
    /// transient one-to-nil to `Owner`).
    static func owned(_ toOnes: [String]) throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Owner") { e in
                e.attribute("scratch", .string, optional: true, transient: true)
                e.attribute("title", .string, optional: true)
                e.toMany("items", "Item", inverse: "owner")
            }
            m.entity("Item") { e in
                e.attribute("name", .string, optional: true)
                for name in toOnes {
                    if name == "owner" {
                        e.toOne("owner", "Owner", inverse: "items")
                    } else {
                        e.toOne(name, "Owner", transient: true)
                    }
                }
            }
        }
    }

    static func withContext<T>(_ model: ManagedObjectModel, _ url: URL, _ body: (ManagedObjectContext) throws -> T) throws -> T {
        let container = try PersistentContainer(model: model, stores: [.lmdb(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        return try context.performAndWait { try body(context) }
    }

    static func insert(_ names: [String], model: ManagedObjectModel, url: URL) throws {
        try withContext(model, url) { context in
            for name in names { try context.insertObject(entityName: "Item").setValue(name, forKey: "name") }
            try context.save()
        }
    }

    static func fetch(_ context: ManagedObjectContext, _ entity: String, _ predicate: FetchPredicate? = nil) throws -> [ManagedObject] {
        var request = FetchRequest<ManagedObject>(entityName: entity, predicate: predicate, sortKeys: [SortKey(entity == "Item" ? "name" : "title")])
        request.returnsObjectsAsFaults = false
        return try context.fetch(request)
    }

    static func names(_ model: ManagedObjectModel, _ url: URL, _ predicate: FetchPredicate? = nil) throws -> [String?] {
        try withContext(model, url) { context in
            try fetch(context, "Item", predicate).map { try $0.value(forKey: "name") as? String }
        }
    }

    // MARK: Raw rows

    /// The stored bytes of the row with key `pk` in `og:rows:<root>`.
    static func rawRow(_ url: URL, root: String = "Item", pk: Int64) throws -> [UInt8] {
        try LMDBFixture.withRawEnvironment(url) { _, txn in
            var dbi: MDB_dbi = 0
            guard mdb_dbi_open(txn, "og:rows:\(root)", 0, &dbi) == MDB_SUCCESS else { throw CocoaError(.fileReadUnknown) }
            var key = (UInt64(bitPattern: pk) ^ (1 << 63)).bigEndian
            return try withUnsafeMutableBytes(of: &key) { keyBytes in
                var k = MDB_val(mv_size: 8, mv_data: keyBytes.baseAddress)
                var v = MDB_val()
                guard mdb_get(txn, dbi, &k, &v) == MDB_SUCCESS else { throw CocoaError(.fileReadNoSuchFile) }
                return Array(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
            }
        }
    }

    /// Replaces the row with key `pk` in `og:rows:<root>` with `bytes`.
    static func putRawRow(_ url: URL, root: String = "Item", pk: Int64, _ bytes: [UInt8]) throws {
        try LMDBFixture.withRawEnvironment(url) { _, txn in
            var dbi: MDB_dbi = 0
            guard mdb_dbi_open(txn, "og:rows:\(root)", 0, &dbi) == MDB_SUCCESS else { throw CocoaError(.fileWriteUnknown) }
            var key = (UInt64(bitPattern: pk) ^ (1 << 63)).bigEndian
            var value = bytes
            try withUnsafeMutableBytes(of: &key) { keyBytes in
                try value.withUnsafeMutableBytes { valueBytes in
                    var k = MDB_val(mv_size: 8, mv_data: keyBytes.baseAddress)
                    var v = MDB_val(mv_size: valueBytes.count, mv_data: valueBytes.baseAddress)
                    guard mdb_put(txn, dbi, &k, &v, 0) == MDB_SUCCESS else { throw CocoaError(.fileWriteUnknown) }
                }
            }
        }
    }

    /// A row in the encoding of format `format` (see Backends/LMDB/README.md): string values
    /// (nil as the nil tag) and to-ones (keys of entity `toOneCode`, nil as none), as given.
    static func row(format: UInt8, code: UInt16, version: UInt64, values: [String?], toOne: [Int64?] = [], toOneCode: UInt16 = 0) -> [UInt8] {
        func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
            withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
        }
        var bytes: [UInt8] = [format]
        append(code, to: &bytes)
        append(version, to: &bytes)
        append(UInt16(values.count), to: &bytes)
        for value in values {
            guard let value else { bytes.append(0); continue }
            bytes.append(4)
            append(UInt32(value.utf8.count), to: &bytes)
            bytes.append(contentsOf: value.utf8)
        }
        append(UInt16(toOne.count), to: &bytes)
        for key in toOne {
            guard let key else { bytes.append(0); continue }
            bytes.append(1)
            append(toOneCode, to: &bytes)
            append(UInt64(bitPattern: key) ^ (1 << 63), to: &bytes)
        }
        return bytes
    }

    static func id(named name: String, _ model: ManagedObjectModel, _ url: URL) throws -> ObjectID {
        try withContext(model, url) { context in
            try #require(try fetch(context, "Item", .key("name") == name).first).objectID
        }
    }

    // MARK: Attributes

    @Test("a transient attribute moved before a stored one: the stored value is read, not the transient's nil")
    func movedTransientAttribute() throws {
        let url = try LMDBFixture.temporaryFile()
        let v1 = try Self.items(["name", "later*"])
        let v2 = try Self.items(["scratch*", "name"])
        #expect(v1.versionHash == v2.versionHash, "transients are not in the version hash: the store opens")
        try Self.insert(["alpha"], model: v1, url: url)
        #expect(try Self.names(v2, url) == ["alpha"])
        #expect(try Self.names(v2, url, .key("name") == "alpha") == ["alpha"])
        try Self.withContext(v2, url) { context in
            let item = try #require(try Self.fetch(context, "Item").first)
            #expect(try item.value(forKey: "scratch") == nil)
        }
        #expect(try Self.names(v1, url) == ["alpha"], "and back")
    }

    @Test("a transient attribute added to a stored entity: its rows are read, not refused as damaged")
    func addedTransientAttribute() throws {
        let url = try LMDBFixture.temporaryFile()
        let v1 = try Self.items(["name"])
        let v2 = try Self.items(["name", "later*"])
        let v3 = try Self.items(["first*", "name", "later*"])
        #expect(v1.versionHash == v2.versionHash && v2.versionHash == v3.versionHash)
        try Self.insert(["alpha"], model: v1, url: url)
        #expect(try Self.names(v2, url) == ["alpha"])
        #expect(try Self.names(v3, url) == ["alpha"])
        try Self.insert(["beta"], model: v3, url: url)
        #expect(try Self.names(v1, url) == ["alpha", "beta"], "and removed again")
        #expect(try Self.names(v2, url) == ["alpha", "beta"])
    }

    @Test("after the model change, saving and re-reading works under both models")
    func saveAfterModelChange() throws {
        let url = try LMDBFixture.temporaryFile()
        let v1 = try Self.items(["name", "later*"])
        let v2 = try Self.items(["scratch*", "name", "more*"])
        try Self.insert(["alpha", "gamma"], model: v1, url: url)
        try Self.withContext(v2, url) { context in
            let items = try Self.fetch(context, "Item")
            try items[0].setValue("beta", forKey: "name")
            try items[0].setValue("not stored", forKey: "scratch")
            context.delete(items[1])
            try context.insertObject(entityName: "Item").setValue("delta", forKey: "name")
            try context.save()
        }
        #expect(try Self.names(v2, url) == ["beta", "delta"])
        #expect(try Self.names(v1, url) == ["beta", "delta"])
        #expect(try Self.names(v1, url, .key("name") == "delta") == ["delta"])
        let id = try Self.id(named: "beta", v2, url)
        let stored = try Self.rawRow(url, pk: try #require(id.primaryKey))
        #expect(stored.first == RowCodec.format && RowCodec.format == 2)
        #expect(Array(stored[11..<13]) == [0, 1], "one value: the transient slots are not stored")
    }

    @Test("an index rebuilt at open reads rows written with the transient elsewhere")
    func indexRebuiltAcrossTransientChange() throws {
        let url = try LMDBFixture.temporaryFile()
        try Self.insert(["alpha", "beta"], model: try Self.items(["later*", "name"]), url: url)
        let indexed = try Self.items(["name", "scratch*"], indexed: true)
        #expect(try Self.names(indexed, url, .key("name") == "alpha") == ["alpha"])
        #expect(try Self.names(indexed, url, .key("name") > "alpha") == ["beta"])
    }

    // MARK: To-ones

    @Test("a transient to-one moved before or added beside a stored one: the stored one is read, and updates and deletes follow it")
    func transientToOne() throws {
        let url = try LMDBFixture.temporaryFile()
        let v1 = try Self.owned(["owner", "helper"])
        let v2 = try Self.owned(["helper", "owner"])
        let v3 = try Self.owned(["owner"])
        let v4 = try Self.owned(["before", "owner", "after"])
        #expect(v1.versionHash == v2.versionHash && v1.versionHash == v3.versionHash && v1.versionHash == v4.versionHash)
        try Self.withContext(v1, url) { context in
            let first = try context.insertObject(entityName: "Owner")
            try first.setValue("first", forKey: "title")
            let second = try context.insertObject(entityName: "Owner")
            try second.setValue("second", forKey: "title")
            for name in ["a", "b"] {
                let item = try context.insertObject(entityName: "Item")
                try item.setValue(name, forKey: "name")
                try item.setValue(first, forKey: "owner")
                try item.setValue(second, forKey: "helper")
            }
            try context.save()
        }
        func owners(_ model: ManagedObjectModel) throws -> [String: String?] {
            try Self.withContext(model, url) { context in
                var result: [String: String?] = [:]
                for item in try Self.fetch(context, "Item") {
                    let owner = try item.value(forKey: "owner") as? ManagedObject
                    result[try item.value(forKey: "name") as! String] = try owner?.value(forKey: "title") as? String
                }
                return result
            }
        }
        func members(_ model: ManagedObjectModel) throws -> [String: [String]] {
            try Self.withContext(model, url) { context in
                var result: [String: [String]] = [:]
                for owner in try Self.fetch(context, "Owner") {
                    let items = try #require(try owner.value(forKey: "items") as? Set<ManagedObject>)
                    result[try owner.value(forKey: "title") as! String] = try items.map { try $0.value(forKey: "name") as! String }.sorted()
                }
                return result
            }
        }
        for model in [v1, v2, v3, v4] {
            #expect(try owners(model) == ["a": "first", "b": "first"])
        }
        // An update and a delete under a model with the transient elsewhere read the stored
        // to-one to move and drop the member entries.
        try Self.withContext(v2, url) { context in
            let items = try Self.fetch(context, "Item")
            let second = try #require(try Self.fetch(context, "Owner").last)
            try items[0].setValue(second, forKey: "owner")
            try context.save()
        }
        #expect(try members(v4) == ["first": ["b"], "second": ["a"]])
        try Self.withContext(v4, url) { context in
            context.delete(try #require(try Self.fetch(context, "Item").last))
            try context.save()
        }
        #expect(try members(v1) == ["first": [], "second": ["a"]])
        for model in [v1, v2, v3, v4] {
            #expect(try owners(model) == ["a": "second"])
        }
    }

    @Test("counts grouped by an owner's attribute read it past the owner's transient slot")
    func groupedPastTransient() throws {
        let model = try Self.owned(["helper", "owner"])
        let container = try PersistentContainer(model: model, stores: [.lmdb(at: try LMDBFixture.temporaryFile())])
        defer { container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for (title, count) in [("x", 2), ("y", 3)] {
                let owner = try context.insertObject(entityName: "Owner")
                try owner.setValue(title, forKey: "title")
                try owner.setValue("scratch", forKey: "scratch")
                for _ in 0..<count { try context.insertObject(entityName: "Item").setValue(owner, forKey: "owner") }
            }
            try context.save()
        }
        let store = try #require(container.coordinator.persistentStores.first)
        let items = try container.coordinator.model.requireEntity("Item")
        let answer = try store.fetch(StoreFetchRequest(entity: items, resultType: .groups(StoreGrouping(keys: ["owner.title"], aggregates: [.count]))))
        let groups = try #require(answer.groups, "answered natively")
        #expect(groups.map { $0[0] } == [.string("x"), .string("y")])
        #expect(groups.map { $0[1] } == [.integer(2), .integer(3)])
    }

    // MARK: Format 1

    @Test("rows of format 1 (every slot, by position) are still read, and rewritten as format 2 when saved")
    func formatOneRows() throws {
        let url = try LMDBFixture.temporaryFile()
        let model = try Self.items(["name", "later*"])
        try Self.insert(["placeholder"], model: model, url: url)
        let pk = try #require(try Self.id(named: "placeholder", model, url).primaryKey)
        // As a store before format 2 wrote it: the transient slot as nil.
        try Self.putRawRow(url, pk: pk, Self.row(format: 1, code: 0, version: 1, values: ["alpha", nil]))
        #expect(try Self.names(model, url) == ["alpha"])
        #expect(try Self.names(model, url, .key("name") == "alpha") == ["alpha"])
        try Self.withContext(model, url) { context in
            let item = try #require(try Self.fetch(context, "Item").first)
            try item.setValue("beta", forKey: "name")
            try context.save()
        }
        #expect(try Self.names(model, url) == ["beta"])
        #expect(try Self.rawRow(url, pk: pk) == Self.row(format: 2, code: 0, version: 2, values: ["beta"]))
        // Deleting a format-1 row reads its to-ones past its values.
        try Self.withContext(model, url) { context in
            context.delete(try #require(try Self.fetch(context, "Item").first))
            try context.save()
        }
        #expect(try Self.names(model, url) == [])
    }

    @Test("a format-1 row of a model without the entity's transients is read by one with them")
    func formatOneRowWithoutTransients() throws {
        let url = try LMDBFixture.temporaryFile()
        let v2 = try Self.owned(["helper", "owner"])
        let ids: (owner: ObjectID, item: ObjectID) = try Self.withContext(v2, url) { context in
            let owner = try context.insertObject(entityName: "Owner")
            try owner.setValue("first", forKey: "title")
            let item = try context.insertObject(entityName: "Item")
            try item.setValue("placeholder", forKey: "name")
            try item.setValue(owner, forKey: "owner")
            try context.save()
            return (owner.objectID, item.objectID)
        }
        let layout = LMDBLayout(model: v2, entities: v2.entities, indexEverything: false)
        let itemCode = try #require(layout.codes["Item"]), ownerCode = try #require(layout.codes["Owner"])
        // Written by Item { name, owner } and Owner { title, items } (no transients): format 1
        // held the persistent values and to-ones only, as format 2 does.
        try Self.putRawRow(url, pk: try #require(ids.item.primaryKey), Self.row(
            format: 1, code: itemCode, version: 1, values: ["alpha"], toOne: [ids.owner.primaryKey], toOneCode: ownerCode))
        try Self.putRawRow(url, root: "Owner", pk: try #require(ids.owner.primaryKey), Self.row(
            format: 1, code: ownerCode, version: 1, values: ["first"]))
        try Self.withContext(v2, url) { context in
            let item = try #require(try Self.fetch(context, "Item").first)
            #expect(try item.value(forKey: "name") as? String == "alpha")
            let owner = try #require(try item.value(forKey: "owner") as? ManagedObject)
            #expect(try owner.value(forKey: "title") as? String == "first")
            #expect(try item.value(forKey: "helper") == nil)
        }

        // Decoded directly: the positional format-1 row of the same model too.
        let codec = RowCodec(layout: layout, storeIdentifier: "S")
        let positional = Self.row(format: 1, code: itemCode, version: 3, values: ["alpha"], toOne: [nil, 7], toOneCode: ownerCode)
        let snapshot = try positional.withUnsafeBytes { try codec.decode($0, primaryKey: 1) }
        #expect(Array(snapshot.attributes) == [.string("alpha")])
        #expect(snapshot.toOne.count == 2 && snapshot.toOne[0] == nil && snapshot.toOne[1]?.primaryKey == 7)
        #expect(snapshot.version == 3)
        let toOne = try positional.withUnsafeBytes { try codec.decodeToOne($0) }
        #expect(toOne.count == 2 && toOne[0] == nil && toOne[1]?.primaryKey == 7)
        // A count that is neither every slot nor the persistent ones is damage.
        let damaged = Self.row(format: 2, code: itemCode, version: 1, values: ["alpha"], toOne: [nil, 7], toOneCode: ownerCode)
        #expect(throws: (any Error).self) { try damaged.withUnsafeBytes { try codec.decode($0, primaryKey: 1) } }
        let unknownFormat = Self.row(format: 3, code: itemCode, version: 1, values: ["alpha"], toOne: [7], toOneCode: ownerCode)
        #expect(throws: (any Error).self) { try unknownFormat.withUnsafeBytes { try codec.decode($0, primaryKey: 1) } }
    }
}
