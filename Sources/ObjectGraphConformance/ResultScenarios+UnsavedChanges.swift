import Foundation
import ObjectGraph

/// Dictionary fetches in a context holding unsaved changes: the changes count where they
/// can alter the rows, and nowhere else change the answer or refuse the request.
extension ResultScenarios {
    static let unsavedChanges: [ConformanceScenario] = [
        ConformanceScenario("results.dictionaries.sortedByAColumnWithUnsavedChangesElsewhere") { env in
            try seedChats(env, chats: [("lunch", [1, 2, 3]), ("release", [4])])
            let context = env.newContext()
            try context.performAndWait {
                // Sort keys of a dictionary fetch name its columns ("n" is no attribute of Message).
                let request = messagesPerChatTitle(sortKeys: [SortKey("n"), SortKey("chat")])
                let expected: [FetchedRow] = [["chat": .string("release"), "n": .integer(1)], ["chat": .string("lunch"), "n": .integer(3)]]
                try checkEqual(try context.fetchDictionaries(request), expected, "groups sorted by their count")
                // An unsaved object of an entity the fetch does not read.
                let tag = Tag(context: context); tag.label = "unsaved"
                try checkEqual(try context.fetchDictionaries(request), expected, "the same rows with an unrelated unsaved change")
                var totals = FetchRequest<ManagedObject>(entityName: "Message", sortKeys: [SortKey("n")])
                totals.propertiesToFetch = [.count(as: "n")]
                try checkEqual(try context.fetchDictionaries(totals), [["n": .integer(4)]], "an aggregate over every message, sorted by its column")
            }
        },
    ]
}
