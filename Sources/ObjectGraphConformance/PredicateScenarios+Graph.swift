import Foundation
import ObjectGraph

/// Predicates over relationships, as format strings: to-many aggregates, SUBQUERY, ANY/ALL/NONE
/// (with their vacuous cases), key paths through two to-one steps, and comparisons with
/// objects, object IDs and `nil`.
extension PredicateScenarios {
    /// The saved school of the graph scenarios:
    ///
    /// | student | age | class   | subjects    | address     |
    /// |---------|-----|---------|-------------|-------------|
    /// | Ada     | 36  | Math    | Math, Logic | 1 Main St   |
    /// | Grace   | 85  | Physics | Logic       | 2 Side St   |
    /// | alan    | 41  | Math    | Math        | –           |
    /// | Bob     | nil | Math    | Math        | 3 Bob Rd    |
    /// | Zoe     | 19  | –       | –           | 4 Zoe Ln    |
    ///
    /// Classes Math, Physics and Empty (no students); subjects Logic, Art (no students) and
    /// Math; the address "5 Empty Ave" has no student.
    static func seedSchool(_ env: ScenarioEnvironment) throws {
        let context = env.newContext()
        try context.performAndWait {
            let classes = Dictionary(uniqueKeysWithValues: ["Math", "Physics", "Empty"].map { title -> (String, SchoolClass) in
                let c = SchoolClass(context: context); c.title = title; return (title, c)
            })
            let subjects = Dictionary(uniqueKeysWithValues: ["Logic", "Art", "Math"].map { name -> (String, Subject) in
                let s = Subject(context: context); s.name = name; return (name, s)
            })
            let rows: [(String, Int16?, String?, [String], String?)] = [
                ("Ada", 36, "Math", ["Math", "Logic"], "1 Main St"), ("Grace", 85, "Physics", ["Logic"], "2 Side St"),
                ("alan", 41, "Math", ["Math"], nil), ("Bob", nil, "Math", ["Math"], "3 Bob Rd"), ("Zoe", 19, nil, [], "4 Zoe Ln"),
            ]
            for (name, age, title, subjectNames, street) in rows {
                let student = Student(context: context)
                student.name = name
                student.age = age
                student.schoolClass = title.flatMap { classes[$0] }
                for subject in subjectNames { student.$subjects.add(subjects[subject]!) }
                if let street { let address = Address(context: context); address.street = street; student.address = address }
            }
            let lonely = Address(context: context); lonely.street = "5 Empty Ave"
            try context.save()
        }
    }

    /// Saves chats General (messages "hello" by Ann, "hi there" by Ben; members Ann, Ben),
    /// Random ("lol" by Ann; member Ann) and Quiet (nothing), and the message "orphan" with
    /// neither chat nor author.
    static func seedChats(_ env: ScenarioEnvironment) throws {
        let writer = env.newContext()
        try writer.performAndWait {
            let general = Chat(context: writer); general.title = "General"
            let random = Chat(context: writer); random.title = "Random"
            let quiet = Chat(context: writer); quiet.title = "Quiet"
            let ann = Member(context: writer); ann.name = "Ann"
            let ben = Member(context: writer); ben.name = "Ben"
            ann.$chats.add(general); ann.$chats.add(random); ben.$chats.add(general)
            for (text, chat, author) in [("hello", general, ann), ("hi there", general, ben), ("lol", random, ann)] as [(String, Chat, Member)] {
                let message = Message(context: writer); message.text = text; message.chat = chat; message.author = author
            }
            let orphan = Message(context: writer); orphan.text = "orphan"
            _ = (quiet, orphan)
            try writer.save()
        }
    }

    /// The values of `key` (a string attribute) of the `entity` objects matching `format`, sorted.
    static func matching(_ context: ManagedObjectContext, _ entity: String, _ key: String, _ format: String, _ arguments: [Any?], variables: [String: AttributeValue] = [:]) throws -> [String] {
        try context.performAndWait {
            // Parsed on the context's queue: arguments may be the context's managed objects.
            var request = FetchRequest<ManagedObject>(entityName: entity, predicate: try FetchPredicate(format: format, argumentArray: arguments))
            request.substitutionVariables = variables
            let objects = try context.fetch(request)
            try checkEqual(try context.count(for: request), objects.count, "count(for:) agrees with the fetch of '\(format)'")
            return try objects.map { try $0.value(forKey: key) as? String ?? "nil" }.sorted()
        }
    }

