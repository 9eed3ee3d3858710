import Foundation
import ObjectGraph
import OrderedCollections

/// A cascade deletes members it never loaded: a member that is still a fault and whose only
/// rule-reading to-one is the inverse being cleared is deleted without reading its row. These
/// scenarios pin down that it still behaves exactly as a loaded member would — the cleared
/// inverse stays cleared when the row loads later, rollback and undo bring the member back
/// whole, and the store ends as it would have.
extension DeleteRuleScenarios {
    static let unreadMembers: [ConformanceScenario] = [
        ConformanceScenario("deleteRules.cascade.unreadMembersAreDeletedAsLoadedOnes") { env in
            try seedPlaylists(env)
            let context = env.newContext()
            try context.performAndWait {
                var request = FetchRequest<Playlist>(predicate: .key("name") == "mix")
                request.returnsObjectsAsFaults = false  // the playlist's own row is read by its rule
                let mix = try context.fetch(request)[0]
                let faultsBefore = context.statistics.faultsFired
                context.delete(mix)
                try context.processPendingChanges()
                let tracks = context.deletedObjects.compactMap { $0 as? Track }
                try checkEqual(tracks.count, 3, "the cascade deletes the three tracks")
                try check(tracks.allSatisfy(\.isFault), "the tracks' rows were not read")
                try checkEqual(context.statistics.faultsFired, faultsBefore, "no fault fired for the cascade")
                // Reading a deleted track loads its row; the inverse the cascade cleared stays cleared.
                try checkEqual(Set(tracks.map(\.title)), ["a", "b", "c"], "the deleted tracks' titles load")
                try check(tracks.allSatisfy { $0.playlist == nil }, "each deleted track's playlist stays cleared after its row loaded")
                try check(tracks.allSatisfy(\.isDeleted), "loading the rows leaves the tracks deleted")
                try context.save()
            }
            try env.reopen()
            try expectStored(env, playlists: ["other"], tracks: ["kept"])
        },
        ConformanceScenario("deleteRules.cascade.unreadMembersComeBackOnRollback") { env in
            try seedPlaylists(env)
            let context = env.newContext()
            try context.performAndWait {
                let mix = try context.fetch(FetchRequest<Playlist>(predicate: .key("name") == "mix"))[0]
                context.delete(mix)
                try context.processPendingChanges()
                try checkEqual(context.deletedObjects.count, 4, "the playlist and its tracks are deleted")
                context.rollback()
                try check(!context.hasChanges, "rollback leaves no changes")
                try checkEqual(mix.tracks.map(\.title), ["a", "b", "c"], "the playlist has its tracks again, in order")
                try check(mix.tracks.allSatisfy { $0.playlist === mix && !$0.isDeleted }, "every track points at its playlist again")
                try context.save()
            }
            try env.reopen()
            try expectStored(env, playlists: ["mix", "other"], tracks: ["a", "b", "c", "kept"])
        },
        ConformanceScenario("deleteRules.cascade.unreadMembersComeBackOnUndo") { env in
            try seedPlaylists(env)
            let context = UndoScenarios.undoable(env)
            try context.performAndWait {
                let mix = try context.fetch(FetchRequest<Playlist>(predicate: .key("name") == "mix"))[0]
                context.delete(mix)
                try context.processPendingChanges()
                let tracks = context.deletedObjects.compactMap { $0 as? Track }
                try checkEqual(tracks.count, 3, "the cascade deletes the three tracks")
                try context.undo()
                try check(context.deletedObjects.isEmpty && !mix.isDeleted, "undo brings the playlist and its tracks back")
                try check(tracks.allSatisfy { !$0.isDeleted && $0.playlist === mix }, "each track points at its playlist again")
                try checkEqual(mix.tracks.map(\.title), ["a", "b", "c"], "the playlist's tracks, in order")
                try context.redo()
                try check(tracks.allSatisfy { $0.isDeleted && $0.playlist == nil }, "redo deletes the tracks with their inverse cleared")
                try context.save()
            }
            try env.reopen()
            try expectStored(env, playlists: ["other"], tracks: ["kept"])
        },
    ]

    /// "mix" with tracks a, b, c and "other" with "kept", saved; the store is reopened so that
    /// every later context starts from faults.
    static func seedPlaylists(_ env: ScenarioEnvironment) throws {
        let context = env.newContext()
        try context.performAndWait {
            let mix = Playlist(context: context); mix.name = "mix"
            let other = Playlist(context: context); other.name = "other"
            mix.tracks = OrderedSet(["a", "b", "c"].map { title in let t = Track(context: context); t.title = title; return t })
            let kept = Track(context: context); kept.title = "kept"
            other.$tracks.add(kept)
            try context.save()
        }
        try env.reopen()
    }

    /// Checks what the store holds, from a fresh context: playlists and tracks by name, and
    /// every track's playlist.
    private static func expectStored(_ env: ScenarioEnvironment, playlists: [String], tracks: [String]) throws {
        let fresh = env.newContext()
        try fresh.performAndWait {
            try checkEqual(try fresh.fetch(FetchRequest<Playlist>(sortKeys: [SortKey("name")])).map(\.name), playlists, "playlists in the store")
            let stored = try fresh.fetch(FetchRequest<Track>(sortKeys: [SortKey("title")]))
            try checkEqual(stored.map(\.title), tracks, "tracks in the store")
            for track in stored {
                let owner = track.playlist
                try check(owner != nil && owner!.tracks.contains(track), "\(track.title) belongs to a playlist that lists it")
            }
            // Counted by the to-one of an ordered to-many (which LMDB keeps as a list).
            for playlist in try fresh.fetch(FetchRequest<Playlist>()) {
                let counted = try fresh.count(for: FetchRequest<Track>(predicate: .key("playlist") == playlist.objectID))
                try checkEqual(counted, playlist.tracks.count, "tracks counted by playlist == \(playlist.name)")
            }
        }
    }
}
