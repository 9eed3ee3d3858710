import Foundation
import ObjectGraph
@testable import ObjectGraphBinaryFile
import Testing

/// Transient properties are not part of the model version hash, so a model that only adds,
/// removes or moves a transient attribute or relationship opens an existing binary store. Its
/// rows must not depend on where the transients are: a file holds only the persistent
/// attribute values and to-ones of each row (see Backends/BinaryFile/README.md).
@Suite("Binary store rows and transient properties")
struct BinaryFileTransientLayoutTests {
    typealias Support = BinaryFileTestSupport

    /// `Item` with the attributes `names` in this order; a name ending in `*` is transient.
    static func items(_ names: [String]) throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Item") { e in
                for name in names {
                    let transient = name.hasSuffix("*")
                    e.attribute(transient ? String(name.dropLast()) : name, .string, optional: true, transient: transient)
                }
            }
        }
    }

    /// `Owner` (a transient attribute before its title; with `watchers`, a transient to-many
    /// to `Item` before `items`) and `Item` (a name and the to-ones `toOnes` in this order:
    /// `owner`, persistent, with the inverse `items`; any other is a transient one-to-nil to
    /// `Owner`).
    static func owned(_ toOnes: [String], watchers: Bool = false) throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Owner") { e in
                e.attribute("scratch", .string, optional: true, transient: true)
                e.attribute("title", .string, optional: true)
                if watchers { e.toMany("watchers", "Item", transient: true) }
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
        let container = try Support.container(url, model: model, options: ["synchronous": "OFF"])
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

    /// Item name → its owner's title.
    static func owners(_ model: ManagedObjectModel, _ url: URL) throws -> [String: String?] {
        try withContext(model, url) { context in
            var result: [String: String?] = [:]
            for item in try fetch(context, "Item") {
                let owner = try item.value(forKey: "owner") as? ManagedObject
                result[try item.value(forKey: "name") as! String] = try owner?.value(forKey: "title") as? String
            }
            return result
        }
    }

    /// Owner title → the names of its items.
    static func members(_ model: ManagedObjectModel, _ url: URL) throws -> [String: [String]] {
        try withContext(model, url) { context in
            var result: [String: [String]] = [:]
            for owner in try fetch(context, "Owner") {
                let items = try #require(try owner.value(forKey: "items") as? Set<ManagedObject>)
                result[try owner.value(forKey: "title") as! String] = try items.map { try $0.value(forKey: "name") as! String }.sorted()
            }
            return result
        }
    }

    // MARK: Attributes

    @Test("a transient attribute moved before a stored one: the stored value is read, not the transient's nil")
    func movedTransientAttribute() throws {
        let url = try Support.temporaryStore()
        defer { Support.remove(url) }
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

    @Test("a transient attribute added to a stored entity: the store opens and its rows are read")
    func addedTransientAttribute() throws {
        let url = try Support.temporaryStore()
        defer { Support.remove(url) }
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
        let url = try Support.temporaryStore()
        defer { Support.remove(url) }
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
        #expect(try Self.names(v1, url) == ["beta", "delta"])
        #expect(try Self.names(v2, url) == ["beta", "delta"])
        try Self.withContext(v2, url) { context in
            let scratch = try Self.fetch(context, "Item").map { try $0.value(forKey: "scratch") as? String }
            #expect(scratch == [nil, nil], "transients are not stored")
        }
    }

    // MARK: Relationships

    @Test("a transient to-one moved before, added beside or removed from a stored one: the stored one is read, and updates and deletes follow it")
    func transientToOne() throws {
        let url = try Support.temporaryStore()
        defer { Support.remove(url) }
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
        for model in [v1, v2, v3, v4] {
            #expect(try Self.owners(model, url) == ["a": "first", "b": "first"])
        }
        try Self.withContext(v2, url) { context in
            let items = try Self.fetch(context, "Item")
            #expect(try items[0].value(forKey: "helper") == nil, "transient to-ones are not stored")
            let second = try #require(try Self.fetch(context, "Owner").last)
            try items[0].setValue(second, forKey: "owner")
            try context.save()
        }
        #expect(try Self.members(v4, url) == ["first": ["b"], "second": ["a"]])
        try Self.withContext(v4, url) { context in
            context.delete(try #require(try Self.fetch(context, "Item").last))
            try context.save()
        }
        #expect(try Self.members(v1, url) == ["first": [], "second": ["a"]])
        for model in [v1, v2, v3, v4] {
            #expect(try Self.owners(model, url) == ["a": "second"])
        }
    }

    @Test("a transient to-many added before a stored one: the store opens and the stored members are read")
    func transientToMany() throws {
        let url = try Support.temporaryStore()
        defer { Support.remove(url) }
        let v1 = try Self.owned(["owner"])
        let v2 = try Self.owned(["owner"], watchers: true)
        #expect(v1.versionHash == v2.versionHash)
        try Self.withContext(v1, url) { context in
            let owner = try context.insertObject(entityName: "Owner")
            try owner.setValue("first", forKey: "title")
            for name in ["a", "b"] {
                let item = try context.insertObject(entityName: "Item")
                try item.setValue(name, forKey: "name")
                try item.setValue(owner, forKey: "owner")
            }
            try context.save()
        }
        #expect(try Self.members(v2, url) == ["first": ["a", "b"]])
        try Self.withContext(v2, url) { context in
            let item = try context.insertObject(entityName: "Item")
            try item.setValue("c", forKey: "name")
            let owner: ManagedObject = try #require(try Self.fetch(context, "Owner").first)
            try item.setValue(owner, forKey: "owner")
            try context.save()
        }
        #expect(try Self.members(v1, url) == ["first": ["a", "b", "c"]])
        #expect(try Self.members(v2, url) == ["first": ["a", "b", "c"]])
    }

    // MARK: The file

    @Test("a file holds the persistent slots only: the same bytes whatever the model's transients")
    func fileIndependentOfTransients() throws {
        let url = try Support.temporaryStore()
        defer { Support.remove(url) }
        let v1 = try Self.owned(["before", "owner", "after"], watchers: true)
        let v2 = try Self.owned(["owner"])
        try Self.withContext(v1, url) { context in
            let owner = try context.insertObject(entityName: "Owner")
            try owner.setValue("first", forKey: "title")
            try owner.setValue("not stored", forKey: "scratch")
            let item = try context.insertObject(entityName: "Item")
            try item.setValue("a", forKey: "name")
            try item.setValue(owner, forKey: "owner")
            try item.setValue(owner, forKey: "after")
            try context.save()
        }
        let bytes = Array(try Data(contentsOf: url))
        #expect(!bytes.contains(Array("not stored".utf8)), "transient values are not written")
        // Read and written again by a model without the transients (and by the one with them):
        // the same bytes.
        for model in [v2, v1] {
            let contents = try BinaryFileStore.contents(ofFile: bytes, model: model)
            #expect(try BinaryFileEncoder(model: model).encode(contents).flatMap { $0 } == bytes)
        }
    }

    /// A store of `owned(["owner", "helper"], watchers: true)` written before rows held only
    /// the persistent slots (every slot, transient ones as nil): owners "first" and "second",
    /// items "a" and "b" owned by "first" (their transient helper "second" not stored) and "c".
    static let positionalFile = Data(base64Encoded: """
        iU9HQg0KGgoBAAAAAAAAAKcAAAAAAAAAJDg3MTVCRTg0LUZDQ0QtNDdFQi04RDc2LTE5MEY0Nzc5OTY2NxBhZDY4NGJlMjIyYjRj\
        NGYzAAIESXRlbQgFT3duZXIGAgRJdGVtBU93bmVyAAIAAQABAgADAgACBAFhAQABAgABAAIEAWIBAAECAAEAAgQBYwAAAQEBAgAC\
        AgIAAgAEBWZpcnN0AQACAAQGc2Vjb25kAQEFaXRlbXMBAgIAAAIAAAQ9jIw2
        """)!

    @Test("a file written before, with every slot by position, is still read by its model, and rewritten with the persistent slots when saved")
    func positionalFileStillRead() throws {
        let url = try Support.temporaryStore()
        defer { Support.remove(url) }
        let model = try Self.owned(["owner", "helper"], watchers: true)
        try Self.positionalFile.write(to: url)
        #expect(try Self.owners(model, url) == ["a": "first", "b": "first", "c": nil])
        #expect(try Self.members(model, url) == ["first": ["a", "b"], "second": []])
        // Its counts are every slot: a model with other transients cannot tell where they
        // were, and refuses it as before rather than read it by guess.
        let other = try Self.owned(["owner"])
        #expect(throws: StoreError.self) { try BinaryFileStore.contents(ofFile: Array(Self.positionalFile), model: other) }
        try Self.withContext(model, url) { context in
            let c = try #require(try Self.fetch(context, "Item").last)
            try c.setValue(try Self.fetch(context, "Owner").last, forKey: "owner")
            try context.save()
        }
        for model in [model, other, try Self.owned(["helper", "owner"])] {
            #expect(try Self.owners(model, url) == ["a": "first", "b": "first", "c": "second"])
            #expect(try Self.members(model, url) == ["first": ["a", "b"], "second": ["c"]])
        }
    }

    @Test("layout counts that are neither the persistent slots nor every slot are refused")
    func otherCountsRefused() throws {
        // Item holds 1 attribute and 2 to-ones in the file; a model with 2 transient to-ones
        // has 3 to-one slots, 1 persistent.
        let model = try Self.owned(["a", "owner", "b"], watchers: true)
        let error = try #require(throws: StoreError.self) { try BinaryFileStore.contents(ofFile: Array(Self.positionalFile), model: model) }
        #expect(error.code == .corrupt)
        #expect((error.underlying as? BinaryFileFormatError)?.problem == .malformed)
        #expect(error.message.contains("the model has 1, 3, 0 (1, 1, 0 of them persistent)"), "\(error.message)")
    }
}
