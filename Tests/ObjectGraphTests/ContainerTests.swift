import Foundation
@testable import ObjectGraph
import ObjectGraphInMemory
import Synchronization
import Testing

/// An atomic store that reports the model hash it was given, whatever model opens it, and
/// records whether it was closed.
final class RecordingStore: AtomicStore, @unchecked Sendable {
    private let closedFlag = Mutex<Bool>(false)

    init(request: StoreOpenRequest, modelVersionHash: String) {
        let metadata = StoreMetadata(storeIdentifier: UUID().uuidString, modelVersionHash: modelVersionHash)
        super.init(request: request, contents: AtomicStoreContents(metadata: metadata), capabilities: [])
    }

    override func close() {
        closedFlag.withLock { $0 = true }
        super.close()
    }

    var wasClosed: Bool { closedFlag.withLock { $0 } }
}

/// Remembers the stores a description opened, so a test can look at a refused one.
final class OpenedStores: Sendable {
    private let stores = Mutex<[RecordingStore]>([])
    func append(_ store: RecordingStore) { stores.withLock { $0.append(store) } }
    var all: [RecordingStore] { stores.withLock { $0 } }
}

@Suite("Container, coordinator and stores")
struct ContainerTests {
    static func twoConfigurationModel() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Author") { e in
                e.attribute("name", .string)
                e.toMany("books", "Book", inverse: "author")
            }
            m.entity("Book") { e in
                e.attribute("title", .string)
                e.toOne("author", "Author", inverse: "books")
            }
            m.entity("Note") { e in e.attribute("text", .string) }
            m.configuration("Library", entities: ["Author", "Book"])
            m.configuration("Scratch", entities: ["Note"])
        }
    }

    /// An in-memory store that declares its row reads as cheap as the row cache's.
    static func cheapReads(configuration: String? = nil) -> StoreDescription {
        StoreDescription(type: "cheap", configuration: configuration) { request in
            AtomicStore(request: request, contents: .empty(for: request, identifier: UUID().uuidString), capabilities: [.cheapRowReads])
        }
    }

    @Test("the row cache is bypassed exactly while every attached store has cheap row reads")
    func rowCacheBypassFollowsTheAttachedStores() throws {
        let model = try Self.twoConfigurationModel()
        let container = try PersistentContainer(model: model, stores: [Self.cheapReads(configuration: "Library")])
        let cache = container.coordinator.rowCache
        #expect(cache.isBypassed)
        let context = container.newBackgroundContext()
        let id = try context.performAndWait {
            let author = try context.insertObject(entityName: "Author")
            try author.setValue("Ursula", forKey: "name")
            try context.save()
            return author.objectID
        }
        let reader = container.newBackgroundContext()
        let read = try reader.performAndWait {
            (try reader.existingObject(with: id).value(forKey: "name") as? String, reader.statistics.storeRoundTrips)
        }
        #expect(read.0 == "Ursula")
        #expect(read.1 == 1)
        #expect(cache.count == 0, "a bypassed cache keeps neither saved nor read rows")
        cache.store([RowCacheTests.row(1)])
        #expect(cache.count == 0 && cache.snapshot(for: RowCacheTests.row(1).objectID) == nil)

        // A store that gains from the cache turns it back on; detaching it bypasses it again.
        let scratch = try container.coordinator.addPersistentStore(.inMemory(configuration: "Scratch"))
        #expect(!cache.isBypassed)
        let again = container.newBackgroundContext()
        let name = try again.performAndWait { try again.existingObject(with: id).value(forKey: "name") as? String }
        #expect(name == "Ursula")
        #expect(cache.snapshot(for: id)?.attributes == [.string("Ursula")], "read rows are cached again")
        container.coordinator.removePersistentStore(scratch)
        #expect(cache.isBypassed)
        #expect(cache.count == 0)
    }

    @Test func entitiesAreRoutedByConfigurationAndOneSaveReachesBothStores() throws {
        let model = try Self.twoConfigurationModel()
        let container = try PersistentContainer(
            model: model, stores: [.inMemory(configuration: "Library"), .inMemory(configuration: "Scratch")])
        let stores = container.coordinator.persistentStores
        try #require(stores.count == 2)
        let library = try #require(stores[0] as? AtomicStore)
        let scratch = try #require(stores[1] as? AtomicStore)
        #expect(try library.metadata().modelVersionHash == model.versionHash(configuration: "Library"))
        #expect(try scratch.metadata().modelVersionHash == model.versionHash(configuration: "Scratch"))

        let context = container.newBackgroundContext()
        let ids: [String: ObjectID] = try context.performAndWait {
            let author = try context.insertObject(entityName: "Author")
            try author.setValue("Ursula", forKey: "name")
            let book = try context.insertObject(entityName: "Book")
            try book.setValue("The Dispossessed", forKey: "title")
            try book.setValue(author, forKey: "author")
            let note = try context.insertObject(entityName: "Note")
            try note.setValue("buy more books", forKey: "text")
            try context.save()
            return ["Author": author.objectID, "Book": book.objectID, "Note": note.objectID]
        }
        #expect(ids["Author"]?.storeIdentifier == library.identifier)
        #expect(ids["Book"]?.storeIdentifier == library.identifier)
        #expect(ids["Note"]?.storeIdentifier == scratch.identifier)

        let libraryRows = try library.currentContents().tables
        let scratchRows = try scratch.currentContents().tables
        #expect(libraryRows["Author"]?.count == 1)
        #expect(libraryRows["Book"]?.count == 1)
        #expect(libraryRows["Note"] == nil)
        #expect(scratchRows["Note"]?.count == 1)
        #expect(scratchRows["Author"] == nil && scratchRows["Book"] == nil)

        // A fresh context reads each entity from its own store.
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let notes = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Note"))
            #expect(try notes.map { try string($0, "text") } == ["buy more books"])
            let books = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Book"))
            let author = try #require(try books.first?.value(forKey: "author") as? ManagedObject)
            #expect(try string(author, "name") == "Ursula")
            #expect(author.objectID == ids["Author"])
        }
    }

    @Test func toManyMembersOfManySourcesComeBackInPlaceWithTwoStoresAttached() throws {
        // With two stores the coordinator groups the sources by store and puts each store's
        // member lists back at their sources' positions.
        let model = try Self.twoConfigurationModel()
        let container = try PersistentContainer(
            model: model, stores: [.inMemory(configuration: "Library"), .inMemory(configuration: "Scratch")])
        let writer = container.newBackgroundContext()
        let expected: [String: Set<String>] = ["A": [], "B": ["b1"], "C": ["c1", "c2"], "D": ["d1", "d2", "d3"]]
        try writer.performAndWait {
            for (name, titles) in expected {
                let author = try writer.insertObject(entityName: "Author")
                try author.setValue(name, forKey: "name")
                for title in titles {
                    let book = try writer.insertObject(entityName: "Book")
                    try book.setValue(title, forKey: "title")
                    try book.setValue(author, forKey: "author")
                }
            }
            let note = try writer.insertObject(entityName: "Note")
            try note.setValue("not a library's", forKey: "text")
            try writer.save()
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Author", sortKeys: [SortKey("name", ascending: false)])
            request.relationshipKeyPathsForPrefetching = ["books"]
            let authors = try reader.fetch(request)
            #expect(try authors.map { try string($0, "name") } == ["D", "C", "B", "A"])
            let roundTrips = reader.statistics.storeRoundTrips
            for author in authors {
                let books = try #require(try author.value(forKey: "books") as? Set<ManagedObject>)
                let name = try #require(try string(author, "name"))
                #expect(Set(try books.compactMap { try string($0, "title") }) == expected[name], "\(author.objectID)'s books")
            }
            #expect(reader.statistics.storeRoundTrips == roundTrips, "the prefetch loaded every author's books")

            // Sources in another order, with unsaved ones (no store, no members) between them.
            let books = try #require(authors[0].entity.relationship(named: "books"))
            let unsaved = try (0..<2).map { _ in try reader.insertObject(entityName: "Author").objectID }
            let sources = [unsaved[0], authors[1].objectID, authors[3].objectID, unsaved[1], authors[0].objectID, authors[2].objectID]
            let lists = try container.coordinator.relatedIDs(for: books, of: sources)
            #expect(lists.count == sources.count)
            let titles = try lists.map { ids in Set(try ids.compactMap { try string(reader.existingObject(with: $0), "title") }) }
            #expect(titles == [[], expected["C"], expected["A"], [], expected["D"], expected["B"]])
        }
    }

    @Test func anEntityWithoutAStoreCannotBeSaved() throws {
        let model = try Self.twoConfigurationModel()
        let container = try PersistentContainer(model: model, stores: [.inMemory(configuration: "Library")])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let note = try context.insertObject(entityName: "Note")
            try note.setValue("nowhere to go", forKey: "text")
            expectGraphError(.noStore, mentioning: ["Note"]) { try context.save() }
            expectGraphError(.noStore, mentioning: ["Note"]) {
                _ = try context.fetch(FetchRequest<ManagedObject>(entityName: "Note", predicate: key("text") == "x"))
            }
        }
    }

    @Test func storeWrittenByAnotherModelIsRefused() throws {
        let model = try Self.twoConfigurationModel()
        let opened = OpenedStores()
        let stale = StoreDescription(type: "recording") { request in
            let store = RecordingStore(request: request, modelVersionHash: "0123456789abcdef")
            opened.append(store)
            return store
        }
        let coordinator = PersistentStoreCoordinator(model: model)
        let error = #expect(throws: StoreError.self) { try coordinator.addPersistentStore(stale) }
        #expect(error?.code == .incompatibleModel)
        #expect(error?.message.contains("0123456789abcdef") == true)
        #expect(error?.message.contains(model.versionHash) == true)
        #expect(coordinator.persistentStores.isEmpty)
        #expect(opened.all.count == 1)
        #expect(opened.all.first?.wasClosed == true, "a refused store is closed")
        #expect(throws: StoreError.self) { _ = try PersistentContainer(model: model, stores: [stale]) }
    }

    @Test func storeOfAModelWithADifferentAttributeTypeIsRefused() throws {
        let old = try ManagedObjectModel { m in m.entity("Note") { e in e.attribute("rank", .integer16) } }
        let new = try ManagedObjectModel { m in m.entity("Note") { e in e.attribute("rank", .integer64) } }
        let written = StoreDescription(type: "recording") { request in
            RecordingStore(request: request, modelVersionHash: old.versionHash)
        }
        #expect(throws: Never.self) { try PersistentStoreCoordinator(model: old).addPersistentStore(written) }
        let error = #expect(throws: StoreError.self) { try PersistentStoreCoordinator(model: new).addPersistentStore(written) }
        #expect(error?.code == .incompatibleModel)
        #expect(error?.description.contains("incompatibleModel") == true)
    }

    @Test func storeForAnUnknownConfigurationIsRefused() throws {
        let coordinator = PersistentStoreCoordinator(model: try Self.twoConfigurationModel())
        let error = #expect(throws: ModelError.self) { try coordinator.addPersistentStore(.inMemory(configuration: "Attic")) }
        #expect(error?.code == .unknownConfiguration)
        #expect(error?.message.contains("Attic") == true)
        // The message lists the configurations the model has.
        #expect(error?.message.contains("'Library'") == true)
        #expect(coordinator.persistentStores.isEmpty)
    }

    @Test func removingAStoreDetachesAndClosesIt() throws {
        let model = try Self.twoConfigurationModel()
        let coordinator = PersistentStoreCoordinator(model: model)
        let store = try coordinator.addPersistentStore(.inMemory())
        #expect(coordinator.persistentStores.count == 1)
        #expect(try coordinator.metadata(for: store).storeIdentifier == store.identifier)
        coordinator.removePersistentStore(store)
        #expect(coordinator.persistentStores.isEmpty)
        let error = #expect(throws: StoreError.self) { _ = try store.metadata() }
        #expect(error?.code == .closed)
    }
}

