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
    ]
}
