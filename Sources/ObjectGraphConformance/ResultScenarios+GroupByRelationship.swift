import Foundation
import ObjectGraph

/// Dictionary fetches grouped by a to-one relationship, as Core Data groups them: by
/// destination object, the group's column holding the destination's ID (as a to-one column
/// does), rows without a destination forming one group of their own, groups in the order of
/// their first member; a to-many relationship, which has many destinations, is refused.
extension ResultScenarios {
    static let groupByRelationship: [ConformanceScenario] = [
        ConformanceScenario("results.dictionaries.groupByToOneCountsAndSums") { env in
            try seedClasses(env)
            let context = env.newContext()
            try context.performAndWait {
                let classes = try context.fetch(FetchRequest<SchoolClass>(sortKeys: [SortKey("title")]))
                let (a, b) = (classes[0].objectID, classes[1].objectID)
                var request = FetchRequest<ManagedObject>(entityName: "Student")
                request.propertiesToFetch = [.key("schoolClass", as: "class"), .count(as: "n"), .sum("age", as: "years")]
                request.propertiesToGroupBy = ["schoolClass"]
                let rows = try context.fetchDictionaries(request)
                try checkEqual(rows.map { $0.objectID("class") }, [a, b, nil], "one group per class and one for no class, in order of their first member: \(rows)")
                try checkEqual(rows[0]["class"], .uri(a.uriRepresentation), "the group's key is its class's ID, as a to-one column holds it")
                try checkEqual(rows[2]["class"], .null, "the group without a class is keyed nil")
                try checkEqual(rows.map { $0["n"] }, [.integer(2), .integer(2), .integer(2)], "counts per class")
                try checkEqual(rows.map { $0["years"] }, [.integer(22), .integer(50), .integer(5)], "sums per class (a nil age adds nothing)")

                // With a predicate (stores that group natively filter and seek differently).
                request.predicate = try FetchPredicate(format: "age < 25")
                let young = try context.fetchDictionaries(request)
                try checkEqual(young.map { $0.objectID("class") }, [a, b, nil], "groups of the matching students: \(young)")
                try checkEqual(young.map { $0["n"] }, [.integer(2), .integer(1), .integer(1)], "counts of the matching students")

                // HAVING on the count; unsaved changes count as in every dictionary fetch.
                request.predicate = nil
                request.havingPredicate = .comparison(PredicateComparison(.keyPath("years"), .greaterThan, .constant(20)))
                try checkEqual(try context.fetchDictionaries(request).map { $0.objectID("class") }, [a, b], "HAVING filters the groups")
                request.havingPredicate = nil
                let cy = try context.fetch(FetchRequest<Student>(predicate: .key("name") == "Cy"))[0]
                cy.schoolClass = classes[1]
                let moved = try context.fetchDictionaries(request)
                try checkEqual(moved.map { $0["n"] }, [.integer(2), .integer(3), .integer(1)], "an unsaved move counts: \(moved)")
                try checkEqual(moved.map { $0.objectID("class") }, [a, b, nil], "the groups")
            }
        },
        ConformanceScenario("results.dictionaries.groupByToOneAndAnAttribute") { env in
            try seedMessages(env, chats: ["a", "b"], messages: [("x", 0), ("x", 1), ("x", nil), ("x", 0), ("y", nil), ("y", 1)])
            let context = env.newContext()
            try context.performAndWait {
                let chats = try context.fetch(FetchRequest<Chat>(sortKeys: [SortKey("title")])).map(\.objectID)
                var request = FetchRequest<ManagedObject>(entityName: "Message")
                request.propertiesToFetch = [.key("chat"), .key("text"), .count(as: "n")]
                request.propertiesToGroupBy = ["chat", "text"]
                let rows = try context.fetchDictionaries(request)
                let keys = rows.map { row -> String in
                    let chat = row.objectID("chat").map { chats.firstIndex(of: $0).map(String.init) ?? "?" } ?? "-"
                    guard case .string(let text)? = row["text"] else { return chat + "/?" }
                    return chat + "/" + text
                }
                try checkEqual(keys, ["0/x", "1/x", "-/x", "-/y", "1/y"], "one group per chat and text, in order of their first member: \(rows)")
                try checkEqual(rows.map { $0["n"] }, [.integer(2), .integer(1), .integer(1), .integer(1), .integer(1)], "counts per group")
            }
        },
        ConformanceScenario("results.dictionaries.groupByToOneCountsPerDestination") { env in
            // Every message in a chat (a shape a store may count from a relationship index),
            // then one in none.
            try seedChats(env, chats: [("a", [1, 2]), ("b", [3]), ("c", [])])
            var request = FetchRequest<ManagedObject>(entityName: "Message")
            request.propertiesToFetch = [.key("chat"), .count(as: "n")]
            request.propertiesToGroupBy = ["chat"]
            var chats: [ObjectID] = []
            let context = env.newContext()
            try context.performAndWait {
                chats = try context.fetch(FetchRequest<Chat>(sortKeys: [SortKey("title")])).map(\.objectID)
                let rows = try context.fetchDictionaries(request)
                try checkEqual(rows.map { $0.objectID("chat") }, [chats[0], chats[1]], "a group per chat with messages: \(rows)")
                try checkEqual(rows.map { $0["n"] }, [.integer(2), .integer(1)], "messages per chat")
                let stray = Message(context: context); stray.text = "stray"
                try context.save()
            }
            try env.reopen()
            let reopened = env.newContext()
            try reopened.performAndWait {
                let rows = try reopened.fetchDictionaries(request)
                try checkEqual(rows.map { $0.objectID("chat") }, [chats[0], chats[1], nil], "the message in no chat is a group of its own: \(rows)")
                try checkEqual(rows.map { $0["n"] }, [.integer(2), .integer(1), .integer(1)], "messages per chat")
            }
        },
        ConformanceScenario("results.dictionaries.groupByToOneThroughAKeyPath") { env in
            // Ada manages Bob, Bob manages Cy and Dee, Cy manages Eve: grouped by grand-manager.
            // Spots park vehicles of two entities (one table in some stores).
            let writer = env.newContext()
            try writer.performAndWait {
                var employees: [String: Employee] = [:]
                for (name, manager) in [("Ada", nil), ("Bob", "Ada"), ("Cy", "Bob"), ("Dee", "Bob"), ("Eve", "Cy")] as [(String, String?)] {
                    let employee = Employee(context: writer); employee.name = name
                    employee.manager = manager.flatMap { employees[$0] }
                    employees[name] = employee
                }
                let car = try writer.insertObject(entityName: "Car"); try car.setValue("car", forKey: "name")
                let truck = try writer.insertObject(entityName: "Truck"); try truck.setValue("truck", forKey: "name")
                for (label, vehicle) in [("1", car), ("2", nil), ("3", truck), ("4", nil)] as [(String, ManagedObject?)] {
                    let spot = try writer.insertObject(entityName: "Spot")
                    try spot.setValue(label, forKey: "label")
                    try spot.setValue(vehicle, forKey: "vehicle")
                }
                try writer.save()
            }
            try env.reopen()
            let context = env.newContext()
            try context.performAndWait {
                let employees = try context.fetch(FetchRequest<Employee>(sortKeys: [SortKey("name")]))
                var request = FetchRequest<ManagedObject>(entityName: "Employee")
                request.propertiesToFetch = [.key("manager.manager", as: "grand"), .count(as: "n")]
                request.propertiesToGroupBy = ["manager.manager"]
                let rows = try context.fetchDictionaries(request)
                try checkEqual(rows.map { $0.objectID("grand") }, [nil, employees[0].objectID, employees[1].objectID], "grouped by grand-manager, in order of the first member: \(rows)")
                try checkEqual(rows.map { $0["n"] }, [.integer(2), .integer(2), .integer(1)], "counts per grand-manager")

                let vehicles = try context.fetch(FetchRequest<ManagedObject>(entityName: "Vehicle", sortKeys: [SortKey("name")])).map(\.objectID)
                var spots = FetchRequest<ManagedObject>(entityName: "Spot")
                spots.propertiesToFetch = [.key("vehicle"), .count(as: "n")]
                spots.propertiesToGroupBy = ["vehicle"]
                let parked = try context.fetchDictionaries(spots)
                try checkEqual(parked.map { $0.objectID("vehicle") }, [vehicles[0], nil, vehicles[1]], "a group per vehicle, of its own entity: \(parked)")
                try checkEqual(parked.map { $0.objectID("vehicle")?.entityName }, ["Car", nil, "Truck"], "each ID names its destination's entity")
                try checkEqual(parked.map { $0["n"] }, [.integer(1), .integer(2), .integer(1)], "spots per vehicle")
            }
        },
        ConformanceScenario("results.dictionaries.groupByToManyIsRefused") { env in
            try seedChats(env, chats: [("a", [1, 2])])
            let context = env.newContext()
            try context.performAndWait {
                // Many destinations are no one key: each grouped every row by nil or a first member.
                for (entity, key) in [("Chat", "messages"), ("Chat", "members"), ("Message", "chat.messages"), ("Message", "chat.members")] {
                    var request = FetchRequest<ManagedObject>(entityName: entity)
                    request.propertiesToFetch = [.key(key), .count(as: "n")]
                    request.propertiesToGroupBy = [key]
                    let error = try FetchScenarios.checkInvalidFetch("grouping \(entity) by '\(key)'") { _ = try context.fetchDictionaries(request) }
                    try checkEqual(error.key, key, "the error names the key")
                    request.propertiesToFetch = [.count(as: "n")]
                    _ = try FetchScenarios.checkInvalidFetch("grouping \(entity) by '\(key)' without the column") { _ = try context.fetchDictionaries(request) }
                }
            }
        },
    ]