@Suite("Row cache")
struct RowCacheTests {
    static func row(_ key: Int64, version: Int64 = 1, _ text: String = "") -> RowSnapshot {
        RowSnapshot(
            objectID: ObjectID(entityName: "Note", storeIdentifier: "S", primaryKey: key),
            version: version, attributes: [.string(text)], toOne: [])
    }

    @Test func storesAndReturnsRows() {
        let cache = RowCache(capacity: 10)
        cache.store([Self.row(1, "one"), Self.row(2, "two")])
        #expect(cache.count == 2)
        #expect(cache.snapshot(for: Self.row(1).objectID)?.attributes == [.string("one")])
        #expect(cache.snapshot(for: Self.row(3).objectID) == nil)
        cache.remove(Self.row(1).objectID)
        #expect(cache.snapshot(for: Self.row(1).objectID) == nil)
        #expect(cache.count == 1)
        cache.store([Self.row(3), Self.row(4)])
        cache.remove([Self.row(3).objectID, Self.row(4).objectID])
        #expect(cache.count == 1)
        cache.removeAll()
        #expect(cache.count == 0)
    }

    @Test func neverHoldsMoreThanItsCapacity() {
        let cache = RowCache(capacity: 3)
        #expect(cache.capacity == 3)
        cache.store((1...3).map { Self.row($0) })
        #expect(cache.count == 3)
        cache.store([Self.row(4)])
        #expect(cache.count <= 3)
        #expect(cache.snapshot(for: Self.row(4).objectID) != nil, "the newest row is kept")
        cache.store((10...100).map { Self.row($0) })
        #expect(cache.count <= 3)
        #expect(cache.count >= 1)
        #expect(cache.snapshot(for: Self.row(100).objectID) != nil)
    }

