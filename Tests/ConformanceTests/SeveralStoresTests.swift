import Foundation
import ObjectGraph
import ObjectGraphBinaryFile
import ObjectGraphLMDB
import ObjectGraphSQLite
import Testing

/// Coordinators with several persistent stores of the built-in kinds.
@Suite("Several stores on one coordinator")
struct SeveralStoresTests {
    /// Author and Book held by two configurations: two stores of the same entities.
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Author") { e in
                e.attribute("name", .string)
                e.toMany("books", "Book", inverse: "author")
            }
            m.entity("Book") { e in
                e.attribute("title", .string)
                e.toOne("author", "Author", inverse: "books")
            }
            m.configuration("One", entities: ["Author", "Book"])
            m.configuration("Two", entities: ["Author", "Book"])
        }
    }

    enum Kind: String, CaseIterable, Sendable {
        case sqlite, lmdb, binary

        func store(_ directory: URL, _ configuration: String) -> StoreDescription {
            let url = directory.appendingPathComponent("\(configuration).\(rawValue)")
            switch self {
            case .sqlite: return .sqlite(at: url, configuration: configuration)
            case .lmdb: return .lmdb(at: url, configuration: configuration)
            case .binary: return .binaryFile(at: url, configuration: configuration)
            }
        }
    }

    static func bookTitled(_ title: String, in context: ManagedObjectContext) throws -> ManagedObject? {
        var request = FetchRequest<ManagedObject>(entityName: "Book")
        request.predicate = try FetchPredicate(format: "title == %@", argumentArray: [title])
        return try context.fetch(request).first
    }

    /// Core Data refuses a relationship between objects of different stores at save. A store
    /// keeps a reference as its own key: SQLite and LMDB read such a book's author back as the
    /// author with the same key in the book's store (another object), and no inverse lists it.
    @Test(arguments: Kind.allCases)
    func aRelationshipBetweenObjectsOfDifferentStoresIsRefusedAtSave(_ kind: Kind) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("objectgraph-stores-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Store Two alone first, so it holds an author and a book (each with key 1).
        let alone = try PersistentContainer(model: try Self.model(), stores: [kind.store(directory, "Two")])
        let setup = alone.newBackgroundContext()
        try setup.performAndWait {
            try setup.insertObject(entityName: "Author").setValue("Other", forKey: "name")
            try setup.insertObject(entityName: "Book").setValue("Dune", forKey: "title")
            try setup.save()
        }
        alone.close()

        let both = try PersistentContainer(model: try Self.model(), stores: [kind.store(directory, "One"), kind.store(directory, "Two")])
        let context = both.newBackgroundContext()
        try context.performAndWait {
            let author = try context.insertObject(entityName: "Author")  // goes to store One
            try author.setValue("Frank", forKey: "name")
            let book = try #require(try Self.bookTitled("Dune", in: context))
            try book.setValue(author, forKey: "author")
            let error = #expect(throws: ObjectGraphError.self) { try context.save() }
            #expect(error?.code == .crossStoreRelationship)
            #expect(author.isInserted, "the context keeps its changes")
        }
        both.close()

        let reopened = try PersistentContainer(model: try Self.model(), stores: [kind.store(directory, "One"), kind.store(directory, "Two")])
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait {
            let book = try #require(try Self.bookTitled("Dune", in: reader))
            #expect(try book.value(forKey: "author") == nil, "nothing of the refused save was stored")
            #expect(try reader.count(for: FetchRequest<ManagedObject>(entityName: "Author")) == 1)
        }
        reopened.close()
    }

    /// Item, unique by code, held by two configurations.
    static func uniqueModel() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Item") { e in
                e.attribute("code", .string)
                e.unique("code")
            }
            m.configuration("One", entities: ["Item"])
            m.configuration("Two", entities: ["Item"])
        }
    }

    /// One save deletes the item holding a unique code in one store and inserts a new item
    /// with that code in the other. The context judges the deleted row by its new state; the
    /// recheck inside the inserting store's write judged it as stored when that store's part
    /// was sent first (stores are sent in identifier order), refusing a valid save.
    @Test(arguments: Kind.allCases)
    func aUniqueValueMovesToAnotherStoreInOneSave(_ kind: Kind) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("objectgraph-stores-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // (Both configurations hold the same entities, so a store file opens as either.)
        var identifiers: [String: String] = [:]
        for configuration in ["One", "Two"] {
            let alone = try PersistentContainer(model: try Self.uniqueModel(), stores: [kind.store(directory, configuration)])
            identifiers[configuration] = alone.coordinator.persistentStores[0].identifier
            alone.close()
        }
        // The store sent first receives the insert (new objects go to the first store added);
        // the other holds the stored item.
        let (first, second) = identifiers["One"]! < identifiers["Two"]! ? ("One", "Two") : ("Two", "One")
        let alone = try PersistentContainer(model: try Self.uniqueModel(), stores: [kind.store(directory, second)])
        let setup = alone.newBackgroundContext()
        try setup.performAndWait {
            try setup.insertObject(entityName: "Item").setValue("X", forKey: "code")
            try setup.save()
        }
        alone.close()

        let both = try PersistentContainer(model: try Self.uniqueModel(), stores: [kind.store(directory, first), kind.store(directory, second)])
        let context = both.newBackgroundContext()
        try context.performAndWait {
            let stored = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")).first)
            context.delete(stored)
            let replacement = try context.insertObject(entityName: "Item")
            try replacement.setValue("X", forKey: "code")
            try context.save()
            #expect(replacement.objectID.storeIdentifier == identifiers[first])
        }
        let reader = both.newBackgroundContext()
        let codes = try reader.performAndWait {
            try reader.fetch(FetchRequest<ManagedObject>(entityName: "Item")).map { try $0.value(forKey: "code") as? String }
        }
        #expect(codes == ["X"])
        both.close()
    }
}
