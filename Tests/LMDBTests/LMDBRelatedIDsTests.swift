import Foundation
import ObjectGraph
import ObjectGraphLMDB
import Testing

/// `relatedIDs(for:of:)` reads many sources' members in one read transaction, through one
/// cursor that moves from source to source (an ordered relationship's duplicates in position
/// order) — and answers an empty list for any source that is not this store's (a temporary ID, another store's, an entity the store does not hold).
@Suite("LMDB related IDs")
struct LMDBRelatedIDsTests {
    @Test("many sources at once: each gets its own members, in order for an ordered relationship, and none for a source not of this store")
    func manySources() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Shelf") { e in
                e.attribute("name", .string)
                e.toMany("books", "Book", inverse: "shelves")
                e.toMany("queue", "Book", inverse: "queuedOn", ordered: true)
            }
            m.entity("Book") { e in
                e.attribute("n", .integer64)
                e.toMany("shelves", "Shelf", inverse: "books")
                e.toMany("queuedOn", "Shelf", inverse: "queue")
            }
        }
        let container = try PersistentContainer(model: model, stores: [.lmdb(at: try LMDBFixture.temporaryFile())])
        defer { container.close() }
        let context = container.newBackgroundContext()
        let (shelves, books) = try context.performAndWait { () -> ([ObjectID], [ObjectID]) in
            let books = try (0..<12).map { n -> ManagedObject in
                let book = try context.insertObject(entityName: "Book")
                try book.setValue(Int64(n), forKey: "n")
                return book
            }
            var shelves: [ManagedObject] = []
            for index in 0..<5 {
                let shelf = try context.insertObject(entityName: "Shelf")
                try shelf.setValue("shelf\(index)", forKey: "name")
                // Shelf 0 holds nothing; shelf k the books whose number is a multiple of k,
                // and queues them in reverse.
                let chosen = index == 0 ? [] : books.enumerated().filter { $0.offset % index == 0 }.map(\.element)
                for book in chosen { try shelf.add(book, to: "books") }
                for book in chosen.reversed() { try shelf.add(book, to: "queue") }
                shelves.append(shelf)
            }
            try context.save()
            return (shelves.map(\.objectID), books.map(\.objectID))
        }
        let store = try #require(container.coordinator.persistentStores.first)
        let shelf = try #require(model.entity(named: "Shelf"))
        let booksRelationship = try #require(shelf.relationship(named: "books"))
        let queue = try #require(shelf.relationship(named: "queue"))
        let temporary = try context.performAndWait { try context.insertObject(entityName: "Shelf").objectID }
        let foreign = ObjectID(entityName: "Shelf", storeIdentifier: "another-store", primaryKey: shelves[1].primaryKey!)
        let sources = shelves + [temporary, foreign, books[0]]
        let members = try store.relatedIDs(for: booksRelationship, of: sources)
        let ordered = try store.relatedIDs(for: queue, of: sources)
        #expect(members.count == sources.count && ordered.count == sources.count)
        for (index, id) in shelves.enumerated() {
            let expected = index == 0 ? [] : books.enumerated().filter { $0.offset % index == 0 }.map(\.element)
            #expect(Set(members[index]) == Set(expected) && members[index].count == expected.count, "shelf\(index)'s books")
            #expect(ordered[index] == Array(expected.reversed()), "shelf\(index)'s queue, in order (\(id))")
        }
        for (index, id) in [temporary, foreign, books[0]].enumerated() {
            #expect(members[shelves.count + index] == [], "\(id) has no members here")
            #expect(ordered[shelves.count + index] == [], "\(id) has no queue here")
        }
    }
}
