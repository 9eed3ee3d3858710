import Foundation
import ObjectGraph
import OrderedCollections

/// Upserts probed where the first scenarios did not go: ordered memberships, chains of
/// merges, undo after an upsert, a child holding the merged-away object.
extension ValidationScenarios {
    static let upsertAudit: [ConformanceScenario] = [
        ConformanceScenario("validation.uniqueness.upsert.orderedPositionsKept") { env in
            try AuditUpsertStore.open(env) { container in
                let seed = container.newBackgroundContext()
                try seed.performAndWait {
                    let a = try UpsertStore.insert(seed, "Author", ["handle": "a"])
                    try UpsertStore.insert(seed, "Author", ["handle": "b"])
                    let c = try UpsertStore.insert(seed, "Author", ["handle": "c"])
                    let list = try UpsertStore.insert(seed, "Playlist", ["name": "p"])
                    for author in [a, c] { try list.add(author, to: "items"); try list.add(author, to: "queue") }
                    try seed.save()
                }
                let context = UpsertStore.context(container, .objectTrumps)
                try context.performAndWait {
                    let list = try UpsertStore.one(context, "Playlist", "name == 'p'")
                    let new = try UpsertStore.insert(context, "Author", ["handle": "b", "name": "B"])
                    try list.insert(new, at: 1, in: "items")
                    try list.insert(new, at: 1, in: "queue")
                    try context.save()
                    try checkEqual(try AuditUpsertStore.handles(list, "items"), ["a", "b", "c"], "ordered to-many: the survivor where the new object was")
                    try checkEqual(try AuditUpsertStore.handles(list, "queue"), ["a", "b", "c"], "ordered many-to-nil: the survivor where the new object was")
                }
                let fresh = container.newBackgroundContext()
                try fresh.performAndWait {
                    let list = try UpsertStore.one(fresh, "Playlist", "name == 'p'")
                    try checkEqual(try AuditUpsertStore.handles(list, "items"), ["a", "b", "c"], "ordered to-many stored")
                    try checkEqual(try AuditUpsertStore.handles(list, "queue"), ["a", "b", "c"], "ordered many-to-nil stored")
                }
            }
        },
        ConformanceScenario("validation.uniqueness.upsert.chainOfMerges") { env in
            // A new book (unique by title) names a new author (unique by handle); both collide.
            for bookFirst in [false, true] {
                try AuditUpsertStore.open(env) { container in
                    let seed = container.newBackgroundContext()
                    try seed.performAndWait {
                        try UpsertStore.insert(seed, "Author", ["handle": "ann", "name": "Ann"])
                        try UpsertStore.insert(seed, "Book", ["title": "dune"])
                        try seed.save()
                    }
                    let context = UpsertStore.context(container, .objectTrumps)
                    try context.performAndWait {
                        var book: ManagedObject?
                        if bookFirst { book = try UpsertStore.insert(context, "Book", ["title": "dune"]) }
                        let author = try UpsertStore.insert(context, "Author", ["handle": "ann", "name": "New"])
                        if !bookFirst { book = try UpsertStore.insert(context, "Book", ["title": "dune"]) }
                        try book?.setValue(author, forKey: "author")
                        try context.save()
                        let dune = try UpsertStore.one(context, "Book", "title == 'dune'")
                        let ann = try UpsertStore.one(context, "Author", "handle == 'ann'")
                        try check((try dune.value(forKey: "author") as? ManagedObject) === ann, "bookFirst \(bookFirst): the stored book names the stored author")
                        try checkEqual(try UpsertStore.members(ann, "books", "title"), ["dune"], "bookFirst \(bookFirst): the inverse")
                    }
                    let fresh = container.newBackgroundContext()
                    try fresh.performAndWait {
                        try checkEqual(try UpsertStore.fetch(fresh, "Book").count, 1, "books stored")
                        let ann = try UpsertStore.one(fresh, "Author", "handle == 'ann'")
                        try checkEqual(try UpsertStore.text(ann, "name"), "New", "objectTrumps name")
                        try checkEqual(try UpsertStore.members(ann, "books", "title"), ["dune"], "bookFirst \(bookFirst): stored inverse")
                    }
                }
            }
        },
        ConformanceScenario("validation.uniqueness.upsert.undoAfterTheSave") { env in
            // A stored book moved to a new author that merges into a stored one; undoing the
            // move after the save gives the book back to its first author on both ends.
            try AuditUpsertStore.open(env) { container in
                let seed = container.newBackgroundContext()
                try seed.performAndWait {
                    try UpsertStore.insert(seed, "Author", ["handle": "ann"])
                    let bob = try UpsertStore.insert(seed, "Author", ["handle": "bob"])
                    try UpsertStore.insert(seed, "Book", ["title": "dune", "author": bob])
                    try seed.save()
                }
                let context = UpsertStore.context(container, .objectTrumps)
                context.undoStack = ContextUndoStack()
                let (annID, bobID, duneID): (ObjectID, ObjectID, ObjectID) = try context.performAndWait {
                    let ann = try UpsertStore.one(context, "Author", "handle == 'ann'")
                    let bob = try UpsertStore.one(context, "Author", "handle == 'bob'")
                    let dune = try UpsertStore.one(context, "Book", "title == 'dune'")
                    _ = try UpsertStore.members(ann, "books", "title")
                    _ = try UpsertStore.members(bob, "books", "title")
                    return (ann.objectID, bob.objectID, dune.objectID)
                }
                try context.performAndWait {
                    let new = try UpsertStore.insert(context, "Author", ["handle": "ann"])
                    try context.existingObject(with: duneID).setValue(new, forKey: "author")
                }
                try context.performAndWait { try context.save() }
                try context.performAndWait {
                    // The merge is a group of its own: undone, the new author is an unsaved
                    // insert again, holding the book.
                    try context.undo()
                    let dune = try context.existingObject(with: duneID)
                    let new = try dune.value(forKey: "author") as? ManagedObject
                    try check(new.map { context.insertedObjects.contains($0) } ?? false, "merge undone: the new author is an insert again")
                    try checkEqual(try UpsertStore.members(try context.existingObject(with: annID), "books", "title"), [], "merge undone: ann's books")
                    try context.undo()
                    try checkEqual((try dune.value(forKey: "author") as? ManagedObject)?.objectID, bobID, "undone: dune's author")
                    try checkEqual(try UpsertStore.members(try context.existingObject(with: bobID), "books", "title"), ["dune"], "undone: bob's books")
                    try checkEqual(try UpsertStore.members(try context.existingObject(with: annID), "books", "title"), [], "undone: ann's books")
                    try context.save()
                }
                let fresh = container.newBackgroundContext()
                try fresh.performAndWait {
                    try checkEqual(try UpsertStore.members(try fresh.existingObject(with: bobID), "books", "title"), ["dune"], "stored: bob's books")
                    try checkEqual(try UpsertStore.members(try fresh.existingObject(with: annID), "books", "title"), [], "stored: ann's books")
                }
                // Redone, the move and the merge are saved again.
                try context.performAndWait {
                    try context.redo()
                    try context.redo()
                    try context.save()
                    try checkEqual(try UpsertStore.members(try context.existingObject(with: annID), "books", "title"), ["dune"], "redone: ann's books")
                    try checkEqual(try UpsertStore.members(try context.existingObject(with: bobID), "books", "title"), [], "redone: bob's books")
                }
                let after = container.newBackgroundContext()
                try after.performAndWait {
                    try checkEqual(try UpsertStore.fetch(after, "Author").count, 2, "stored: two authors")
                    try checkEqual(try UpsertStore.members(try after.existingObject(with: annID), "books", "title"), ["dune"], "stored after redo: ann's books")
                }
            }
        },
        ConformanceScenario("validation.uniqueness.upsert.childHoldsTheMergedAwayObject") { env in
            // A child saved a new author into its parent; the parent's save merges it into the
            // stored row. The child's copy names an ID no row has: merging the parent's save
            // tells it, and a later edit of it through the child reaches the survivor or fails
            // with a typed error, never a second row.
            try UpsertStore.open(env) { container in
                let parent = UpsertStore.context(container, .objectTrumps)
                try parent.performAndWait {
                    let child = parent.newChildContext()
                    child.mergePolicy = .objectTrumps
                    let new = try child.performAndWait {
                        let new = try UpsertStore.insert(child, "Author", ["handle": "ann", "name": "Child"])
                        try child.save()
                        return new
                    }
                    // Stored by another context after the child's save, before the parent's.
                    try UpsertStore.storeAnn(container)
                    let saved = try UpsertStore.save(parent)
                    try checkEqual(saved?.mergedIDs.count, 1, "one merge reported")
                    try checkEqual(saved?.updatedIDs.count, 1, "the survivor updated with the child's values")
                    try UpsertStore.readAnn(container) { ann in
                        try checkEqual(try UpsertStore.text(ann, "name"), "Child", "objectTrumps: the name the child gave")
                    }
                    try child.performAndWait {
                        if let saved { try child.mergeChanges(fromContextDidSave: saved) }
                        do {
                            try new.setValue("Edited", forKey: "name")
                            try child.save()
                            try parent.save()
                        } catch is ObjectGraphError {
                        } catch is ValidationError {
                        } catch is MergeConflictError {}
                    }
                }
                let fresh = container.newBackgroundContext()
                try fresh.performAndWait {
                    try checkEqual(try UpsertStore.fetch(fresh, "Author").count, 1, "one author stored")
                }
            }
        },
        ConformanceScenario("validation.uniqueness.upsert.survivorDeletedInTheSameSave") { env in
            try UpsertStore.open(env) { container in
                try UpsertStore.storeAnn(container)
                let context = UpsertStore.context(container, .objectTrumps)
                try context.performAndWait {
                    context.delete(try UpsertStore.one(context, "Author", "handle == 'ann'"))
                    try UpsertStore.insert(context, "Author", ["handle": "ann", "name": "Replacement"])
                    let saved = try UpsertStore.save(context)
                    try checkEqual(saved?.mergedIDs ?? [:], [:], "nothing merged into a deleted row")
                }
                try UpsertStore.readAnn(container) { ann in
                    try checkEqual(try UpsertStore.text(ann, "name"), "Replacement", "the new row")
                }
            }
        },
        ConformanceScenario("validation.uniqueness.upsert.twoConstraintsTwoRows") { env in
            // The new object's handle is one stored row's, its email another's: merged into the
            // first, the first would take the second's email. Refused with 1551, typed.
            try AuditUpsertStore.open(env) { container in
                let seed = container.newBackgroundContext()
                try seed.performAndWait {
                    try UpsertStore.insert(seed, "Author", ["handle": "ann", "email": "a@x"])
                    try UpsertStore.insert(seed, "Author", ["handle": "bob", "email": "b@x"])
                    try seed.save()
                }
                let context = UpsertStore.context(container, .objectTrumps)
                try context.performAndWait {
                    try UpsertStore.insert(context, "Author", ["handle": "ann", "email": "b@x"])
                    let error = try checkThrows(ValidationError.self, "a new object colliding with two rows") { try context.save() }
                    try check(error.contains(.uniquenessConstraint, key: "email"), "1551 on email: \(error)")
                }
                let fresh = container.newBackgroundContext()
                try fresh.performAndWait {
                    try checkEqual(try UpsertStore.fetch(fresh, "Author", "email == 'b@x'").count, 1, "one row with b@x")
                }
            }
        },
        ConformanceScenario("validation.uniqueness.upsert.racingSavesOfThreeWriters") { env in
            try AuditUpsertStore.open(env) { container in
                try racingUpserts(writers: 3) { container.newBackgroundContext(name: "upsert worker \($0)") } verify: { container.newBackgroundContext() }
            }
        },
    ]
}

