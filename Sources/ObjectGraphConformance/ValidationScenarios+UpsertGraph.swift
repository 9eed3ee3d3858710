import Foundation
import ObjectGraph

/// Upserts and the object graph: every relationship that named the merged-away object names
/// the surviving row afterwards, inverses paired, nothing lost; and saves racing to insert one
/// handle under objectTrumps end in one row.
extension ValidationScenarios {
    static let upsertGraph: [ConformanceScenario] = [
        ConformanceScenario("validation.uniqueness.upsert.relationshipsFollowTheSurvivor") { env in
            try UpsertStore.open(env) { container in
                let seed = container.newBackgroundContext()
                try seed.performAndWait {
                    let ann = try UpsertStore.insert(seed, "Author", ["handle": "ann", "name": "Ann"])
                    try UpsertStore.insert(seed, "Book", ["title": "old book", "author": ann])
                    try UpsertStore.insert(seed, "Profile", ["motto": "old motto", "author": ann])
                    let tag = try UpsertStore.insert(seed, "Tag", ["label": "old tag"])
                    try ann.add(tag, to: "tags")
                    let shelf = try UpsertStore.insert(seed, "Shelf", ["name": "old shelf"])
                    try shelf.add(ann, to: "favourites")
                    try seed.save()
                }
                let context = UpsertStore.context(container, .objectTrumps)
                try context.performAndWait {
                    let oldTag = try UpsertStore.one(context, "Tag", "label == 'old tag'")
                    let oldProfile = try UpsertStore.one(context, "Profile", "motto == 'old motto'")
                    let new = try UpsertStore.insert(context, "Author", ["handle": "ann"])
                    let book = try UpsertStore.insert(context, "Book", ["title": "new book", "author": new])
                    let profile = try UpsertStore.insert(context, "Profile", ["motto": "new motto", "author": new])
                    let newTag = try UpsertStore.insert(context, "Tag", ["label": "new tag"])
                    try new.add(newTag, to: "tags")
                    try new.add(oldTag, to: "tags")
                    let note = try UpsertStore.insert(context, "Note", ["text": "about ann", "about": new])
                    let shelf = try UpsertStore.insert(context, "Shelf", ["name": "new shelf"])
                    try shelf.add(new, to: "favourites")
                    try context.save()
                    // The saving context's objects are consistent at once, not only the store.
                    let ann = try UpsertStore.one(context, "Author", "handle == 'ann'")
                    try check((try book.value(forKey: "author") as? ManagedObject) === ann, "the new book names the survivor")
                    try check((try note.value(forKey: "about") as? ManagedObject) === ann, "the note (one-to-nil) names the survivor")
                    try check((try ann.value(forKey: "profile") as? ManagedObject) === profile, "objectTrumps: the new profile")
                    try check((try oldProfile.value(forKey: "author") as? ManagedObject) == nil, "the old profile let go (one-to-one)")
                    try checkEqual(try UpsertStore.members(newTag, "authors", "handle"), ["ann"], "the new tag's inverse")
                    try checkEqual(try UpsertStore.members(shelf, "favourites", "handle"), ["ann"], "the new shelf (many-to-nil)")
                }
                let fresh = container.newBackgroundContext()
                try fresh.performAndWait {
                    try checkEqual(try UpsertStore.fetch(fresh, "Author").count, 1, "authors stored")
                    let ann = try UpsertStore.one(fresh, "Author", "handle == 'ann'")
                    try checkEqual(try UpsertStore.members(ann, "books", "title"), ["new book", "old book"], "books (one-to-many), both kept")
                    try checkEqual(try UpsertStore.text(ann.value(forKey: "profile") as? ManagedObject, "motto"), "new motto", "profile (one-to-one)")
                    let oldProfile = try UpsertStore.one(fresh, "Profile", "motto == 'old motto'")
                    try check(try oldProfile.value(forKey: "author") == nil, "the old profile names no author")
                    try checkEqual(try UpsertStore.members(ann, "tags", "label"), ["new tag", "old tag"], "tags (many-to-many), unioned")
                    for tag in try UpsertStore.fetch(fresh, "Tag") {
                        let label = try UpsertStore.text(tag, "label") ?? "?"
                        try checkEqual(try UpsertStore.members(tag, "authors", "handle"), ["ann"], "\(label) lists ann once")
                    }
                    let note = try UpsertStore.one(fresh, "Note", "text == 'about ann'")
                    try checkEqual((try note.value(forKey: "about") as? ManagedObject)?.objectID, ann.objectID, "the note (one-to-nil)")
                    for shelf in try UpsertStore.fetch(fresh, "Shelf") {
                        let name = try UpsertStore.text(shelf, "name") ?? "?"
                        try checkEqual(try UpsertStore.members(shelf, "favourites", "handle"), ["ann"], "\(name) (many-to-nil)")
                    }
                }
            }
        },
        ConformanceScenario("validation.uniqueness.upsert.storedRowChangedElsewhere") { env in
            // The stored row this context read was changed by another save before the upsert:
            // the merge starts from the row as stored now (objectTrumps keeps the other save's
            // value for a property the new object left alone).
            try UpsertStore.open(env) { container in
                try UpsertStore.storeAnn(container)
                let context = UpsertStore.context(container, .objectTrumps)
                // Kept registered, with the values read here, until the upsert.
                context.retainsRegisteredObjects = true
                try context.performAndWait {
                    let read = try UpsertStore.one(context, "Author", "handle == 'ann'")
                    try checkEqual(try UpsertStore.text(read, "bio"), "old bio", "read before the other save")
                }
                let other = container.newBackgroundContext()
                try other.performAndWait {
                    try UpsertStore.one(other, "Author", "handle == 'ann'").setValue("their bio", forKey: "bio")
                    try other.save()
                }
                try context.performAndWait {
                    try UpsertStore.insert(context, "Author", ["handle": "ann", "name": "Mine"])
                    try context.save()
                }
                try UpsertStore.readAnn(container) { ann in
                    try checkEqual(try UpsertStore.text(ann, "name"), "Mine", "the new object's name")
                    try checkEqual(try UpsertStore.text(ann, "bio"), "their bio", "the other save's bio")
                }
            }
        },
        ConformanceScenario("validation.uniqueness.upsert.childContext") { env in
            // A child's save lands in its parent unchecked (as in Core Data); the parent, the
            // root, merges the child's authors under its own policy when it saves: into a stored
            // row, or into an object it inserted and has not saved yet. One row each. (The
            // child's policy plays no part: see ValidationScenarios+UpsertNested.)
            try UpsertStore.open(env) { container in
                try UpsertStore.storeAnn(container)
                let parent = UpsertStore.context(container, .objectTrumps)
                try parent.performAndWait {
                    try UpsertStore.insert(parent, "Author", ["handle": "bob", "name": "Bob"])
                    let child = parent.newChildContext()
                    child.mergePolicy = .objectTrumps
                    try child.performAndWait {
                        try UpsertStore.insert(child, "Author", ["handle": "ann", "name": "Child Ann"])
                        try UpsertStore.insert(child, "Author", ["handle": "bob", "bio": "child bio"])
                        try child.save()
                    }
                    try parent.save()
                }
                let fresh = container.newBackgroundContext()
                try fresh.performAndWait {
                    try checkEqual(try UpsertStore.fetch(fresh, "Author").count, 2, "authors stored")
                    let ann = try UpsertStore.one(fresh, "Author", "handle == 'ann'")
                    try checkEqual(try UpsertStore.text(ann, "name"), "Child Ann", "ann's name from the child")
                    let bob = try UpsertStore.one(fresh, "Author", "handle == 'bob'")
                    try checkEqual(try UpsertStore.text(bob, "name"), "Bob", "bob's name from the parent")
                    try checkEqual(try UpsertStore.text(bob, "bio"), "child bio", "bob's bio from the child")
                }
            }
        },
        ConformanceScenario("validation.uniqueness.upsert.racingSavesEndInOneRow") { env in
            try UpsertStore.open(env) { container in
                try racingUpserts { container.newBackgroundContext(name: "upsert worker \($0)") } verify: { container.newBackgroundContext() }
            }
        },
        ConformanceScenario("validation.uniqueness.upsert.racingSavesThroughTwoCoordinators", requires: [.multiProcess]) { env in
            // The other coordinator's row cache and lock are not this one's: the store's write
            // transaction is what the re-check and the retried merge rely on.
            let folder = env.directory.appendingPathComponent("upsert-race-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let model = try UpsertStore.model()
            let one = try PersistentContainer(model: model, stores: [env.backend.makeStore(folder)])
            defer { one.close() }
            let two = try PersistentContainer(model: model, stores: [env.backend.makeStore(folder)])
            defer { two.close() }
            try racingUpserts { ($0 == 0 ? one : two).newBackgroundContext(name: "upsert worker \($0)") } verify: { one.newBackgroundContext() }
        },
    ]

    /// Two contexts (`context(i)`) under objectTrumps insert an author with one handle and
    /// different names, released together right before saving, for several handles: both
    /// saves succeed, and each handle is stored once, with one of the two names.
    static func racingUpserts(writers: Int = 2, _ context: (Int) -> ManagedObjectContext, verify: () -> ManagedObjectContext) throws {
        let rounds = 8
        let workers = (0..<writers).map(context)
        for worker in workers { worker.mergePolicy = .objectTrumps }
        for round in 0..<rounds {
            let ready = DispatchSemaphore(value: 0)
            let go = DispatchSemaphore(value: 0)
            let done = DispatchGroup()
            let outcomes = SharedValue<[String]>([])
            for (index, worker) in workers.enumerated() {
                done.enter()
                Thread.detachNewThread {
                    defer { done.leave() }
                    do {
                        try worker.performAndWait {
                            try UpsertStore.insert(worker, "Author", ["handle": "h\(round)", "name": "w\(index)"])
                            try worker.processPendingChanges()
                            ready.signal()
                            go.wait()
                            try worker.save()
                        }
                        outcomes.update { $0.append("saved") }
                    } catch {
                        outcomes.update { $0.append("\(error)") }
                    }
                }
            }
            for _ in workers { try waitForSignal(ready) { "round \(round): a worker's insert before its save" } }
            for _ in workers { go.signal() }
            try waitForThreads(done) { "round \(round): the racing upserts" }
            try checkEqual(outcomes.get(), Array(repeating: "saved", count: writers), "round \(round): every upsert saved")
        }
        let verifier = verify()
        try verifier.performAndWait {
            for round in 0..<rounds {
                let stored = try UpsertStore.fetch(verifier, "Author", "handle == 'h\(round)'")
                try checkEqual(stored.count, 1, "authors stored with handle h\(round)")
                let name = try UpsertStore.text(stored.first, "name") ?? "-"
                try check((0..<writers).map { "w\($0)" }.contains(name), "h\(round) holds one of the racers' names, not \(name)")
            }
        }
    }
}
