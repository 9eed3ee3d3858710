import Foundation
import ObjectGraph

/// The model and helpers of the upsert scenarios (uniqueness conflicts resolved by the merge
/// policy, ValidationScenarios+Upsert and +UpsertGraph): an author unique by handle, with every
/// kind of relationship pointing at it, and a sub-entity.
enum UpsertStore {
    /// Opens a store of the backend under test in a folder of its own, with the upsert model
    /// (or `model`).
    static func open(_ env: ScenarioEnvironment, model: ManagedObjectModel? = nil, _ body: (PersistentContainer) throws -> Void) throws {
        let folder = env.directory.appendingPathComponent("upsert-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let container = try PersistentContainer(model: try model ?? Self.model(), stores: [env.backend.makeStore(folder)])
        defer { container.close() }
        try body(container)
    }

    /// Author (handle unique) ← Book.author (one-to-many), ↔ Profile (one-to-one), ↔ Tag
    /// (many-to-many), ← Note.about (one-to-nil), ← Shelf.favourites (many-to-nil); Editor is
    /// a sub-entity of Author.
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Author") { e in
                e.attribute("handle", .string)
                e.attribute("name", .string, optional: true)
                e.attribute("bio", .string, optional: true)
                e.attribute("rank", .integer32, default: 0)
                e.unique("handle")
                e.toMany("books", "Book", inverse: "author")
                e.toOne("profile", "Profile", inverse: "author")
                e.toMany("tags", "Tag", inverse: "authors")
            }
            m.entity("Editor", parent: "Author") { e in e.attribute("desk", .string, optional: true) }
            m.entity("Book") { e in
                e.attribute("title", .string)
                e.toOne("author", "Author", inverse: "books")
            }
            m.entity("Profile") { e in
                e.attribute("motto", .string)
                e.toOne("author", "Author", inverse: "profile")
            }
            m.entity("Tag") { e in
                e.attribute("label", .string)
                e.toMany("authors", "Author", inverse: "tags")
            }
            m.entity("Note") { e in
                e.attribute("text", .string)
                e.toOne("about", "Author")
            }
            m.entity("Shelf") { e in
                e.attribute("name", .string)
                e.toMany("favourites", "Author")
            }
        }
    }

    /// Inserts an object of `entity` with `values`.
    @discardableResult
    static func insert(_ context: ManagedObjectContext, _ entity: String, _ values: [String: Any?]) throws -> ManagedObject {
        let object = try context.insertObject(entityName: entity)
        for (key, value) in values { try object.setValue(value, forKey: key) }
        return object
    }

    /// Every object of `entity` matching `format`.
    static func fetch(_ context: ManagedObjectContext, _ entity: String, _ format: String = "TRUEPREDICATE") throws -> [ManagedObject] {
        try context.fetch(FetchRequest<ManagedObject>(entityName: entity, predicate: try FetchPredicate(format: format)))
    }

    /// The one object of `entity` matching `format` (a failure when there is not exactly one).
    static func one(_ context: ManagedObjectContext, _ entity: String, _ format: String) throws -> ManagedObject {
        let found = try fetch(context, entity, format)
        try checkEqual(found.count, 1, "\(entity) objects matching \(format)")
        return found[0]
    }

    /// A string attribute's value.
    static func text(_ object: ManagedObject?, _ key: String) throws -> String? {
        try object?.value(forKey: key) as? String
    }

    /// The values of `key` of a to-many's members, sorted.
    static func members(_ object: ManagedObject, _ relationship: String, _ key: String) throws -> [String] {
        let members = try object.value(forKey: relationship) as? Set<ManagedObject> ?? []
        return try members.map { try text($0, key) ?? "-" }.sorted()
    }

    /// Saves `context` and returns the save's ``ContextDidSave``.
    static func save(_ context: ManagedObjectContext) throws -> ContextDidSave? {
        let saved = SharedValue<ContextDidSave?>(nil)
        let observer = NotificationCenter.default.addObserver(forName: .objectGraphContextDidSave, object: context, queue: nil) { note in
            saved.set(note.userInfo?[ContextDidSave.key] as? ContextDidSave)
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try context.save()
        return saved.get()
    }

    /// A new background context of `container` with `policy`.
    static func context(_ container: PersistentContainer, _ policy: MergePolicy) -> ManagedObjectContext {
        let context = container.newBackgroundContext()
        context.mergePolicy = policy
        return context
    }

    /// Inserts an author with `values` in a new context with `policy`, and saves.
    static func upsert(_ container: PersistentContainer, _ policy: MergePolicy, _ values: [String: Any?]) throws {
        let context = context(container, policy)
        try context.performAndWait {
            try insert(context, "Author", values)
            try context.save()
        }
    }

    /// Runs `body` on the stored author "ann", read in a new context.
    static func readAnn(_ container: PersistentContainer, _ body: (ManagedObject) throws -> Void) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait { try body(try one(context, "Author", "handle == 'ann'")) }
    }

    /// Stores one author "ann" (name Ann, bio "old bio", rank 3) and returns its ID.
    @discardableResult
    static func storeAnn(_ container: PersistentContainer, bio: String? = "old bio") throws -> ObjectID {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            let ann = try insert(context, "Author", ["handle": "ann", "name": "Ann", "bio": bio, "rank": 3])
            try context.save()
            return ann.objectID
        }
    }
}
