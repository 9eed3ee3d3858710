import Foundation
import ObjectGraph

/// The demo's chat app: chats hold messages (cascade), members join chats and write messages
/// (nullify both ways).
final class DemoChat: ManagedObject {
    @Attribute var title: String
    @Relationship var messages: Set<DemoMessage>
    @Relationship var members: Set<DemoMember>
}

final class DemoMember: ManagedObject {
    @Attribute var name: String
    @Relationship var chats: Set<DemoChat>
    @Relationship var messages: Set<DemoMessage>
}

final class DemoMessage: ManagedObject {
    @Attribute var text: String
    @Attribute var sentAt: Date
    @Relationship var chat: DemoChat?
    @Relationship var author: DemoMember?
}

enum DemoModel {
    static func make() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Chat", as: DemoChat.self) { e in
                e.attribute("title", .string, rules: [.minLength(1)])
                e.toMany("messages", "Message", inverse: "chat", deleteRule: .cascade)
                e.toMany("members", "Member", inverse: "chats")
            }
            m.entity("Member", as: DemoMember.self) { e in
                e.attribute("name", .string)
                e.toMany("chats", "Chat", inverse: "members")
                e.toMany("messages", "Message", inverse: "author")
            }
            m.entity("Message", as: DemoMessage.self) { e in
                e.attribute("text", .string)
                e.attribute("sentAt", .date)
                e.toOne("chat", "Chat", inverse: "messages", optional: false)
                e.toOne("author", "Member", inverse: "messages")
            }
        }
    }
}