    @Test func newerVersionsReplaceOlderOnesButNotTheOtherWayRound() {
        let cache = RowCache(capacity: 10)
        cache.store([Self.row(1, version: 2, "v2")])
        cache.store([Self.row(1, version: 1, "v1")])
        #expect(cache.snapshot(for: Self.row(1).objectID)?.version == 2)
        cache.store([Self.row(1, version: 3, "v3")])
        #expect(cache.snapshot(for: Self.row(1).objectID)?.attributes == [.string("v3")])
        #expect(cache.count == 1)
    }

    @Test func aStaleRowDoesNotReplaceANewerOneWhenTheCacheIsFull() {
        let cache = RowCache(capacity: 2)
        cache.store([Self.row(1, version: 5, "new"), Self.row(2)])
        #expect(cache.count == 2)
        cache.store([Self.row(1, version: 4, "stale")])
        #expect(cache.snapshot(for: Self.row(1).objectID)?.version == 5)
        #expect(cache.snapshot(for: Self.row(1).objectID)?.attributes == [.string("new")])
        // Replacing a cached row with a newer version is not growth: nothing else is dropped.
        cache.store([Self.row(1, version: 6, "newer")])
        #expect(cache.snapshot(for: Self.row(1).objectID)?.version == 6)
        #expect(cache.snapshot(for: Self.row(2).objectID) != nil)
    }

