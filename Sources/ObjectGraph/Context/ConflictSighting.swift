import Foundation

/// One object's conflict as a store reported it: a retry that meets the same sightings again
/// found no newer save to resolve against.
struct ConflictSighting: Hashable {
    let objectID: ObjectID
    let storedVersion: Int64?

    init(_ conflict: StoreError.Conflict) {
        objectID = conflict.objectID
        storedVersion = conflict.storedVersion
    }
}
