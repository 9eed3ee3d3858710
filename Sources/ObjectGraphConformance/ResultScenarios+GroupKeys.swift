import Foundation
import ObjectGraph

/// Group keys of dictionary fetches: which value stands for a group when its members' keys are
/// equal but not identical (canonically equivalent strings) — the first member's, as the
/// shared grouping has it, whatever order a store meets the members in — and which key paths
/// can be grouped by at all.
extension ResultScenarios {
    static let groupKeys: [ConformanceScenario] = [
        ConformanceScenario("results.dictionaries.groupKeyIsItsFirstMembersValue") { env in
            // Precomposed first: its UTF-8 (C3 A9) sorts after the decomposed form's (65 CC 81),
            // so a store meeting groups in byte order meets the later member first.
            let writer = env.newContext()
            try writer.performAndWait {
                for string in ["Jos\u{E9}", "Jose\u{301}"] {
                    let object = try writer.insertObject(entityName: "AllTypes")
                    try object.setValue(string, forKey: "string")
                    try writer.save()
                }
            }
            try env.reopen()
            let context = env.newContext()
            try context.performAndWait {
                var request = FetchRequest<ManagedObject>(entityName: "AllTypes")
                request.propertiesToFetch = [.key("string"), .count(as: "n")]
                request.propertiesToGroupBy = ["string"]
                let groups = try context.fetchDictionaries(request)
                try checkEqual(groups.count, 1, "canonically equivalent strings are one group: \(groups)")
                try checkEqual(scalars(groups[0]["string"]), scalars(.string("Jos\u{E9}")), "the group's key is its first member's string, precomposed")
                try checkEqual(groups[0]["n"], .integer(2), "both members counted")
            }
        },
        ConformanceScenario("results.dictionaries.groupKeyThroughToOneIsItsFirstMembersValue") { env in
            // The chat saved first has the decomposed title, but the first message is in the
            // other chat: the group is keyed by that chat's (precomposed) title.
            let writer = env.newContext()
            try writer.performAndWait {
                let decomposed = Chat(context: writer); decomposed.title = "Jose\u{301}"
                try writer.save()
                let precomposed = Chat(context: writer); precomposed.title = "Jos\u{E9}"
                try writer.save()
                for chat in [precomposed, decomposed] {
                    let message = Message(context: writer); message.text = "hello"
                    message.chat = chat
                    try writer.save()
                }
            }
            try env.reopen()
            let context = env.newContext()
            try context.performAndWait {
                let request = messagesPerChatTitle()
                let groups = try context.fetchDictionaries(request)
                try checkEqual(groups.count, 1, "chats with canonically equivalent titles are one group: \(groups)")
                try checkEqual(scalars(groups[0]["chat"]), scalars(.string("Jos\u{E9}")), "the group's key is its first message's chat title, precomposed")
                try checkEqual(groups[0]["n"], .integer(2), "both messages counted")
            }
        },
        ConformanceScenario("results.dictionaries.groupByKeyPathReachesOneAttributeValue") { env in
            try seedChats(env, chats: [("a", [1, 2, 3]), ("b", [4, 5, 6])])
            let context = env.newContext()
            try context.performAndWait {
                // A to-many key path has no one value to group by: each grouped every message
                // into one group (or by a first member's text), silently. (A to-one groups by
                // destination: see groupByRelationship.)
                for key in ["chat.messages", "chat.messages.text", "chat.members.name"] {
                    var request = FetchRequest<ManagedObject>(entityName: "Message")
                    request.propertiesToFetch = [.count(as: "n")]
                    request.propertiesToGroupBy = [key]
                    try FetchScenarios.checkInvalidFetch("grouping messages by '\(key)'") { _ = try context.fetchDictionaries(request) }
                }
                var byCount = FetchRequest<ManagedObject>(entityName: "Message")
                byCount.propertiesToFetch = [.key("chat.messages.@count", as: "size"), .count(as: "n")]
                byCount.propertiesToGroupBy = ["chat.messages.@count"]
                try checkEqual(try context.fetchDictionaries(byCount), [["size": .integer(3), "n": .integer(6)]], "an aggregate through a to-one is one value per message")
            }
        },
    ]

    /// A string value's Unicode scalars (`==` on strings is canonical equivalence, which
    /// cannot tell the two forms apart); empty for any other value.
    private static func scalars(_ value: AttributeValue?) -> [UInt32] {
        guard case .string(let string)? = value else { return [] }
        return string.unicodeScalars.map(\.value)
    }
}