    /// Checks the sorted `key` values of the `entity` objects matching `format`.
    static func expect(_ context: ManagedObjectContext, _ entity: String, _ key: String, _ format: String, _ arguments: Any?..., are expected: [String], variables: [String: AttributeValue] = [:], file: String = #filePath, line: Int = #line) throws {
        try checkEqual(try matching(context, entity, key, format, arguments, variables: variables), expected.sorted(), format, file: file, line: line)
    }

    /// The ID of the object of `entity` whose `key` is `value`.
    static func objectID(_ context: ManagedObjectContext, _ entity: String, _ key: String, _ value: String) throws -> ObjectID {
        try context.performAndWait {
            guard let found = try context.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: entity, predicate: try FetchPredicate(format: "%K == %@", key, value))).first else {
                throw ScenarioFailure(message: "no \(entity) with \(key) = \(value)", file: #filePath, line: #line)
            }
            return found
        }
    }

    static let graph: [ConformanceScenario] = [
        ConformanceScenario("predicates.aggregates.countSumAvgMinMax") { env in
            try seedSchool(env)
            let context = env.newContext()
            let classes = { (format: String, expected: [String]) in try expect(context, "SchoolClass", "title", format, are: expected) }
            // Math: 36, 41, nil — aggregates skip nil; Physics: 85; Empty: no students.
            try classes("students.@count == 3", ["Math"])
            try classes("students.@count == 0", ["Empty"])
            try classes("students.@count > 0", ["Math", "Physics"])
            try classes("students.@sum.age == 77", ["Math"])
            try classes("students.@sum.age == 0", ["Empty"])  // the sum of nothing is 0
            try classes("students.@sum.age > 80", ["Physics"])
            try classes("students.@avg.age == 38.5", ["Math"])
            try classes("students.@avg.age == nil", ["Empty"])  // the mean of nothing is nil
            try classes("students.@avg.age > 50", ["Physics"])
            try classes("students.@min.age == 36", ["Math"])
            try classes("students.@max.age == 85", ["Physics"])
            try classes("students.@max.age < 50", ["Math"])
            try classes("students.@min.age == nil", ["Empty"])
            try classes("students.@max.age != nil", ["Math", "Physics"])
            let subjects = { (format: String, expected: [String]) in try expect(context, "Subject", "name", format, are: expected) }
            try subjects("students.@count == 0", ["Art"])
            try subjects("students.@sum.age == 77", ["Math"])
            try subjects("students.@max.age == 85", ["Logic"])
            let students = { (format: String, expected: [String]) in try expect(context, "Student", "name", format, are: expected) }
            try students("subjects.@count == 2", ["Ada"])
            try students("subjects.@count < 1", ["Zoe"])
            try students("subjects.@min.name == 'Logic'", ["Ada", "Grace"])  // @min/@max order strings too
            try students("subjects.@max.name == 'Math'", ["Ada", "Bob", "alan"])
            try students("schoolClass.students.@count >= 3", ["Ada", "Bob", "alan"])  // through a to-one
            try students("schoolClass.students.@count == nil", ["Zoe"])  // nil when the to-one is empty
            try students("age > schoolClass.students.@avg.age", ["alan"])  // a key path on both sides
        },
        ConformanceScenario("predicates.aggregates.subqueryCount") { env in
            try seedSchool(env)
            let context = env.newContext()
            let ada = try objectID(context, "Student", "name", "Ada")
            let classes = { (format: String, expected: [String]) in try expect(context, "SchoolClass", "title", format, are: expected) }
            try classes("SUBQUERY(students, $s, $s.age > 40).@count > 0", ["Math", "Physics"])
            try classes("SUBQUERY(students, $s, $s.age > 30 AND $s.name BEGINSWITH[c] 'a').@count == 2", ["Math"])
            try classes("SUBQUERY(students, $s, $s.age == nil).@count == 1", ["Math"])
            try classes("SUBQUERY(students, $s, ANY $s.subjects.name == 'Logic').@count >= 1", ["Math", "Physics"])
            try classes("SUBQUERY(students, $s, TRUEPREDICATE).@count == students.@count", ["Empty", "Math", "Physics"])
            try classes("SUBQUERY(students, $s, FALSEPREDICATE).@count == 0", ["Empty", "Math", "Physics"])
            try classes("SUBQUERY(students, $s, $s.subjects.@count == 1).@count == 0", ["Empty"])
            try context.performAndWait {
                let object = try context.existingObject(with: ada)
                try expect(context, "SchoolClass", "title", "SUBQUERY(students, $s, $s == %@).@count == 1", object, are: ["Math"])
                try expect(context, "SchoolClass", "title", "SUBQUERY(students, $s, $s == %@).@count == 1", ada, are: ["Math"])
            }
            try expect(context, "SchoolClass", "title", "SUBQUERY(students, $s, $s.age > $MIN).@count == 1", are: ["Math", "Physics"], variables: ["MIN": 40])
            try expect(context, "Student", "name", "SUBQUERY(subjects, $x, $x.name == 'Math').@count == 0", are: ["Grace", "Zoe"])
            try expect(context, "Student", "name", "SUBQUERY(schoolClass.students, $x, $x.age < 40).@count >= 1", are: ["Ada", "Bob", "alan"])
        },
        ConformanceScenario("predicates.quantifiers.anyAllNone") { env in
            try seedSchool(env)
            let context = env.newContext()
            let students = { (format: String, expected: [String]) in try expect(context, "Student", "name", format, are: expected) }
            try students("ANY subjects.name == 'Math'", ["Ada", "Bob", "alan"])
            try students("SOME subjects.name == 'Math'", ["Ada", "Bob", "alan"])
            try students("ALL subjects.name == 'Math'", ["Bob", "Zoe", "alan"])  // Zoe: vacuously true
            try students("NONE subjects.name == 'Math'", ["Grace", "Zoe"])  // Zoe: vacuously true
            try students("NOT ANY subjects.name == 'Math'", ["Grace", "Zoe"])
            try students("ANY subjects.name == 'Nothing'", [])
            try students("ALL subjects.name != 'Nothing'", ["Ada", "Bob", "Grace", "Zoe", "alan"])
            try students("ANY subjects.name IN {'Art', 'Logic'}", ["Ada", "Grace"])
            try students("ANY subjects.name BEGINSWITH[c] 'l'", ["Ada", "Grace"])
            try students("ANY schoolClass.students.name == 'Grace'", ["Grace"])  // to-one, then to-many
            try students("ALL schoolClass.students.age > 30", ["Grace", "Zoe"])  // Bob's nil age fails Math; Zoe has no class
            let classes = { (format: String, expected: [String]) in try expect(context, "SchoolClass", "title", format, are: expected) }
            try classes("ALL students.age > 30", ["Empty", "Physics"])  // nil > 30 is false
            try classes("ANY students.age == nil", ["Math"])
            try classes("ANY students.age != nil", ["Math", "Physics"])
            try classes("NONE students.age < 40", ["Empty", "Physics"])
            try classes("ANY students.age BETWEEN {40, 90}", ["Math", "Physics"])
            try classes("ANY students.name BEGINSWITH[c] 'A' AND ANY students.age > 80", [])
            try classes("ANY students.name BEGINSWITH[c] 'A' OR ANY students.age > 80", ["Math", "Physics"])
            try classes("ANY students.subjects.name == 'Logic'", ["Math", "Physics"])  // two to-many steps
            try expect(context, "Subject", "name", "ANY students.subjects.name == 'Logic'", are: ["Logic", "Math"])
            try expect(context, "Subject", "name", "ALL students.schoolClass.title == 'Math'", are: ["Art", "Math"])
        },
        ConformanceScenario("predicates.keyPaths.twoToOneSteps") { env in
            try seedSchool(env)
            let context = env.newContext()
            let math = try objectID(context, "SchoolClass", "title", "Math")
            let physics = try objectID(context, "SchoolClass", "title", "Physics")
            let streets = { (format: String, arguments: [Any?], expected: [String]) in
                try checkEqual(try matching(context, "Address", "street", format, arguments), expected, format)
            }
            try streets("student.schoolClass.title == 'Math'", [], ["1 Main St", "3 Bob Rd"])
            try streets("student.schoolClass.title == nil", [], ["4 Zoe Ln", "5 Empty Ave"])  // nil at either step
            try streets("student.schoolClass.title != 'Math'", [], ["2 Side St", "4 Zoe Ln", "5 Empty Ave"])
            try streets("student.schoolClass.title BEGINSWITH[c] 'p'", [], ["2 Side St"])
            try streets("student.schoolClass.title IN {'Physics', 'Art'}", [], ["2 Side St"])
            try context.performAndWait {
                try streets("student.schoolClass == %@", [try context.existingObject(with: math)], ["1 Main St", "3 Bob Rd"])  // a managed object
            }
            try streets("student.schoolClass == %@", [math], ["1 Main St", "3 Bob Rd"])  // its ID
            try streets("student.schoolClass != %@", [math], ["2 Side St", "4 Zoe Ln", "5 Empty Ave"])
            try streets("student.schoolClass == nil", [], ["4 Zoe Ln", "5 Empty Ave"])
            try streets("student.schoolClass != nil", [], ["1 Main St", "2 Side St", "3 Bob Rd"])
            try streets("student == nil", [], ["5 Empty Ave"])
            try streets("student.age > 40", [], ["2 Side St"])
            try streets("student.age == nil", [], ["3 Bob Rd", "5 Empty Ave"])  // Bob's nil age, and no student
            try streets("student.schoolClass IN %@", [[math, physics]], ["1 Main St", "2 Side St", "3 Bob Rd"])
            try streets("student.schoolClass.students.@count == 3", [], ["1 Main St", "3 Bob Rd"])
            try streets("ANY student.subjects.name == 'Logic'", [], ["1 Main St", "2 Side St"])
            try streets("student.address == SELF", [], ["1 Main St", "2 Side St", "3 Bob Rd", "4 Zoe Ln"])
            try streets("%K.%K.%K == %@", ["student", "schoolClass", "title", "Physics"], ["2 Side St"])  // %K per component
            try streets("%K == %@", ["student.schoolClass.title", "Physics"], ["2 Side St"])  // %K with a whole path
        },
        ConformanceScenario("predicates.keyPaths.objectsAndIDs") { env in
            try seedChats(env)
            try env.reopen()
            let context = env.newContext()
            let general = try objectID(context, "Chat", "title", "General")
            let random = try objectID(context, "Chat", "title", "Random")
            let ann = try objectID(context, "Member", "name", "Ann")
            let ben = try objectID(context, "Member", "name", "Ben")
            let hello = try objectID(context, "Message", "text", "hello")
            let lol = try objectID(context, "Message", "text", "lol")
            let orphan = try objectID(context, "Message", "text", "orphan")
            let texts = { (format: String, arguments: [Any?], expected: [String]) in
                try checkEqual(try matching(context, "Message", "text", format, arguments), expected, format)
            }
            try context.performAndWait {
                // Managed objects as arguments, as Core Data users pass them.
                let object = { (id: ObjectID) in try context.existingObject(with: id) }
                try texts("chat == %@", [try object(general)], ["hello", "hi there"])
                try texts("chat == %@ AND author == %@", [try object(general), try object(ann)], ["hello"])
                try texts("SELF == %@", [try object(hello)], ["hello"])
                try texts("chat IN %@", [[try object(general), try object(random)]], ["hello", "hi there", "lol"])
            }
            try texts("chat == %@", [general], ["hello", "hi there"])
            try texts("chat == nil", [], ["orphan"])
            try texts("chat != %@", [general], ["lol", "orphan"])  // an empty to-one is not General
            try texts("chat != nil", [], ["hello", "hi there", "lol"])
            try texts("chat IN %@", [[general, random]], ["hello", "hi there", "lol"])
            try texts("chat.title == 'General'", [], ["hello", "hi there"])
            try texts("chat == %@ AND author == %@", [general, ann], ["hello"])
            try texts("author.chats CONTAINS %@", [random], ["hello", "lol"])  // membership through a to-one
            try texts("ANY chat.members.name == 'Ben'", [], ["hello", "hi there"])
            try texts("SELF == %@", [hello], ["hello"])
            try texts("SELF != %@", [hello], ["hi there", "lol", "orphan"])
            try texts("SELF IN %@", [[hello, orphan]], ["hello", "orphan"])
            try texts("author == nil OR author == %@", [ben], ["hi there", "orphan"])
            let titles = { (format: String, arguments: [Any?], expected: [String]) in
                try checkEqual(try matching(context, "Chat", "title", format, arguments), expected, format)
            }
            try titles("messages CONTAINS %@", [lol], ["Random"])
            try titles("NOT messages CONTAINS %@", [lol], ["General", "Quiet"])
            try titles("members CONTAINS %@", [ann], ["General", "Random"])
            try titles("ANY messages == %@", [hello], ["General"])
            try titles("ANY messages.author == %@", [ben], ["General"])
            try titles("ALL messages.author == %@", [ann], ["Quiet", "Random"])  // Quiet: vacuously
            try titles("NONE messages.author == %@", [ann], ["Quiet"])
            try titles("messages.@count == 0", [], ["Quiet"])
            try titles("%K.@count == %d", ["members", 1], ["Random"])
        },
        // @sum and @avg of dates add up reference-date seconds: numbers, as in dictionary
        // fetches, compared with numbers (a sum typed as a date matched no date and was refused
        // against numbers). hello 100 s, hi there 200 s (General), lol -50 s (Random).
        ConformanceScenario("predicates.aggregates.sumOfDatesIsANumber") { env in
            try seedChats(env)
            let writer = env.newContext()
            let sent = try [("hello", 100.0), ("hi there", 200.0), ("lol", -50.0)].map { (try objectID(writer, "Message", "text", $0.0), $0.1) }
            try writer.performAndWait {
                for (id, seconds) in sent {
                    try writer.existingObject(with: id).setValue(Date(timeIntervalSinceReferenceDate: seconds), forKey: "sentAt")
                }
                try writer.save()
            }
            try env.reopen()
            let context = env.newContext()
            try expect(context, "Chat", "title", "messages.@sum.sentAt == 300", are: ["General"])
            try expect(context, "Chat", "title", "messages.@sum.sentAt < 0", are: ["Random"])
            try expect(context, "Chat", "title", "messages.@sum.sentAt == 0", are: ["Quiet"])  // no messages: 0
            try expect(context, "Chat", "title", "messages.@avg.sentAt == 150", are: ["General"])
            try expect(context, "Chat", "title", "messages.@max.sentAt > %@", Date(timeIntervalSinceReferenceDate: 150), are: ["General"])
            let error = try checkThrows(ObjectGraphError.self, "a sum of dates against a date") {
                _ = try matching(context, "Chat", "title", "messages.@sum.sentAt > %@", [Date(timeIntervalSinceReferenceDate: 0)])
            }
            try checkEqual(error.code, .invalidFetch, "code (\(error.message))")
        },
        // Objects (SELF, object IDs, relationships) compare only with objects or nil, by ==,
        // !=, IN and CONTAINS: anything else holds for nothing, and was answered as if it might
        // (`SELF == 5` matched nothing; `text == chat` matched rows whose text and chat were
        // both nil).
        ConformanceScenario("predicates.errors.objectsComparedWithValues") { env in
            try seedChats(env)
            try env.reopen()
            let context = env.newContext()
            let general = try objectID(context, "Chat", "title", "General")
            let hello = try objectID(context, "Message", "text", "hello")
            let invalid: [(String, String, [Any?])] = [
                ("Message", "SELF == 5", []), ("Message", "5 == SELF", []), ("Message", "SELF == 'hello'", []),
                ("Message", "SELF < %@", [hello]), ("Message", "SELF BEGINSWITH 'h'", []), ("Message", "SELF CONTAINS 'h'", []),
                ("Message", "text == SELF", []), ("Message", "text == chat", []), ("Message", "chat == text", []),
                ("Message", "text CONTAINS SELF", []), ("Message", "chat IN {1, 2}", []), ("Message", "chat IN %@", [["General"]]),
                ("Message", "chat > %@", [general]), ("Message", "chat BETWEEN %@", [[general, general]]),
                ("Chat", "messages CONTAINS 'hello'", []), ("Chat", "members CONTAINS 5", []),
            ]
            for (entity, format, arguments) in invalid {
                let error = try checkThrows(ObjectGraphError.self, "'\(format)' on \(entity)") {
                    _ = try matching(context, entity, "title", format, arguments)
                }
                try checkEqual(error.code, .invalidFetch, "code for '\(format)' (\(error.message))")
            }
            // Objects with objects and nil still compare.
            try checkEqual(try matching(context, "Message", "text", "chat IN %@", [[general, NSNull()]]), ["hello", "hi there", "orphan"], "an object or nil")
            try checkEqual(try matching(context, "Message", "text", "SELF != nil AND SELF == %@", [hello]), ["hello"], "SELF with nil and an object")
        },
    ]
}