    @Test("batches kept for later indexing give the answers eager indexing gives")
    func deferredBatchesAnswerAsIfIndexed() {
        let cache = RowCache(capacity: 1_000)
        cache.store((1...100).map { Self.row($0, version: 2, "v2") })
        // An older read of row 5 in a later batch must not replace the newer row, a newer
        // single row must, and a newer row in a later batch replaces an older one.
        cache.store((1...20).map { Self.row($0, version: $0 == 5 ? 1 : 3, $0 == 5 ? "v1" : "v3") })
        cache.store([Self.row(7, version: 9, "v9")])
        #expect(cache.snapshot(for: Self.row(5).objectID)?.attributes == [.string("v2")])
        #expect(cache.snapshot(for: Self.row(6).objectID)?.attributes == [.string("v3")])
        #expect(cache.snapshot(for: Self.row(7).objectID)?.attributes == [.string("v9")])
        #expect(cache.snapshot(for: Self.row(50).objectID)?.attributes == [.string("v2")])
        #expect(cache.count == 100)

        // Removal reaches rows of a batch not indexed yet, and a read from before a removal
        // is not cached, whether its batch is large or small.
        cache.store((101...200).map { Self.row($0) })
        let mark = cache.readMark
        cache.remove(Self.row(150).objectID)
        #expect(cache.snapshot(for: Self.row(150).objectID) == nil)
        cache.store((201...300).map { Self.row($0) }, readSince: mark)
        cache.store([Self.row(301)], readSince: mark)
        #expect(cache.snapshot(for: Self.row(250).objectID) == nil && cache.snapshot(for: Self.row(301).objectID) == nil)
        cache.store((201...300).map { Self.row($0) }, readSince: cache.readMark)
        #expect(cache.snapshot(for: Self.row(250).objectID) != nil)
        #expect(cache.count == 299)
        // Removing nothing (a save without deletions) still turns away reads from before it.
        let before = cache.readMark
        cache.remove([ObjectID]())
        #expect(cache.readMark != before)
        cache.store((301...340).map { Self.row($0) }, readSince: before)
        #expect(cache.snapshot(for: Self.row(320).objectID) == nil)
        // A removal indexes the pending batches first: a newer row in one replaces the table's.
        cache.store((1...40).map { Self.row($0, version: 8, "v8") })
        cache.remove([Self.row(300).objectID])
        #expect(cache.snapshot(for: Self.row(30).objectID)?.attributes == [.string("v8")])
        cache.removeAll()
        cache.store((1...50).map { Self.row($0) })
        cache.removeAll()
        #expect(cache.count == 0 && cache.snapshot(for: Self.row(1).objectID) == nil)

        // A lookup of another entity's row answers without indexing; one of the batch's does.
        let tag = ObjectID(entityName: "Tag", storeIdentifier: "S", primaryKey: 1)
        cache.store([RowSnapshot(objectID: tag, version: 1, attributes: [.string("t")], toOne: [])])
        cache.store((1...40).map { Self.row($0, version: 4, "v4") })
        #expect(cache.snapshot(for: tag)?.attributes == [.string("t")])
        cache.store((1...40).map { Self.row($0, version: 3, "v3") })
        #expect(cache.snapshot(for: Self.row(40).objectID)?.attributes == [.string("v4")], "batches indexed in the order they came")
        #expect(cache.count == 41)
    }