    /// Chats titled `chats` and messages (text, index of the chat or nil), saved at once in
    /// this order (so primary keys follow it); the store reopened.
    static func seedMessages(_ env: ScenarioEnvironment, chats titles: [String], messages: [(String, Int?)]) throws {
        let writer = env.newContext()
        try writer.performAndWait {
            let chats = titles.map { title -> Chat in
                let chat = Chat(context: writer); chat.title = title
                return chat
            }
            for (text, chat) in messages {
                let message = Message(context: writer); message.text = text
                message.chat = chat.map { chats[$0] }
            }
            try writer.save()
        }
        try env.reopen()
    }

    /// Classes A and B and six students, saved in this order: Ann (A, 10), Bo (B, 20),
    /// Cy (no class, 5), Di (A, 12), Ed (no class, no age), Flo (B, 30); the store reopened.
    static func seedClasses(_ env: ScenarioEnvironment) throws {
        let context = env.newContext()
        try context.performAndWait {
            let classes = ["A", "B"].map { title -> SchoolClass in
                let schoolClass = SchoolClass(context: context); schoolClass.title = title
                return schoolClass
            }
            let students: [(String, Int?, Int16?)] = [("Ann", 0, 10), ("Bo", 1, 20), ("Cy", nil, 5), ("Di", 0, 12), ("Ed", nil, nil), ("Flo", 1, 30)]
            for (name, schoolClass, age) in students {
                let student = Student(context: context)
                student.name = name
                student.age = age
                student.schoolClass = schoolClass.map { classes[$0] }
            }
            try context.save()
        }
        try env.reopen()
    }
}
