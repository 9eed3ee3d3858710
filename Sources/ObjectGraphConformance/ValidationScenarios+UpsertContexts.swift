import Foundation
import ObjectGraph

/// Other contexts holding the ID of an object a save merged away (ValidationScenarios+Upsert):
/// what they get when they resolve it or fetch.
extension ValidationScenarios {
    static let upsertContexts: [ConformanceScenario] = [
        ConformanceScenario("validation.uniqueness.upsert.handedOverIDOfTheMergedAwayObject") { env in
            // A context obtained a permanent ID for its new author and handed it over; its save
            // then merged the author into the stored row. The other context resolving the ID
            // gets a typed error (the row never existed), and its fetches find the survivor only.
            try UpsertStore.open(env) { container in
                let annID = try UpsertStore.storeAnn(container)
                let saving = UpsertStore.context(container, .objectTrumps)
                let other = container.newBackgroundContext()
                other.automaticallyMergesChangesFromParent = true
                let loserID = try saving.performAndWait {
                    let new = try UpsertStore.insert(saving, "Author", ["handle": "ann", "name": "New"])
                    try saving.obtainPermanentIDs(for: [new])
                    return new.objectID
                }
                try check(!loserID.isTemporary, "a permanent ID handed over")
                let early = other.performAndWait { other.object(with: loserID) }
                let saved = try saving.performAndWait { try UpsertStore.save(saving) }
                try checkEqual(saved?.mergedIDs[loserID], annID, "the handed-over ID merged into the stored row")
                try other.performAndWait {
                    let error = try checkThrows(ObjectGraphError.self, "reading a fault made before the save") { _ = try early.value(forKey: "name") }
                    // The automatic merge dropped it as a deleted object (mergedIDs).
                    try checkEqual(error.code, .objectInaccessible, "code")
                    let again = try checkThrows(ObjectGraphError.self, "existingObject(with:) after the save") { _ = try other.existingObject(with: loserID) }
                    try checkEqual(again.code, .objectNotFound, "code")
                    let found = try UpsertStore.fetch(other, "Author", "handle == 'ann'")
                    try checkEqual(found.map(\.objectID), [annID], "a fetch finds the survivor")
                    try checkEqual(try UpsertStore.text(found.first, "name"), "New", "with the merged name")
                }
            }
        },
        ConformanceScenario("validation.uniqueness.upsert.childMergingTheParentsSaveDropsTheMergedAwayObject") { env in
            try UpsertStore.open(env) { container in
                let parent = UpsertStore.context(container, .objectTrumps)
                try parent.performAndWait {
                    let (child, new, annID) = try childWithMergedAwayAuthor(container, parent, automaticMerge: true)
                    try child.performAndWait {
                        // The automatic merge ran (enqueued before this block).
                        // Before: the copy stayed registered and live, with values no row holds.
                        let error = try checkThrows(ObjectGraphError.self, "existingObject(with:) of the merged-away ID") { _ = try child.existingObject(with: new.objectID) }
                        try checkEqual(error.code, .objectNotFound, "code (\(error.message))")
                        try check(new.managedObjectContext == nil, "the child's copy left the context, as a deleted one does")
                        let found = try UpsertStore.fetch(child, "Author", "handle == 'ann'")
                        try checkEqual(found.map(\.objectID), [annID], "the child's fetch finds the survivor")
                    }
                }
            }
        },
    ]

    /// A child saved a new author into its parent; another context then stored "ann"; the
    /// parent's save merges the child's author into that row. Returns the child, its copy of
    /// the merged-away author and the survivor's ID.
    static func childWithMergedAwayAuthor(_ container: PersistentContainer, _ parent: ManagedObjectContext, automaticMerge: Bool) throws -> (ManagedObjectContext, ManagedObject, ObjectID) {
        let child = parent.newChildContext()
        child.mergePolicy = .objectTrumps
        child.automaticallyMergesChangesFromParent = automaticMerge
        let new = try child.performAndWait {
            let new = try UpsertStore.insert(child, "Author", ["handle": "ann", "name": "Child"])
            try child.save()
            return new
        }
        let annID = try UpsertStore.storeAnn(container)
        let saved = try UpsertStore.save(parent)
        try checkEqual(saved?.mergedIDs[new.objectID], annID, "the parent's save merged the child's author into the stored row")
        return (child, new, annID)
    }
}