/// The audit's model: the upsert model's author, also unique by email, in ordered
/// relationships; a book unique by title.
enum AuditUpsertStore {
    static func open(_ env: ScenarioEnvironment, _ body: (PersistentContainer) throws -> Void) throws {
        try UpsertStore.open(env, model: try model(), body)
    }

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Author") { e in
                e.attribute("handle", .string)
                e.attribute("email", .string, optional: true)
                e.attribute("name", .string, optional: true)
                e.unique("handle")
                e.unique("email")
                e.toMany("books", "Book", inverse: "author")
                e.toMany("lists", "Playlist", inverse: "items")
            }
            m.entity("Book") { e in
                e.attribute("title", .string)
                e.unique("title")
                e.toOne("author", "Author", inverse: "books")
            }
            m.entity("Playlist") { e in
                e.attribute("name", .string)
                e.toMany("items", "Author", inverse: "lists", ordered: true)
                e.toMany("queue", "Author", ordered: true)
            }
        }
    }

    /// The handles of an ordered to-many's members, in order.
    static func handles(_ object: ManagedObject, _ key: String) throws -> [String] {
        let members = try object.value(forKey: key) as? OrderedSet<ManagedObject> ?? []
        return try members.map { try UpsertStore.text($0, "handle") ?? "-" }
    }
}
