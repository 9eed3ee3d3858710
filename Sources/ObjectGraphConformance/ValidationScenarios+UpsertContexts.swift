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
                    try checkEqual(error.code, .objectNotFound, "code")
                    let again = try checkThrows(ObjectGraphError.self, "existingObject(with:) after the save") { _ = try other.existingObject(with: loserID) }
                    try checkEqual(again.code, .objectNotFound, "code")
                    let found = try UpsertStore.fetch(other, "Author", "handle == 'ann'")
                    try checkEqual(found.map(\.objectID), [annID], "a fetch finds the survivor")
                    try checkEqual(try UpsertStore.text(found.first, "name"), "New", "with the merged name")
                }
            }
        },
    ]
}
