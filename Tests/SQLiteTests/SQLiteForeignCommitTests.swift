import Foundation
import ObjectGraph
import ObjectGraphSQLite
import Testing

/// Rows another connection (another process, or another container on the same file) saved
/// are what a later fetch shows, though the coordinator had cached the rows before: LMDB,
/// without a row cache, always did; SQLite showed the cached row and failed the next save
/// with a conflict.
@Suite("SQLite commits of other connections")
struct SQLiteForeignCommitTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Student") { e in
                e.attribute("name", .string)
                e.attribute("age", .integer64)
            }
        }
    }

    /// The age `container` shows in a new context, read through a fetch of faults.
    static func age(in container: PersistentContainer) throws -> Int64? {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            let students = try context.fetch(FetchRequest<ManagedObject>(entityName: "Student"))
            return try students.first?.value(forKey: "age") as? Int64
        }
    }

    /// A new store holding one student of `age`, and a container on it.
    static func seeded(age: Int64) throws -> (file: URL, model: ManagedObjectModel, container: PersistentContainer) {
        let file = try SQLiteStoreTests.temporaryFile()
        let model = try Self.model()
        let container = try PersistentContainer(model: model, stores: [.sqlite(at: file)])
        let seeding = container.newBackgroundContext()
        try seeding.performAndWait {
            let student = try seeding.insertObject(entityName: "Student")
            try student.setValue("Ada", forKey: "name")
            try student.setValue(age, forKey: "age")
            try seeding.save()
        }
        return (file, model, container)
    }

    static func setAge(_ age: Int64, in container: PersistentContainer) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let student = try context.fetch(FetchRequest<ManagedObject>(entityName: "Student"))[0]
            try student.setValue(age, forKey: "age")
            try context.save()
        }
    }

    @Test("a fetch after another connection's save shows the saved row, and saving on it does not conflict")
    func fetchShowsAnotherConnectionsSave() throws {
        let (file, model, mine) = try Self.seeded(age: 37)
        defer { mine.close() }
        // Read once here: the row is now in this coordinator's cache.
        #expect(try Self.age(in: mine) == 37)

        let theirs = try PersistentContainer(model: model, stores: [.sqlite(at: file)])
        defer { theirs.close() }
        try Self.setAge(100, in: theirs)

        #expect(try Self.age(in: mine) == 100, "a new fetch shows the other connection's save")
        // Saving on what the fetch showed is no conflict.
        try Self.setAge(101, in: mine)
        #expect(try Self.age(in: theirs) == 101)
        // And this coordinator's own save is what its next fetch reads.
        try Self.setAge(102, in: mine)
        #expect(try Self.age(in: mine) == 102)
    }

    @Test("the store counts other connections' commits, not its own")
    func countsOnlyOtherConnectionsCommits() throws {
        let (file, model, mine) = try Self.seeded(age: 1)
        defer { mine.close() }
        let store = try #require(mine.coordinator.persistentStores.first)
        _ = try Self.age(in: mine)
        let start = store.foreignCommitCount()
        for age in 2...5 { try Self.setAge(Int64(age), in: mine) }
        _ = try Self.age(in: mine)
        #expect(store.foreignCommitCount() == start, "this store's own saves are not counted")

        let theirs = try PersistentContainer(model: model, stores: [.sqlite(at: file)])
        defer { theirs.close() }
        try Self.setAge(50, in: theirs)
        _ = try Self.age(in: mine)
        #expect(store.foreignCommitCount() > start, "another connection's save is counted once read")
    }
}
