import Foundation
import ObjectGraph

/// Which columns a dictionary fetch gives and how its rows sort, as Core Data's
/// `propertiesToFetch` and sort descriptors do: every attribute when none is named, a to-one
/// relationship as its destination's ID, sort keys that are attributes but not columns.
extension ResultScenarios {
    static let columns: [ConformanceScenario] = [
        ConformanceScenario("results.dictionaries.everyStoredAttributeWhenNoColumnIsNamed") { env in
            try seedChats(env, chats: [("lunch", [2, 1]), ("release", [3])])
            let context = env.newContext()
            try context.performAndWait {
                let request = FetchRequest<ManagedObject>(entityName: "Message", sortKeys: [SortKey("text")])
                let rows = try context.fetchDictionaries(request)
                try checkEqual(rows.map(\.keys), Array(repeating: ["text", "sentAt"], count: 3), "the attributes in model order, no relationship")
                try checkEqual(rows.map { $0["text"] }, [.string("lunch-1"), .string("lunch-2"), .string("release-3")], "the texts, sorted")
                try checkEqual(rows.map { $0["sentAt"] }, [1.0, 2, 3].map { .date(Date(timeIntervalSince1970: $0 * 60)) }, "the dates")
                var filtered = request
                filtered.predicate = .key("text") == "lunch-2"
                try checkEqual(try context.fetchDictionaries(filtered), [["text": .string("lunch-2"), "sentAt": .date(Date(timeIntervalSince1970: 120))]], "one matching row")
            }
            let writer = env.newContext()
            try writer.performAndWait {
                let object = try writer.insertObject(entityName: "AllTypes")
                try object.setValue(Int64(7), forKey: "int64")
                try object.setValue("seven", forKey: "string")
                try object.setValue("not stored", forKey: "scratch")
                try writer.save()
            }
            try env.reopen()
            let reader = env.newContext()
            try reader.performAndWait {
                let rows = try reader.fetchDictionaries(FetchRequest<ManagedObject>(entityName: "AllTypes"))
                try checkEqual(rows.count, 1, "one object")
                let expected = ["int16", "int32", "int64", "double", "float", "decimal", "string", "bool", "date", "data", "uuid", "uri", "palette", "defaulted"]
                try checkEqual(rows[0].keys, expected, "every stored attribute, the transient left out")
                try checkEqual(rows[0]["int64"], .integer(7), "an integer")
                try checkEqual(rows[0]["string"], .string("seven"), "a string")
                try checkEqual(rows[0]["defaulted"], .integer(42), "a default")
                try checkEqual(rows[0]["double"], .null, "an unset attribute")
            }
        },
        ConformanceScenario("results.dictionaries.toOneColumnsHoldTheDestinationsID") { env in
            try seedChats(env, chats: [("lunch", [1, 2]), ("release", [3])])
            let writer = env.newContext()
            try writer.performAndWait {
                let stray = Message(context: writer); stray.text = "stray-0"
                let ada = Employee(context: writer); ada.name = "Ada"
                let bob = Employee(context: writer); bob.name = "Bob"; bob.manager = ada
                let cy = Employee(context: writer); cy.name = "Cy"; cy.manager = bob
                try writer.save()
            }
            try env.reopen()
            let context = env.newContext()
            try context.performAndWait {
                let chats = try context.fetch(FetchRequest<Chat>(sortKeys: [SortKey("title")]))
                var request = FetchRequest<ManagedObject>(entityName: "Message", sortKeys: [SortKey("text")])
                request.propertiesToFetch = [.key("text"), .key("chat"), .key("author", as: "by")]
                let rows = try context.fetchDictionaries(request)
                try checkEqual(rows.map { $0.objectID("chat") }, [chats[0].objectID, chats[0].objectID, chats[1].objectID, nil], "each message's chat, none for the stray")
                try checkEqual(rows[3]["chat"], .null, "an empty to-one is nil")
                try checkEqual(rows.map { $0["by"] }, Array(repeating: .null, count: 4), "no author")
                try checkEqual(rows[0]["chat"], .uri(chats[0].objectID.uriRepresentation), "an ID travels as its URI")
                var distinct = FetchRequest<ManagedObject>(entityName: "Message")
                distinct.propertiesToFetch = [.key("chat")]
                distinct.returnsDistinctResults = true
                try checkEqual(Set(try context.fetchDictionaries(distinct).map { $0.objectID("chat") }), [chats[0].objectID, chats[1].objectID, nil], "distinct chats")

                let employees = try context.fetch(FetchRequest<Employee>(sortKeys: [SortKey("name")]))
                var chain = FetchRequest<ManagedObject>(entityName: "Employee", sortKeys: [SortKey("name")])
                chain.propertiesToFetch = [.key("name"), .key("manager.manager", as: "grand")]
                try checkEqual(try context.fetchDictionaries(chain).map { $0.objectID("grand") }, [nil, nil, employees[0].objectID], "a key path of to-ones ending in one")

                // Unsaved changes count: a message moved to an unsaved chat names its temporary ID.
                let moved = try context.fetch(FetchRequest<Message>(predicate: .key("text") == "release-3"))[0]
                let unsaved = Chat(context: context); unsaved.title = "new"
                moved.chat = unsaved
                try checkEqual(try context.fetchDictionaries(request).map { $0.objectID("chat") }, [chats[0].objectID, chats[0].objectID, unsaved.objectID, nil], "the unsaved destination")
                request.includesPendingChanges = false
                try checkEqual(try context.fetchDictionaries(request)[2].objectID("chat"), chats[1].objectID, "the stored destination, pending changes left out")

                var toMany = FetchRequest<ManagedObject>(entityName: "Chat")
                toMany.propertiesToFetch = [.key("title"), .key("messages")]
                try checkEqual(try FetchScenarios.checkInvalidFetch("a to-many column") { _ = try context.fetchDictionaries(toMany) }.key, "messages", "the error names the key")
                var throughMany = FetchRequest<ManagedObject>(entityName: "Chat")
                throughMany.propertiesToFetch = [.key("messages.author", as: "authors")]
                try checkEqual(try FetchScenarios.checkInvalidFetch("a to-one through a to-many") { _ = try context.fetchDictionaries(throughMany) }.key, "messages.author", "the error names the key")
                var aggregated = FetchRequest<ManagedObject>(entityName: "Message")
                aggregated.propertiesToFetch = [.minimum("chat", as: "first")]
                _ = try FetchScenarios.checkInvalidFetch("an aggregate of a relationship") { _ = try context.fetchDictionaries(aggregated) }
                var sorted = FetchRequest<ManagedObject>(entityName: "Message", sortKeys: [SortKey("chat")])
                sorted.propertiesToFetch = [.key("chat")]
                _ = try FetchScenarios.checkInvalidFetch("sorting by an ID column") { _ = try context.fetchDictionaries(sorted) }
                var grouped = FetchRequest<ManagedObject>(entityName: "Message")
                grouped.propertiesToFetch = [.key("chat"), .count(as: "n")]
                grouped.propertiesToGroupBy = ["chat.title"]
                _ = try FetchScenarios.checkInvalidFetch("an ID column that is no group key") { _ = try context.fetchDictionaries(grouped) }
            }
        },
        ConformanceScenario("results.dictionaries.sortedByAttributesThatAreNotColumns") { env in
            try FetchScenarios.seedPeople(env)
            try env.reopen()
            let context = env.newContext()
            try context.performAndWait {
                func names(_ sortKeys: [SortKey]) throws -> [AttributeValue?] {
                    var request = FetchRequest<ManagedObject>(entityName: "Student", sortKeys: sortKeys)
                    request.propertiesToFetch = [.key("name")]
                    return try context.fetchDictionaries(request).map { $0["name"] }
                }
                func strings(_ values: [String]) -> [AttributeValue?] { values.map { .string($0) } }
                try checkEqual(try names([SortKey("age"), SortKey("name")]), strings(["Barbara", "Ada", "Linus", "alan", "Edsger", "Grace"]), "by age, not a column")
                try checkEqual(try names([SortKey("schoolClass.title"), SortKey("name")]), strings(["Barbara", "Edsger", "Linus", "Ada", "alan", "Grace"]), "through a to-one")
                var mixed = FetchRequest<ManagedObject>(entityName: "Student", sortKeys: [SortKey("class", ascending: false), SortKey("age", ascending: false)])
                mixed.propertiesToFetch = [.key("schoolClass.title", as: "class"), .key("name")]
                try checkEqual(try context.fetchDictionaries(mixed).map { $0["name"] }, strings(["Grace", "alan", "Ada", "Edsger", "Linus", "Barbara"]), "a column, then an attribute")
                mixed.fetchOffset = 1
                mixed.fetchLimit = 2
                try checkEqual(try context.fetchDictionaries(mixed).map { $0["name"] }, strings(["alan", "Ada"]), "a page of the sorted rows")
                var distinct = FetchRequest<ManagedObject>(entityName: "Student", sortKeys: [SortKey("age", ascending: false)])
                distinct.propertiesToFetch = [.key("schoolClass.title", as: "class")]
                distinct.returnsDistinctResults = true
                try checkEqual(try context.fetchDictionaries(distinct).map { $0["class"] }, [.string("Physics"), .null, .string("Math")], "distinct rows in the order of their first object")

                // Unsaved changes to what the sort reads count.
                let physics = try context.fetch(FetchRequest<SchoolClass>(predicate: .key("title") == "Physics"))[0]
                physics.title = "Art"
                try checkEqual(try names([SortKey("schoolClass.title"), SortKey("name")]), strings(["Barbara", "Edsger", "Linus", "Grace", "Ada", "alan"]), "a class renamed without saving")
                let grace = try context.fetch(FetchRequest<Student>(predicate: .key("name") == "Grace"))[0]
                grace.age = 1
                try checkEqual(try names([SortKey("age"), SortKey("name")]), strings(["Barbara", "Grace", "Ada", "Linus", "alan", "Edsger"]), "an age changed without saving")

                _ = try FetchScenarios.checkInvalidFetch("an unknown sort key") { _ = try names([SortKey("nope")]) }
                _ = try FetchScenarios.checkInvalidFetch("a sort key through a to-many") { _ = try names([SortKey("subjects.name")]) }
                var grouped = FetchRequest<ManagedObject>(entityName: "Student", sortKeys: [SortKey("age")])
                grouped.propertiesToFetch = [.key("schoolClass.title", as: "class"), .count(as: "n")]
                grouped.propertiesToGroupBy = ["schoolClass.title"]
                try checkEqual(try FetchScenarios.checkInvalidFetch("a grouped fetch sorted by no column") { _ = try context.fetchDictionaries(grouped) }.key, "age", "the error names the key")
                grouped.sortKeys = [SortKey("n", ascending: false), SortKey("class")]
                try checkEqual(try context.fetchDictionaries(grouped).map { $0["class"] }, [.null, .string("Math"), .string("Art")], "grouped rows sort by their columns")
                var totals = FetchRequest<ManagedObject>(entityName: "Student", sortKeys: [SortKey("name")])
                totals.propertiesToFetch = [.count(as: "n")]
                _ = try FetchScenarios.checkInvalidFetch("one row of aggregates sorted by no column") { _ = try context.fetchDictionaries(totals) }
            }
        },
    ]
}
