import Foundation
import ObjectGraph
import Testing

/// `assign(_:to:)`: choosing which of several stores holding an entity saves a new object.
@Suite("Several stores: assigning inserts to a store")
struct SeveralStoresAssignmentTests {
    typealias Kind = SeveralStoresTests.Kind

    /// A fresh directory, removed by `body`'s end.
    static func inDirectory(_ body: (URL) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("objectgraph-assign-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(directory)
    }

    /// The names of the authors and titles of the books the store of `configuration` holds
    /// alone, and each book's author's name.
    static func contents(_ kind: Kind, _ directory: URL, _ configuration: String) throws -> (authors: [String], books: [String: String?]) {
        let alone = try PersistentContainer(model: try SeveralStoresTests.model(), stores: [kind.store(directory, configuration)])
        defer { alone.close() }
        let context = alone.newBackgroundContext()
        return try context.performAndWait {
            let authors = try context.fetch(FetchRequest<ManagedObject>(entityName: "Author")).map { try $0.value(forKey: "name") as? String ?? "?" }
            var books: [String: String?] = [:]
            for book in try context.fetch(FetchRequest<ManagedObject>(entityName: "Book")) {
                let author = try book.value(forKey: "author") as? ManagedObject
                books[try book.value(forKey: "title") as? String ?? "?"] = try author.map { try $0.value(forKey: "name") as? String ?? "?" }
            }
            return (authors.sorted(), books)
        }
    }

    @Test("an object assigned to the second of two stores holding its entity is saved there, with its relationships, through the context and through a child context", arguments: Kind.allCases)
    func assignedInsertsLandInTheirStore(_ kind: Kind) throws {
        try Self.inDirectory { directory in
            let both = try PersistentContainer(model: try SeveralStoresTests.model(), stores: [kind.store(directory, "One"), kind.store(directory, "Two")])
            let second = both.coordinator.persistentStores[1]
            let context = both.newBackgroundContext()
            try context.performAndWait {
                try context.insertObject(entityName: "Author").setValue("First", forKey: "name")
                let author = try context.insertObject(entityName: "Author")
                try author.setValue("Second", forKey: "name")
                let book = try context.insertObject(entityName: "Book")
                try book.setValue("Assigned", forKey: "title")
                try book.setValue(author, forKey: "author")
                try context.assign(author, to: second)
                try context.assign(book, to: second)
                #expect(author.objectID.storeIdentifier == second.identifier && !author.objectID.isTemporary)
                #expect(try book.value(forKey: "author") as? ManagedObject === author, "the relationship follows the new IDs")
                try context.save()
            }
            let child = context.newChildContext()
            try child.performAndWait {
                let author = try child.insertObject(entityName: "Author")
                try author.setValue("Child", forKey: "name")
                try child.assign(author, to: second)
                try child.save()
            }
            try context.performAndWait { try context.save() }
            let names = try context.performAndWait {
                try context.fetch(FetchRequest<ManagedObject>(entityName: "Author")).map { try $0.value(forKey: "name") as? String ?? "?" }.sorted()
            }
            #expect(names == ["Child", "First", "Second"], "a fetch reads both stores")
            both.close()
            let one = try Self.contents(kind, directory, "One"), two = try Self.contents(kind, directory, "Two")
            #expect(one.authors == ["First"] && one.books.isEmpty)
            #expect(two.authors == ["Child", "Second"])
            #expect(two.books == ["Assigned": "Second"])
        }
    }

    @Test("assigning is refused, with a typed error and nothing changed, for a store that is not attached or lacks the entity, a saved object, an object of another context, and an object with another store's permanent ID")
    func refusedAssignments() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Author") { e in e.attribute("name", .string) }
            m.entity("Book") { e in e.attribute("title", .string) }
            m.configuration("Both", entities: ["Author", "Book"])
            m.configuration("Authors", entities: ["Author"])
        }
        try Self.inDirectory { directory in
            let container = try PersistentContainer(model: model, stores: [
                .sqlite(at: directory.appendingPathComponent("both.sqlite"), configuration: "Both"),
                .sqlite(at: directory.appendingPathComponent("authors.sqlite"), configuration: "Authors"),
            ])
            defer { container.close() }
            let other = try PersistentContainer(model: model, stores: [.sqlite(at: directory.appendingPathComponent("other.sqlite"))])
            defer { other.close() }
            let (both, authors) = (container.coordinator.persistentStores[0], container.coordinator.persistentStores[1])
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let book = try context.insertObject(entityName: "Book")
                try book.setValue("T", forKey: "title")
                let bookID = book.objectID
                var error = #expect(throws: ObjectGraphError.self) { try context.assign(book, to: authors) }
                #expect(error?.code == .noStore && error?.message.contains("does not hold entity Book") == true, "\(String(describing: error))")
                error = #expect(throws: ObjectGraphError.self) { try context.assign(book, to: other.coordinator.persistentStores[0]) }
                #expect(error?.code == .noStore && error?.message.contains("not attached") == true, "\(String(describing: error))")
                #expect(book.objectID == bookID && book.objectID.isTemporary, "a refused assignment changes nothing")

                let author = try context.insertObject(entityName: "Author")
                try author.setValue("A", forKey: "name")
                try context.obtainPermanentIDs(for: [author])
                try context.assign(author, to: both)  // the store its ID names: nothing to do
                error = #expect(throws: ObjectGraphError.self) { try context.assign(author, to: authors) }
                #expect(error?.code == .notAssignable && error?.message.contains("already has a permanent ID") == true, "\(String(describing: error))")
                try context.save()
                #expect(author.objectID.storeIdentifier == both.identifier)
                error = #expect(throws: ObjectGraphError.self) { try context.assign(author, to: both) }
                #expect(error?.code == .notAssignable && error?.message.contains("already saved") == true, "\(String(describing: error))")
            }
            let elsewhere = container.newBackgroundContext()
            let foreign = try elsewhere.performAndWait { try elsewhere.insertObject(entityName: "Author") }
            context.performAndWait {
                let error = #expect(throws: ObjectGraphError.self) { try context.assign(foreign, to: authors) }
                #expect(error?.code == .wrongContext, "\(String(describing: error))")
            }
        }
    }

    @Test("two stores holding a uniquely constrained entity, saved into at once from two threads, each save rechecking uniqueness in both stores inside its own write: every save lands and none waits on the other for good", arguments: Kind.allCases)
    func concurrentSavesIntoTwoStoresWithUniqueness(_ kind: Kind) throws {
        try Self.inDirectory { directory in
            let both = try PersistentContainer(model: try SeveralStoresTests.uniqueModel(), stores: [kind.store(directory, "One"), kind.store(directory, "Two")])
            let stores = both.coordinator.persistentStores
            let saves = 40
            let failures = Guarded<[String]>([])
            let finished = DispatchGroup()
            for (index, store) in stores.enumerated() {
                let context = both.newBackgroundContext()
                finished.enter()
                DispatchQueue.global().async {
                    defer { finished.leave() }
                    do {
                        for round in 0..<saves {
                            try context.performAndWait {
                                let item = try context.insertObject(entityName: "Item")
                                try item.setValue("\(index)-\(round)", forKey: "code")
                                try context.assign(item, to: store)
                                try context.save()
                            }
                        }
                    } catch {
                        failures.withLock { $0.append("store \(index): \(error)") }
                    }
                }
            }
            // A deadlock fails the test here instead of hanging the run (the stuck threads
            // are left behind, and the container with them).
            guard finished.wait(timeout: .now() + 120) == .success else {
                Issue.record("the saves did not finish within two minutes: a deadlock")
                return
            }
            #expect(failures.withLock { $0 } == [])
            let reader = both.newBackgroundContext()
            let perStore = try reader.performAndWait {
                try reader.fetch(FetchRequest<ManagedObject>(entityName: "Item")).reduce(into: [String: Int]()) { counts, item in
                    counts[item.objectID.storeIdentifier ?? "?", default: 0] += 1
                }
            }
            #expect(perStore == [stores[0].identifier: saves, stores[1].identifier: saves])
            both.close()
        }
    }
}
