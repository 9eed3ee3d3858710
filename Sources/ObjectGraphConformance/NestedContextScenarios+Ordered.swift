import Foundation
import ObjectGraph

/// A child's save of a reordered ordered relationship lands in a parent that has changed the
/// same relationship since the child read it. The child's order applies to the members it
/// knew; a member only the parent has stays a member. Before, the parent took the child's list
/// whole: its new track left `playlist.tracks` while `track.playlist` still named the
/// playlist, and the parent's save stored it first in the list on SQLite (no position) and
/// last on the other stores (an audit).
extension NestedContextScenarios {
    static let ordered: [ConformanceScenario] = [
        ConformanceScenario("nested.childReorderKeepsAMemberTheParentAddedMeanwhile") { env in
            let ids = try seedTwoPlaylists(env)
            let parent = env.newContext("parent")
            try parent.performAndWait {
                let playlist = try parent.existingObject(with: ids.0) as! Playlist
                let child = parent.newChildContext()
                try child.performAndWait {
                    let mine = try child.existingObject(with: ids.0) as! Playlist
                    try checkEqual(mine.tracks.map(\.title), ["a1", "a2", "a3"], "the child reads the tracks")
                    mine.$tracks.move(from: 2, to: 0)
                }
                let added = Track(context: parent); added.title = "n"
                playlist.$tracks.add(added)
                try child.performAndWait { try child.save() }
                try checkEqual(playlist.tracks.map(\.title), ["a3", "a1", "a2", "n"], "the parent: the child's order, then its own new track")
                try check(added.playlist === playlist, "the new track still names the playlist")
                try parent.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let playlist = try fresh.existingObject(with: ids.0) as! Playlist
                try checkEqual(playlist.tracks.map(\.title), ["a3", "a1", "a2", "n"], "stored order")
                let named = try fresh.fetch(FetchRequest<Track>(predicate: .key("playlist") == playlist.objectID))
                try checkEqual(Set(named.map(\.title)), ["a1", "a2", "a3", "n"], "the tracks naming the playlist are its members")
            }
        },
    ]
    /// Playlists A (a1, a2, a3) and B (b1, b2), saved; returns their IDs.
    static func seedTwoPlaylists(_ env: ScenarioEnvironment) throws -> (ObjectID, ObjectID) {
        let ids = try env.seed { context in
            let a = Playlist(context: context); a.name = "A"
            let b = Playlist(context: context); b.name = "B"
            for title in ["a1", "a2", "a3"] { let track = Track(context: context); track.title = title; a.$tracks.add(track) }
            for title in ["b1", "b2"] { let track = Track(context: context); track.title = title; b.$tracks.add(track) }
            return [a, b]
        }
        return (ids[0], ids[1])
    }
}
