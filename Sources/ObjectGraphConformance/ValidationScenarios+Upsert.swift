import Foundation
import ObjectGraph

/// Uniqueness conflicts resolved by the merge policy ("upsert"): an inserted object whose
/// constrained values a stored row (or an earlier inserted object) uses is merged into that
/// object as the policy says, and the error policy still throws 1551. Relationships and races
/// are in +UpsertGraph.
extension ValidationScenarios {
    static let upsert: [ConformanceScenario] = [
        ConformanceScenario("validation.uniqueness.upsert.objectTrumpsUpdatesTheStoredRow") { env in
            try UpsertStore.open(env) { container in
                let annID = try UpsertStore.storeAnn(container)
                let context = UpsertStore.context(container, .objectTrumps)
                try context.performAndWait {
                    let new = try UpsertStore.insert(context, "Author", ["handle": "ann", "name": "Ann B."])
                    let newID = new.objectID
                    let saved = try UpsertStore.save(context)
                    // The values set on the new object win; those it left alone keep the row's.
                    let ann = try UpsertStore.one(context, "Author", "handle == 'ann'")
                    try checkEqual(ann.objectID, annID, "the stored row survives, with its ID")
                    try checkEqual(try UpsertStore.text(ann, "name"), "Ann B.", "name set on the new object")
                    try checkEqual(try UpsertStore.text(ann, "bio"), "old bio", "bio the new object left alone")
                    try checkEqual(try ann.value(forKey: "rank") as? Int64, 3, "rank the new object left at its default")
                    try checkEqual(saved?.mergedIDs[newID], annID, "the save reports what the new object was merged into")
                    try checkEqual(saved?.inserted ?? [], [], "nothing inserted")
                    try checkEqual(saved?.updated ?? [], [annID], "the stored row updated")
                    try check(context.registeredObject(for: newID) == nil, "the merged-away object left the context")
                    try check(!context.hasChanges, "nothing left unsaved")
                    // A later save works on the survivor.
                    try ann.setValue("Ann C.", forKey: "name")
                    try context.save()
                }
                let fresh = container.newBackgroundContext()
                try fresh.performAndWait {
                    let all = try UpsertStore.fetch(fresh, "Author")
                    try checkEqual(all.count, 1, "authors stored")
                    try checkEqual(try UpsertStore.text(all.first, "name"), "Ann C.", "name stored by the later save")
                    try checkEqual(try UpsertStore.text(all.first, "bio"), "old bio", "bio stored")
                }
            }
        },
        ConformanceScenario("validation.uniqueness.upsert.storeTrumpsKeepsStoredValues") { env in
            try UpsertStore.open(env) { container in
                let annID = try UpsertStore.storeAnn(container, bio: nil)
                let context = UpsertStore.context(container, .storeTrumps)
                try context.performAndWait {
                    try UpsertStore.insert(context, "Author", ["handle": "ann", "name": "Other", "bio": "new bio"])
                    try context.save()
                    let ann = try UpsertStore.one(context, "Author", "handle == 'ann'")
                    try checkEqual(ann.objectID, annID, "the stored row survives")
                    try checkEqual(try UpsertStore.text(ann, "name"), "Ann", "the stored name wins")
                    try checkEqual(try UpsertStore.text(ann, "bio"), "new bio", "a value the row lacked is filled in")
                }
            }
        },
        ConformanceScenario("validation.uniqueness.upsert.overwritePushesTheWholeObject") { env in
            try UpsertStore.open(env) { container in
                try UpsertStore.storeAnn(container)
                try UpsertStore.upsert(container, .overwrite, ["handle": "ann", "name": "New"])
                try UpsertStore.readAnn(container) { ann in
                    try checkEqual(try UpsertStore.text(ann, "name"), "New", "name")
                    try checkEqual(try UpsertStore.text(ann, "bio"), nil, "bio: the new object's nil")
                    try checkEqual(try ann.value(forKey: "rank") as? Int64, 0, "rank: the new object's default")
                }
            }
        },
        ConformanceScenario("validation.uniqueness.upsert.rollbackKeepsTheRowAndTheReferences") { env in
            try UpsertStore.open(env) { container in
                let annID = try UpsertStore.storeAnn(container)
                let context = UpsertStore.context(container, .rollback)
                try context.performAndWait {
                    let new = try UpsertStore.insert(context, "Author", ["handle": "ann", "name": "New", "rank": 9])
                    // The new object's values are dropped, but nothing pointing at it is lost.
                    let book = try UpsertStore.insert(context, "Book", ["title": "Dune", "author": new])
                    try context.save()
                    try checkEqual((try book.value(forKey: "author") as? ManagedObject)?.objectID, annID, "the book points at the stored author")
                }
                try UpsertStore.readAnn(container) { ann in
                    try checkEqual(try UpsertStore.text(ann, "name"), "Ann", "the stored name")
                    try checkEqual(try ann.value(forKey: "rank") as? Int64, 3, "the stored rank")
                    try checkEqual(try UpsertStore.members(ann, "books", "title"), ["Dune"], "books of the stored author")
                }
            }
        },
        ConformanceScenario("validation.uniqueness.upsert.errorPolicyStillThrows") { env in
            try UpsertStore.open(env) { container in
                try UpsertStore.storeAnn(container)
                let context = container.newBackgroundContext()
                try context.performAndWait {
                    let new = try UpsertStore.insert(context, "Author", ["handle": "ann", "name": "New"])
                    let error = try checkThrows(ValidationError.self, "a new author repeating a stored handle") { try context.save() }
                    try check(error.contains(.uniquenessConstraint, key: "handle"), "code 1551 on handle: \(error)")
                    let violation = error.violations.first { $0.code == .uniquenessConstraint }
                    try checkEqual(violation?.objectID, new.objectID, "the violation names the new object")
                    try check(violation?.message.contains("handle = \"ann\"") ?? false, "the message names the values: \(error)")
                    try check(context.insertedObjects.contains(new), "the context keeps its insert")
                    try checkEqual(try UpsertStore.text(new, "name"), "New", "and its values")
                }
                try UpsertStore.readAnn(container) { ann in
                    try checkEqual(try UpsertStore.text(ann, "name"), "Ann", "the stored row is unchanged")
                }
            }
        },
        ConformanceScenario("validation.uniqueness.upsert.twoNewObjectsInOneSave") { env in
            // Two unsaved objects with one handle: the first inserted survives (it plays the
            // stored row's part), the later one is merged into it.
            try UpsertStore.open(env) { container in
                let context = UpsertStore.context(container, .objectTrumps)
                try context.performAndWait {
                    let first = try UpsertStore.insert(context, "Author", ["handle": "x", "name": "first", "bio": "b1"])
                    let second = try UpsertStore.insert(context, "Author", ["handle": "x", "name": "second"])
                    try UpsertStore.insert(context, "Book", ["title": "one", "author": first])
                    let two = try UpsertStore.insert(context, "Book", ["title": "two", "author": second])
                    let secondID = second.objectID
                    let saved = try UpsertStore.save(context)
                    try checkEqual(saved?.inserted.count, 3, "one author and two books inserted")
                    try checkEqual(saved?.mergedIDs[secondID], first.objectID, "the later object merged into the first")
                    try check((try two.value(forKey: "author") as? ManagedObject) === first, "the later object's book follows the survivor")
                }
                context.mergePolicy = .storeTrumps
                try context.performAndWait {
                    try UpsertStore.insert(context, "Author", ["handle": "y", "name": "first"])
                    try UpsertStore.insert(context, "Author", ["handle": "y", "name": "second", "bio": "b2"])
                    try context.save()
                }
                let fresh = container.newBackgroundContext()
                try fresh.performAndWait {
                    let x = try UpsertStore.one(fresh, "Author", "handle == 'x'")
                    try checkEqual(try UpsertStore.text(x, "name"), "second", "objectTrumps: the later object's name")
                    try checkEqual(try UpsertStore.text(x, "bio"), "b1", "a value only the first had")
                    try checkEqual(try UpsertStore.members(x, "books", "title"), ["one", "two"], "both objects' books")
                    let y = try UpsertStore.one(fresh, "Author", "handle == 'y'")
                    try checkEqual(try UpsertStore.text(y, "name"), "first", "storeTrumps: the first object's name")
                    try checkEqual(try UpsertStore.text(y, "bio"), "b2", "a value only the later one had")
                }
            }
        },
        ConformanceScenario("validation.uniqueness.upsert.subEntities") { env in
            try UpsertStore.open(env) { container in
                let annID = try UpsertStore.storeAnn(container)
                let context = UpsertStore.context(container, .objectTrumps)
                try context.performAndWait {
                    // An Editor merges into a stored Author only if the Author can hold what it has.
                    let editor = try UpsertStore.insert(context, "Editor", ["handle": "ann", "desk": "news"])
                    let refused = try checkThrows(ValidationError.self, "an Editor with a desk merged into an Author") { try context.save() }
                    try check(refused.contains(.uniquenessConstraint, key: "handle"), "code 1551 on handle: \(refused)")
                    try check(refused.description.contains("desk"), "the message names what cannot be merged: \(refused)")
                    try check(context.insertedObjects.contains(editor), "nothing merged")
                    try editor.setValue(nil, forKey: "desk")
                    try editor.setValue("Editor Ann", forKey: "name")
                    try context.save()
                    let ann = try UpsertStore.one(context, "Author", "handle == 'ann'")
                    try checkEqual(ann.objectID, annID, "merged into the stored Author")
                    try checkEqual(try UpsertStore.text(ann, "name"), "Editor Ann", "with the Editor's name")
                    // A new Author merges into a stored Editor, which has every Author property.
                    try UpsertStore.insert(context, "Editor", ["handle": "bob", "desk": "sport"])
                    try context.save()
                    try UpsertStore.insert(context, "Author", ["handle": "bob", "name": "Bob"])
                    try context.save()
                }
                let fresh = container.newBackgroundContext()
                try fresh.performAndWait {
                    try checkEqual(try UpsertStore.fetch(fresh, "Author").count, 2, "authors and editors stored")
                    let bob = try UpsertStore.one(fresh, "Author", "handle == 'bob'")
                    try checkEqual(bob.entity.name, "Editor", "bob is still an Editor")
                    try checkEqual(try UpsertStore.text(bob, "name"), "Bob", "with the Author's name")
                    try checkEqual(try UpsertStore.text(bob, "desk"), "sport", "and its desk")
                }
            }
        },
    ]
}
