import Foundation
import ObjectGraph

/// Request handlers on a server: many writers, each on a context of its own, edit the same few
/// rows at once and save under a resolving merge policy. Each save must land (the policy
/// resolves every conflict, however many other saves get in between), and the graph must
/// hold every writer's work.
extension StressScenarios {
    static let sharedRows: [ConformanceScenario] = [
        ConformanceScenario("stress.policyWritersOnSharedRows.everySaveLands") { env in
            let chatIDs = try env.seed { context in
                (0..<3).map { index in let chat = Chat(context: context); chat.title = "chat\(index)"; return chat }
            }
            let writers = 8, rounds = 10
            let failures = SharedValue<[String]>([])
            let container = env.container
            try runOnThreads(writers) { writer in
                let context = container.newBackgroundContext(name: "writer\(writer)")
                context.mergePolicy = writer % 2 == 0 ? .objectTrumps : .storeTrumps
                for round in 0..<rounds {
                    context.performAndWait {
                        do {
                            // Two shared rows changed and one related to a new message, so the
                            // saves conflict on attributes and on to-many memberships.
                            let chat = try context.existingObject(with: chatIDs[(writer + round) % chatIDs.count])
                            let next = try context.existingObject(with: chatIDs[(writer + round + 1) % chatIDs.count])
                            try chat.setValue("w\(writer) r\(round)", forKey: "title")
                            try next.setValue("next w\(writer) r\(round)", forKey: "title")
                            let message = try context.insertObject(entityName: "Message")
                            try message.setValue("w\(writer) r\(round)", forKey: "text")
                            try message.setValue(chat, forKey: "chat")
                            try context.save()
                        } catch {
                            failures.update { $0.append("writer\(writer) round \(round): \(error)") }
                            context.rollback()
                        }
                    }
                }
            }
            try check(failures.get().isEmpty, "\(failures.get().count) saves failed, first: \(failures.get().first ?? "")")
            let verifier = env.newContext("verifier")
            try verifier.performAndWait {
                let messages = try verifier.fetch(FetchRequest<ManagedObject>(entityName: "Message"))
                try checkEqual(messages.count, writers * rounds, "every writer's messages are stored")
                var members = 0
                for id in chatIDs {
                    let chat = try verifier.existingObject(with: id)
                    let owned = (try chat.value(forKey: "messages") as? Set<ManagedObject>) ?? []
                    for message in owned {
                        try checkEqual((try message.value(forKey: "chat") as? ManagedObject)?.objectID, id, "\(message.objectID).chat is the chat listing it")
                    }
                    members += owned.count
                }
                try checkEqual(members, writers * rounds, "the chats list every message once")
            }
        },
    ]
}
