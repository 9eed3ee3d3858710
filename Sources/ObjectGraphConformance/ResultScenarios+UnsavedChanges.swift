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
        ConformanceScenario("results.dictionaries.valuesAreTheStoresUnlessUnsavedChangesCount") { env in
            // Loaded, and held, before another context saves: these objects keep older values.
            let (reader, loaded) = try FetchScenarios.seedPeopleLoadedBeforeAnotherSave(env)
            try reader.performAndWait {
                try checkEqual(loaded[0].age, 36, "the loaded object keeps its values (no merge)")
                var plain = FetchRequest<Student>(predicate: .key("age") > 90)
                plain.propertiesToFetch = [.key("name"), .key("age")]
                try checkEqual(try reader.fetchDictionaries(plain), [["name": .string("Ada"), "age": .integer(99)]], "a row holds the stored values its predicate matched")
                var withCount = plain
                withCount.propertiesToFetch = [.key("age"), .count(as: "n")]
                try checkEqual(try reader.fetchDictionaries(withCount), [["age": .integer(99), "n": .integer(1)]], "a column beside an aggregate too")

                // Unsaved changes: counted by default, the store's values without them.
                loaded[3].age = 20  // Grace, stored as 85
                var ages = FetchRequest<Student>(predicate: .key("name") == "Grace")
                ages.propertiesToFetch = [.key("age")]
                try checkEqual(try reader.fetchDictionaries(ages), [["age": .integer(20)]], "the unsaved value, pending changes included")
                try checkEqual(try reader.fetchDictionaries(plain), [["name": .string("Ada"), "age": .integer(99)]], "and Ada's stored one, unchanged here")
                var byAge = FetchRequest<Student>(predicate: .key("age") > 80, sortKeys: [SortKey("age")])
                byAge.propertiesToFetch = [.key("age"), .count(as: "n")]
                byAge.propertiesToGroupBy = ["age"]
                try checkEqual(try reader.fetchDictionaries(byAge), [["age": .integer(99), "n": .integer(1)]], "grouped: Grace no longer over 80, Ada by her stored age")
                ages.includesPendingChanges = false
                try checkEqual(try reader.fetchDictionaries(ages), [["age": .integer(85)]], "the stored value, pending changes left out")
                var grouped = ages
                grouped.propertiesToFetch = [.key("age"), .count(as: "n")]
                grouped.propertiesToGroupBy = ["age"]
                try checkEqual(try reader.fetchDictionaries(grouped), [["age": .integer(85), "n": .integer(1)]], "as a grouped fetch gives it")
                var mixed = ages
                mixed.propertiesToFetch = [.key("age"), .maximum("name", as: "last")]
                try checkEqual(try reader.fetchDictionaries(mixed), [["age": .integer(85), "last": .string("Grace")]], "and a column beside an aggregate")
            }
        },
    ]
}