    @Test("batches kept for later never take the cache past its capacity")
    func deferredBatchesStayWithinCapacity() {
        let cache = RowCache(capacity: 100)
        for start in stride(from: 1, through: 1_000, by: 40) {
            cache.store((Int64(start)..<Int64(start + 40)).map { Self.row($0) })
            #expect(cache.count <= 100)
        }
        #expect(cache.snapshot(for: Self.row(1_000).objectID) != nil, "the newest row is kept")
    }

    @Test func coordinatorUsesItsCacheAcrossContexts() throws {
        let model = try ManagedObjectModel { m in m.entity("Note") { e in e.attribute("text", .string) } }
        let coordinator = PersistentStoreCoordinator(model: model, rowCacheCapacity: 50)
        #expect(coordinator.rowCache.capacity == 50)
        try coordinator.addPersistentStore(.inMemory())
        let writer = ManagedObjectContext(coordinator: coordinator)
        let id: ObjectID = try writer.performAndWait {
            let note = try writer.insertObject(entityName: "Note")
            try note.setValue("cached", forKey: "text")
            try writer.save()
            return note.objectID
        }
        #expect(coordinator.rowCache.snapshot(for: id)?.attributes == [.string("cached")])
        let reader = ManagedObjectContext(coordinator: coordinator)
        try reader.performAndWait {
            let note = reader.object(with: id)
            #expect(note.isFault)
            let text = try string(note, "text")
            #expect(text == "cached")
            #expect(reader.statistics.rowCacheHits == 1)
            #expect(reader.statistics.storeRoundTrips == 0)
        }
    }
}

@Suite("Container setup errors")
struct ContainerSetupTests {
    /// The second store cannot open: the first, opened already, was left open (and its file
    /// locked) with no container to close it.
    @Test func aStoreThatCannotOpenClosesTheStoresOpenedBeforeIt() throws {
        let model = try ContainerTests.twoConfigurationModel()
        let opened = OpenedStores()
        let first = StoreDescription(type: "recording", configuration: "Library") { request in
            let store = RecordingStore(request: request, modelVersionHash: request.modelVersionHash)
            opened.append(store)
            return store
        }
        let error = #expect(throws: ModelError.self) {
            _ = try PersistentContainer(model: model, stores: [first, .inMemory(configuration: "Attic")])
        }
        #expect(error?.message.contains("Attic") == true)
        #expect(opened.all.count == 1)
        #expect(opened.all.first?.wasClosed == true, "the store opened first is closed again")
    }
}
