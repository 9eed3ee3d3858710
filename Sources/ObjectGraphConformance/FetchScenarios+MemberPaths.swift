import Foundation
import ObjectGraph

/// Key paths that reach a to-many's members through to-ones, before or after it: what an
/// empty to-one on the way means. A store that compiles these (SQLite, to correlated
/// subqueries) must give what the shared evaluator gives.
extension FetchScenarios {
    static let memberPaths: [ConformanceScenario] = [
        ConformanceScenario("fetch.predicates.memberPathsThroughEmptyToOnes") { env in
            // Chat "a": Ada's message "hi", an authorless "yo"; chat "b": Bob's "ok"; chat "c":
            // an authorless "nn"; chat "d": no messages; a message "lost" in no chat.
            _ = try env.seed { context in
                let ada = Member(context: context); ada.name = "Ada"
                let bob = Member(context: context); bob.name = "Bob"
                for (title, messages) in [("a", [("hi", ada), ("yo", nil)]), ("b", [("ok", bob)]), ("c", [("nn", nil)]), ("d", [])] as [(String, [(String, Member?)])] {
                    let chat = Chat(context: context); chat.title = title
                    for (text, author) in messages {
                        let message = Message(context: context); message.text = text; message.chat = chat; message.author = author
                    }
                }
                let lost = Message(context: context); lost.text = "lost"
                return []
            }
            let context = env.newContext()
            try context.performAndWait {
                func titles(_ format: String, _ arguments: Any?...) throws -> [String] {
                    try context.fetch(FetchRequest<Chat>(predicate: try FetchPredicate(format: format, argumentArray: arguments), sortKeys: [SortKey("title")])).map(\.title)
                }
                func texts(_ format: String) throws -> [String] {
                    try context.fetch(FetchRequest<Message>(predicate: try FetchPredicate(format: format), sortKeys: [SortKey("text")])).map(\.text)
                }
                // After the to-many: an authorless message gives no name, so it neither
                // matches ANY nor fails ALL.
                try checkEqual(try titles("ANY messages.author.name == 'Ada'"), ["a"], "ANY through the members' to-one")
                try checkEqual(try titles("ALL messages.author.name == 'Ada'"), ["a", "c", "d"], "ALL: authorless messages give no value")
                try checkEqual(try titles("ANY messages.author.name == nil"), [], "no value is not a nil value")
                try checkEqual(try titles("NONE messages.author.name == 'Bob'"), ["a", "c", "d"], "NONE through the members' to-one")
                // Before the to-many: a message in no chat has no members to count, and its
                // count or aggregate is nil (not 0), while ANY/ALL/NONE see no members.
                try checkEqual(try texts("chat.messages.@count == 2"), ["hi", "yo"], "@count through a to-one")
                try checkEqual(try texts("chat.messages.@count == 0"), [], "no chat: the count is nil, not 0")
                try checkEqual(try texts("chat.messages.@count == nil"), ["lost"], "no chat: the count is nil")
                try checkEqual(try texts("chat.messages.@max.text == 'yo'"), ["hi", "yo"], "@max through a to-one")
                try checkEqual(try texts("ANY chat.messages.text == 'ok'"), ["ok"], "ANY through a to-one")
                try checkEqual(try texts("ALL chat.messages.text != 'hi'"), ["lost", "nn", "ok"], "no chat: ALL holds")
                // A SUBQUERY counts the members it reaches: 0 without a chat.
                try checkEqual(try texts("SUBQUERY(chat.messages, $m, $m.author != nil).@count == 0"), ["lost", "nn"], "SUBQUERY through a to-one")
                try checkEqual(try titles("SUBQUERY(messages, $m, $m.author.name BEGINSWITH 'A' OR $m.author == nil).@count == 2"), ["a"], "SUBQUERY with a join from the member")
                // The members themselves.
                guard let yo = try context.fetch(FetchRequest<Message>(predicate: .key("text") == "yo")).first else {
                    throw ScenarioFailure(message: "message yo was not saved", file: #filePath, line: #line)
                }
                try checkEqual(try titles("ANY messages == %@", yo), ["a"], "a to-many compared with an object")
                try checkEqual(try titles("messages CONTAINS %@", yo), ["a"], "membership")
                try checkEqual(try titles("NONE messages == %@", yo), ["b", "c", "d"], "NONE with an object")
            }
        },
        ConformanceScenario("fetch.predicates.floatingSumsIgnoreMemberOrder") { env in
            // Floating-point addition is not associative: 1e16 + 1 rounds back to 1e16, so
            // summed in one order three values give 0, in another 1. Each chat holds the same
            // three dates, joined in a different order; a store returns members in its own
            // order (key order, list order, insertion order), and the answer must not
            // depend on it.
            let seconds: [Double] = [1e16, 1, -1e16]
            /// A chat titled `title` holding messages dated `seconds`, joined in `order`.
            @discardableResult
            func chat(_ title: String, _ order: [Int], in context: ManagedObjectContext) -> Chat {
                let chat = Chat(context: context); chat.title = title
                let messages = seconds.map { value -> Message in
                    let message = Message(context: context); message.text = "\(title)\(value)"
                    message.sentAt = Date(timeIntervalSinceReferenceDate: value)
                    return message
                }
                for index in order { messages[index].chat = chat }
                return chat
            }
            _ = try env.seed { context in
                for (title, order) in [("x", [2, 0, 1]), ("y", [0, 1, 2]), ("z", [2, 1, 0])] { chat(title, order, in: context) }
                return []
            }
            // In ascending order: -1e16 + 1 rounds to -1e16, and the sum is 0.
            let context = env.newContext()
            try context.performAndWait {
                func titles(_ format: String) throws -> [String] {
                    try context.fetch(FetchRequest<Chat>(predicate: try FetchPredicate(format: format), sortKeys: [SortKey("title")])).map(\.title)
                }
                try checkEqual(try titles("messages.@sum.sentAt == 0"), ["x", "y", "z"], "@sum over the same values in any member order")
                try checkEqual(try titles("messages.@avg.sentAt == 0"), ["x", "y", "z"], "@avg over the same values in any member order")
                try checkEqual(try titles("messages.@sum.sentAt == 1"), [], "no order-dependent sum")
                // Unsaved chats are judged in memory, over their members in the context's order.
                chat("v", [2, 0, 1], in: context)
                chat("w", [0, 1, 2], in: context)
                try checkEqual(try titles("messages.@sum.sentAt == 0"), ["v", "w", "x", "y", "z"], "@sum of unsaved chats, in any member order")
            }
        },
    ]
}
