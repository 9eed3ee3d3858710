import Foundation
import ObjectGraph

/// To-manys of objects whose conflicts a merge policy resolved: after the save, they hold what
/// both saves made of them, in the saving context as in the store.
extension ConflictScenarios {
    /// Deletes every chat (and, by cascade, every message), so a loop can seed again.
    static func deleteAllChats(_ env: ScenarioEnvironment) throws {
        let cleanup = env.newContext()
        try cleanup.performAndWait {
            for object in try cleanup.fetch(FetchRequest<ManagedObject>(entityName: "Chat")) { cleanup.delete(object) }
            try cleanup.save()
        }
    }

    static let members: [ConformanceScenario] = [
        ConformanceScenario("conflicts.resolvedSaveShowsTheOtherSavesMembers") { env in
            for policy in [MergePolicy.storeTrumps, .objectTrumps, .overwrite, .rollback] {
                let (chatID, _, messageID) = try NestedContextScenarios.seedTwoChatsAndAMessage(env)
                let (saver, other) = (env.newContext(), env.newContext())
                saver.mergePolicy = policy
                // The saver reads the chat's messages before the other save adds one.
                let chat = try saver.performAndWait {
                    let chat = try saver.existingObject(with: chatID) as! Chat
                    _ = chat.messages.count
                    return chat
                }
                let theirs = try other.performAndWait {
                    let message = Message(context: other); message.text = "theirs"
                    message.chat = (try other.existingObject(with: chatID) as! Chat)
                    try other.save()
                    return message.objectID
                }
                let mine = try saver.performAndWait {
                    let message = Message(context: saver); message.text = "mine"; message.chat = chat
                    chat.title = "mine"
                    try saver.save()
                    return message.objectID
                }
                try saver.performAndWait {
                    try checkEqual(Set(chat.messages.map(\.objectID)), [messageID, theirs, mine], "\(policy): the chat's messages in the saving context")
                    let message = try saver.existingObject(with: theirs) as! Message
                    try checkEqual(message.chat?.objectID, chatID, "\(policy): the other save's message names the chat")
                }
                let check = env.newContext()
                try check.performAndWait {
                    let stored = try check.existingObject(with: chatID) as! Chat
                    try checkEqual(Set(stored.messages.map(\.objectID)), [messageID, theirs, mine], "\(policy): the chat's messages in the store")
                }
                try deleteAllChats(env)
            }
        },
        ConformanceScenario("conflicts.cascadeSparesAMessageMovedAway") { env in
            for policy in [MergePolicy.storeTrumps, .objectTrumps, .overwrite, .rollback] {
                let (chatID, chat2ID, messageID) = try NestedContextScenarios.seedTwoChatsAndAMessage(env)
                let setup = env.newContext()
                let authorID = try setup.performAndWait {
                    let author = Member(context: setup); author.name = "author"
                    (try setup.existingObject(with: messageID) as! Message).author = author
                    try setup.save()
                    return author.objectID
                }
                let (deleter, mover) = (env.newContext(), env.newContext())
                deleter.mergePolicy = policy
                // The deleter reads the chat's messages (and the message's author) first.
                let chat = try deleter.performAndWait {
                    let chat = try deleter.existingObject(with: chatID) as! Chat
                    _ = chat.messages.map { $0.author?.messages.count }
                    return chat
                }
                try mover.performAndWait {
                    let message = try mover.existingObject(with: messageID) as! Message
                    message.chat = (try mover.existingObject(with: chat2ID) as! Chat)
                    try mover.save()
                }
                // Deleting the chat cascades to the message as read; the store says it moved.
                try deleter.performAndWait {
                    deleter.delete(chat)
                    try deleter.save()
                    let author = try deleter.existingObject(with: authorID) as! Member
                    try checkEqual(author.messages.map(\.objectID), [messageID], "\(policy): the author's messages in the saving context")
                }
                let check = env.newContext()
                try check.performAndWait {
                    try checkEqual(try check.count(for: FetchRequest<Chat>()), 1, "\(policy): the deleted chat is gone, the other stays")
                    let chat2 = try check.existingObject(with: chat2ID) as! Chat
                    try checkEqual(chat2.messages.map(\.objectID), [messageID], "\(policy): the message the other save moved survives")
                    let author = try check.existingObject(with: authorID) as! Member
                    try checkEqual(author.messages.map(\.objectID), [messageID], "\(policy): and keeps its author")
                    try checkEqual((try check.existingObject(with: messageID) as! Message).author?.objectID, authorID, "\(policy): its author")
                    check.delete(author)
                    try check.save()
                }
                try deleteAllChats(env)
            }
        },
        ConformanceScenario("conflicts.cascadeStillDeletesAMessageEditedElsewhere") { env in
            for policy in [MergePolicy.storeTrumps, .objectTrumps, .overwrite, .rollback] {
                let (chatID, _, messageID) = try NestedContextScenarios.seedTwoChatsAndAMessage(env)
                let (deleter, editor) = (env.newContext(), env.newContext())
                deleter.mergePolicy = policy
                let chat = try deleter.performAndWait {
                    let chat = try deleter.existingObject(with: chatID) as! Chat
                    _ = chat.messages.map(\.text)
                    return chat
                }
                try editor.performAndWait {
                    (try editor.existingObject(with: messageID) as! Message).text = "edited"
                    try editor.save()
                }
                try deleter.performAndWait { deleter.delete(chat); try deleter.save() }
                let check = env.newContext()
                try check.performAndWait {
                    try checkEqual(try check.count(for: FetchRequest<Message>()), 0, "\(policy): the message still in the deleted chat is cascaded")
                }
                try deleteAllChats(env)
            }
        },
        // The order of an ordered to-many is a property of its owner: rollback takes the stored
        // order, store-trump takes it when the other save reordered the members too (a reorder
        // it did not make is kept), object-trump and overwrite keep this context's. Before,
        // every policy stored this context's order over the stored one (an audit).
        ConformanceScenario("conflicts.orderOfBothSavesFollowsThePolicy") { env in
            for policy in [MergePolicy.objectTrumps, .overwrite, .storeTrumps, .rollback] {
                for otherReorders in [true, false] {
                    let playlistID = try MergeScenarios.seedPlaylist(env)
                    let saver = env.newContext()
                    saver.mergePolicy = policy
                    let playlist = try saver.performAndWait {
                        let playlist = try saver.existingObject(with: playlistID) as! Playlist
                        try checkEqual(playlist.tracks.map(\.title), ["t0", "t1", "t2"], "read")
                        return playlist
                    }
                    let other = env.newContext()
                    try other.performAndWait {
                        let theirs = try other.existingObject(with: playlistID) as! Playlist
                        if otherReorders { theirs.$tracks.move(from: 0, to: 2) } else { theirs.name = "renamed" }
                        try other.save()
                    }
                    let saved = try saver.performAndWait {
                        playlist.$tracks.move(from: 2, to: 0)
                        try saver.save()
                        return playlist.tracks.map(\.title)
                    }
                    let label = "\(policy), the other save \(otherReorders ? "reordering" : "renaming")"
                    let storedWins = policy == .rollback || (otherReorders && policy == .storeTrumps)
                    let expected = !storedWins ? ["t2", "t0", "t1"] : otherReorders ? ["t1", "t2", "t0"] : ["t0", "t1", "t2"]
                    try checkEqual(saved, expected, "\(label): the order in the saving context")
                    let check = env.newContext()
                    try check.performAndWait {
                        let stored = try check.existingObject(with: playlistID) as! Playlist
                        try checkEqual(stored.tracks.map(\.title), expected, "\(label): the stored order")
                    }
                }
            }
        },
    ]
}
