import Foundation
import ObjectGraph

/// An ordered list changed in a context that read it while its owner was still a fault, then
/// saved after another context changed the same list.
///
/// A save sends an ordered list whole, checked against the owner's version. Reading the members
/// did not read the owner, so the save read it then, at the version stored after the other
/// save, and passed: the list as this context had read it was written over the other's change.
/// The inserted track was lost on the memory, binary and LMDB stores and kept on SQLite, at a
/// position the reorder never saw (an audit). The owner is now read before its ordered members,
/// so such a save is a conflict, as it is when the owner was read first.
extension ConflictScenarios {
    static let faultedOwners: [ConformanceScenario] = [
        ConformanceScenario("conflicts.orderedListReadWhileItsOwnerWasAFaultIsCheckedAgainstLaterSaves") { env in
            for variant in ["moved", "appended"] {
                let pID = try MergeScenarios.seedPlaylist(env)  // p: t0, t1, t2
                let mine = env.newContext()
                try mine.performAndWait {
                    let playlist = try mine.fetch(FetchRequest<Playlist>()).first { $0.objectID == pID }
                    guard let playlist else { throw ScenarioFailure(message: "\(variant): no playlist", file: #filePath, line: #line) }
                    try checkEqual(playlist.tracks.map(\.title), ["t0", "t1", "t2"], "\(variant): the list as read")
                    if variant == "moved" {
                        playlist.$tracks.move(from: 2, to: 0)
                    } else {
                        let added = Track(context: mine); added.title = "mine"
                        playlist.$tracks.add(added)
                    }
                }
                let theirs = env.newContext()
                try theirs.performAndWait {
                    let playlist = try theirs.existingObject(with: pID) as! Playlist
                    let inserted = Track(context: theirs); inserted.title = "theirs"
                    playlist.$tracks.insert(inserted, at: 1)
                    try theirs.save()
                }
                _ = try mine.performAndWait { try checkThrows(MergeConflictError.self, "\(variant): the save over a list changed since it was read") { try mine.save() } }
                let fresh = env.newContext()
                try fresh.performAndWait {
                    let playlist = try fresh.existingObject(with: pID) as! Playlist
                    try checkEqual(playlist.tracks.map(\.title), ["t0", "theirs", "t1", "t2"], "\(variant): stored, the other save's list")
                    fresh.delete(playlist)
                    for track in try fresh.fetch(FetchRequest<Track>()) { fresh.delete(track) }
                    try fresh.save()
                }
            }
        },
    ]
}
