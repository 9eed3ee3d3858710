import Foundation
import ObjectGraph

/// Fetching: predicates built in code, nil semantics, key paths through to-one and to-many
/// relationships, sorting, paging, pending changes, sub-entities, counts, and malformed
/// requests. Every store must give exactly these answers (the shared evaluator's).
/// Sorting, paging and pending changes are in FetchScenarios+Results.swift.
enum FetchScenarios {
    static let all: [ConformanceScenario] = predicates + results + refetch + differential + randomPredicates + predicateSoup + requestSoup + propertyValues + memberPaths

    /// Saves six students (natural name order: Ada, Barbara, Edsger, Grace, Linus, alan):
    ///
    /// | name    | age | class   | subjects    |
    /// |---------|-----|---------|-------------|
    /// | Ada     | 36  | Math    | Math, Logic |
    /// | Grace   | 85  | Physics | Logic       |
    /// | alan    | 41  | Math    | Math        |
    /// | Barbara | nil | –       | –           |
    /// | Edsger  | 72  | –       | –           |
    /// | Linus   | 36  | –       | –           |
    ///
    /// inserted in that order (so Ada's primary key is below Linus's).
    static func seedPeople(_ env: ScenarioEnvironment) throws {
        let context = env.newContext()
        try context.performAndWait {
            let math = SchoolClass(context: context); math.title = "Math"
            let physics = SchoolClass(context: context); physics.title = "Physics"
            let mathSubject = Subject(context: context); mathSubject.name = "Math"
            let logic = Subject(context: context); logic.name = "Logic"
            let rows: [(String, Int16?, SchoolClass?, [Subject])] = [
                ("Ada", 36, math, [mathSubject, logic]), ("Grace", 85, physics, [logic]), ("alan", 41, math, [mathSubject]),
                ("Barbara", nil, nil, []), ("Edsger", 72, nil, []), ("Linus", 36, nil, []),
            ]
            for (name, age, schoolClass, subjects) in rows {
                let student = Student(context: context)
                student.name = name
                student.age = age
                student.schoolClass = schoolClass
                for subject in subjects { student.$subjects.add(subject) }
            }
            try context.save()
        }
    }

    /// ``seedPeople(_:)``, then a context that loads every student (in name order, with their
    /// ages and classes) before another context saves Ada's age as 99. The loaded objects,
    /// held by the caller, keep their older values (nothing merges): Ada still reads 36.
    static func seedPeopleLoadedBeforeAnotherSave(_ env: ScenarioEnvironment) throws -> (reader: ManagedObjectContext, loaded: [Student]) {
        try seedPeople(env)
        let reader = env.newContext()
        let loaded = try reader.performAndWait { () throws -> [Student] in
            let students = try reader.fetch(FetchRequest<Student>(sortKeys: [SortKey("name")]))
            for student in students { _ = (student.age, student.schoolClass?.title) }
            return students
        }
        let writer = env.newContext()
        try writer.performAndWait {
            try writer.fetch(FetchRequest<Student>(predicate: .key("name") == "Ada"))[0].age = 99
            try writer.save()
        }
        return (reader, loaded)
    }

    /// A key path expression, for builder methods (`key("name").beginsWith("A")`) where a
    /// leading-dot `.key` has no contextual type to resolve against.
    static func key(_ path: String) -> ObjectGraph.PredicateOperand { .keyPath(path) }

    /// Names of the students matching `predicate`, in `order` (natural name order by default).
    static func names(_ context: ManagedObjectContext, _ predicate: FetchPredicate?, _ order: [SortKey] = [SortKey("name")]) throws -> [String] {
        try context.fetch(FetchRequest<Student>(predicate: predicate, sortKeys: order)).map(\.name)
    }

    /// Checks the names of the students `predicate` matches, and that count(for:) agrees.
    static func expectNames(_ context: ManagedObjectContext, _ predicate: FetchPredicate, _ expected: [String], _ label: String, file: String = #filePath, line: Int = #line) throws {
        try checkEqual(try names(context, predicate), expected, label, file: file, line: line)
        try checkEqual(try context.count(for: FetchRequest<Student>(predicate: predicate)), expected.count, "count(for:) of \(label)", file: file, line: line)
    }

    /// Checks the labels of the tags `predicate` matches.
    static func expectLabels(_ context: ManagedObjectContext, _ predicate: FetchPredicate, _ expected: Set<String>, _ label: String, file: String = #filePath, line: Int = #line) throws {
        try checkEqual(try labels(context, predicate), expected, label, file: file, line: line)
    }

    /// Labels of the tags matching `predicate`, as a set.
    static func labels(_ context: ManagedObjectContext, _ predicate: FetchPredicate) throws -> Set<String> {
        Set(try context.fetch(FetchRequest<Tag>(predicate: predicate)).map(\.label))
    }

    /// Fails unless `body` throws an ``ObjectGraphError`` with code `.invalidFetch`; returns it.
    @discardableResult
    static func checkInvalidFetch(_ what: String, file: String = #filePath, line: Int = #line, _ body: () throws -> Void) throws -> ObjectGraphError {
        let error = try checkThrows(ObjectGraphError.self, what, file: file, line: line, body)
        try checkEqual(error.code, .invalidFetch, "code of \(what) (\(error.message))", file: file, line: line)
        return error
    }

    static let predicates: [ConformanceScenario] = [
        ConformanceScenario("fetch.predicates.comparisons") { env in
            try seedPeople(env)
            let context = env.newContext()
            try context.performAndWait {
                try expectNames(context, .key("name") == "Ada", ["Ada"], "name == Ada")
                try expectNames(context, .key("name") != "Ada", ["Barbara", "Edsger", "Grace", "Linus", "alan"], "name != Ada")
                try expectNames(context, .key("age") < 40, ["Ada", "Linus"], "age < 40")
                try expectNames(context, .key("age") <= 41, ["Ada", "Linus", "alan"], "age <= 41")
                try expectNames(context, .key("age") > 41, ["Edsger", "Grace"], "age > 41")
                try expectNames(context, .key("age") >= 72, ["Edsger", "Grace"], "age >= 72")
                try expectNames(context, .key("age") != 36, ["Barbara", "Edsger", "Grace", "alan"], "age != 36 (nil is not 36)")
                try expectNames(context, key("name").isIn(["Ada", "Grace", "Nobody"]), ["Ada", "Grace"], "name IN")
                try expectNames(context, key("age").isIn([36, 85]), ["Ada", "Grace", "Linus"], "age IN")
                try expectNames(context, key("age").between(36, 41), ["Ada", "Linus", "alan"], "age BETWEEN 36 AND 41 (inclusive)")
                try expectNames(context, .key("name") < "B", ["Ada"], "strings order by Unicode scalars: 'alan' > 'B'")
                try expectNames(context, .key("age") == 36.0, ["Ada", "Linus"], "an integer attribute equals a Double constant")
                try expectNames(context, .key("age") < 36.5, ["Ada", "Linus"], "and compares with a fractional one")
            }
        },
        ConformanceScenario("fetch.predicates.stringOperators") { env in
            let context = env.newContext()
            try context.performAndWait {
                for label in ["Crème brûlée", "creme fraiche", "CREAM", "apple pie", "Apple", "a*b?c", "straße", "Ünïcödé"] {
                    let tag = Tag(context: context); tag.label = label
                }
                try context.save()
                let cd: StringComparisonOptions = [.caseInsensitive, .diacriticInsensitive]
                try expectLabels(context, key("label").beginsWith("cr"), ["creme fraiche"], "BEGINSWITH")
                try expectLabels(context, key("label").beginsWith("cr", options: .caseInsensitive), ["Crème brûlée", "creme fraiche", "CREAM"], "BEGINSWITH[c]")
                try expectLabels(context, key("label").beginsWith("creme", options: cd), ["Crème brûlée", "creme fraiche"], "BEGINSWITH[cd]")
                try expectLabels(context, key("label").beginsWith("crème", options: .diacriticInsensitive), ["creme fraiche"], "BEGINSWITH[d] stays case-sensitive")
                try expectLabels(context, key("label").endsWith("pie"), ["apple pie"], "ENDSWITH")
                try expectLabels(context, key("label").endsWith("LÉE", options: cd), ["Crème brûlée"], "ENDSWITH[cd]")
                try expectLabels(context, key("label").contains("em"), ["creme fraiche"], "CONTAINS")
                try expectLabels(context, key("label").contains("EM", options: .caseInsensitive), ["creme fraiche"], "CONTAINS[c]")
                try expectLabels(context, key("label").contains("em", options: cd), ["Crème brûlée", "creme fraiche"], "CONTAINS[cd]")
                try expectLabels(context, key("label").like("apple*"), ["apple pie"], "LIKE with *")
                try expectLabels(context, key("label").like("?pple"), ["Apple"], "LIKE with ?")
                try expectLabels(context, key("label").like("*e"), ["Crème brûlée", "creme fraiche", "Apple", "apple pie", "straße"], "LIKE *e")
                try expectLabels(context, key("label").like("*e", options: .diacriticInsensitive), ["Crème brûlée", "creme fraiche", "Apple", "apple pie", "straße", "Ünïcödé"], "LIKE[d] *e")
                try expectLabels(context, key("label").like("cream", options: .caseInsensitive), ["CREAM"], "LIKE[c] matches the whole string")
                try expectLabels(context, key("label").like("a*b?c"), ["a*b?c"], "LIKE treats other characters literally")
                try expectLabels(context, key("label").matches("[A-Z][a-z]+"), ["Apple"], "MATCHES the whole string")
                try expectLabels(context, key("label").matches("c.*e", options: .caseInsensitive), ["Crème brûlée", "creme fraiche"], "MATCHES[c]")
                try expectLabels(context, key("label").matches("a\\*b\\?c"), ["a*b?c"], "MATCHES with escapes")
                try expectLabels(context, .comparison(PredicateComparison(.key("label"), .equal, .constant("STRASSE"), options: .caseInsensitive)), ["straße"], "==[c] folds ß to ss")
                try expectLabels(context, .comparison(PredicateComparison(.key("label"), .equal, .constant("unicode"), options: cd)), ["Ünïcödé"], "==[cd]")
                try expectLabels(context, .key("label") == "cream", [], "== is case-sensitive")
            }
        },
        ConformanceScenario("fetch.predicates.logicalOperators") { env in
            try seedPeople(env)
            let context = env.newContext()
            try context.performAndWait {
                try expectNames(context, .key("age") >= 36 && key("name").beginsWith("A"), ["Ada"], "AND")
                try expectNames(context, .key("name") == "Ada" || .key("age") > 80, ["Ada", "Grace"], "OR")
                try expectNames(context, !(.key("age") < 40), ["Barbara", "Edsger", "Grace", "alan"], "NOT (age < 40) holds for nil age: nil < 40 is false")
                try expectNames(context, !(.key("name") == "Ada"), ["Barbara", "Edsger", "Grace", "Linus", "alan"], "NOT ==")
                try expectNames(context, (.key("age") < 40 || .key("age") > 80) && !key("name").beginsWith("L"), ["Ada", "Grace"], "nested")
                try expectNames(context, .key("age") > 30 && .key("age") < 80 && .key("name") != "alan", ["Ada", "Edsger", "Linus"], "three-way AND")
                try expectNames(context, .truePredicate, ["Ada", "Barbara", "Edsger", "Grace", "Linus", "alan"], "TRUEPREDICATE")
                try expectNames(context, .falsePredicate, [], "FALSEPREDICATE")
                try expectNames(context, .key("name") == "Ada" && .falsePredicate, [], "AND with false")
                try expectNames(context, .and([]), ["Ada", "Barbara", "Edsger", "Grace", "Linus", "alan"], "an empty AND holds")
                try expectNames(context, .or([]), [], "an empty OR does not")
            }
        },
        ConformanceScenario("fetch.predicates.nilSemantics") { env in
            try seedPeople(env)
            let context = env.newContext()
            try context.performAndWait {
                let mathID = try context.fetchObjectIDs(FetchRequest<SchoolClass>(predicate: .key("title") == "Math"))[0]
                try expectNames(context, .key("age") == nil, ["Barbara"], "== nil matches a missing value")
                try expectNames(context, .key("age") != nil, ["Ada", "Edsger", "Grace", "Linus", "alan"], "!= nil matches present values")
                try expectNames(context, .key("age") < 100, ["Ada", "Edsger", "Grace", "Linus", "alan"], "< with nil is false")
                try expectNames(context, .key("age") > 0, ["Ada", "Edsger", "Grace", "Linus", "alan"], "> with nil is false")
                try expectNames(context, key("age").between(0, 200), ["Ada", "Edsger", "Grace", "Linus", "alan"], "BETWEEN with nil is false")
                try expectNames(context, key("age").isIn([36, 85]) || .key("age") == nil, ["Ada", "Barbara", "Grace", "Linus"], "IN or nil")
                try expectNames(context, .key("name") == nil, [], "a required attribute is never nil")
                try expectNames(context, .key("schoolClass") == nil, ["Barbara", "Edsger", "Linus"], "an empty to-one equals nil")
                try expectNames(context, .key("schoolClass") == mathID, ["Ada", "alan"], "a to-one equals an object")
                try expectNames(context, !(.key("schoolClass") == nil), ["Ada", "Grace", "alan"], "a set to-one is not nil")
                try expectNames(context, .key("schoolClass.title") == nil, ["Barbara", "Edsger", "Linus"], "a key path through an empty to-one is nil")
            }
        },
        // `toOne == object` counts and fetches take a path of their own (left uncompiled by
        // the context; LMDB counts it from the inverse's members): same answers as any other.
        ConformanceScenario("fetch.predicates.toOneEqualsObject") { env in
            try seedPeople(env)
            let context = env.newContext()
            try context.performAndWait {
                let mathID = try context.fetchObjectIDs(FetchRequest<SchoolClass>(predicate: .key("title") == "Math"))[0]
                let mathSubjectID = try context.fetchObjectIDs(FetchRequest<Subject>(predicate: .key("name") == "Math"))[0]
                try expectNames(context, .key("schoolClass") == mathID, ["Ada", "alan"], "== an object")
                try expectNames(context, .key("schoolClass") != mathID, ["Barbara", "Edsger", "Grace", "Linus"], "!= an object, nil included")
                let empty = SchoolClass(context: context); empty.title = "Empty"
                try context.save()
                try expectNames(context, .key("schoolClass") == empty.objectID, [], "== an object nothing points at")
                try checkEqual(try context.count(for: FetchRequest<ManagedObject>(entityName: "Student", predicate: .key("schoolClass") == mathID)), 2, "by entity name")
                // Unsaved changes count, as in any fetch.
                let newcomer = Student(context: context); newcomer.name = "Niklaus"; newcomer.schoolClass = context.object(with: mathID) as? SchoolClass
                let ada = try context.fetch(FetchRequest<Student>(predicate: .key("name") == "Ada"))[0]
                ada.schoolClass = empty
                try expectNames(context, .key("schoolClass") == mathID, ["Niklaus", "alan"], "with an insert and a change unsaved")
                try expectNames(context, .key("schoolClass") == empty.objectID, ["Ada"], "the changed one where it went")
                try context.save()
                let reader = env.newContext()
                try checkEqual(try reader.performAndWait { try reader.count(for: FetchRequest<Student>(predicate: .key("schoolClass") == mathID)) }, 2, "saved, in a new context")
                // Shapes close to it that do not compile are still rejected, counted or fetched.
                try checkInvalidFetch("a to-many compared with an object, without ANY") { _ = try context.count(for: FetchRequest<Student>(predicate: .key("subjects") == mathSubjectID)) }
                try checkInvalidFetch("an attribute compared with an object") { _ = try context.count(for: FetchRequest<Student>(predicate: .key("name") == mathID)) }
                try checkInvalidFetch("an attribute after a to-one, compared with an object") { _ = try context.fetch(FetchRequest<Student>(predicate: .key("schoolClass.title") == mathID)) }
                try checkInvalidFetch("an unknown to-one compared with an object") { _ = try context.count(for: FetchRequest<Student>(predicate: .key("klass") == mathID)) }
            }
        },
        ConformanceScenario("fetch.predicates.keyPathThroughToOne") { env in
            try seedPeople(env)
            let context = env.newContext()
            try context.performAndWait {
                try expectNames(context, .key("schoolClass.title") == "Math", ["Ada", "alan"], "schoolClass.title == Math")
                try expectNames(context, key("schoolClass.title").beginsWith("P"), ["Grace"], "schoolClass.title BEGINSWITH P")
                try expectNames(context, .key("schoolClass.title") != "Math", ["Barbara", "Edsger", "Grace", "Linus"], "!= includes students without a class")
                try expectNames(context, .key("schoolClass.title") == "Math" && .key("age") > 40, ["alan"], "combined with an attribute")
                let addressless = try context.count(for: FetchRequest<Student>(predicate: .key("address.street") == nil))
                try checkEqual(addressless, 6, "a one-to-one key path")
            }
        },
        ConformanceScenario("fetch.predicates.anyAllNoneOverToMany") { env in
            try seedPeople(env)
            let context = env.newContext()
            try context.performAndWait {
                try expectNames(context, FetchPredicate.any("subjects.name", .equal, "Math"), ["Ada", "alan"], "ANY subjects.name == Math")
                try expectNames(context, FetchPredicate.any("subjects.name", .equal, "Logic"), ["Ada", "Grace"], "ANY subjects.name == Logic")
                try expectNames(context, FetchPredicate.any("subjects.name", .beginsWith, "m", options: .caseInsensitive), ["Ada", "alan"], "ANY with a string operator")
                try expectNames(context, FetchPredicate.none("subjects.name", .equal, "Math"), ["Barbara", "Edsger", "Grace", "Linus"], "NONE")
                try expectNames(context, FetchPredicate.all("subjects.name", .equal, "Logic"), ["Barbara", "Edsger", "Grace", "Linus"], "ALL (vacuously true without subjects)")
                try expectNames(context, FetchPredicate.any("subjects.name", .equal, "Math") && .key("age") < 40, ["Ada"], "ANY combined")
                try expectNames(context, .key("subjects.@count") == 0, ["Barbara", "Edsger", "Linus"], "@count == 0")
                try expectNames(context, .key("subjects.@count") >= 2, ["Ada"], "@count >= 2")
                let subjects = try context.fetch(FetchRequest<Subject>(predicate: .any("students.name", .equal, "Ada"), sortKeys: [SortKey("name")]))
                try checkEqual(subjects.map(\.name), ["Logic", "Math"], "ANY from the other side of a many-to-many")
                let crowded = try context.fetch(FetchRequest<SchoolClass>(predicate: .any("students.age", .greaterThan, 80)))
                try checkEqual(crowded.map(\.title), ["Physics"], "ANY over a one-to-many")
                try checkInvalidFetch("a to-many key path without ANY") { _ = try names(context, .key("subjects.name") == "Math") }
                try checkInvalidFetch("ANY over a to-one key path") { _ = try names(context, .any("schoolClass.title", .equal, "Math")) }
            }
        },
        ConformanceScenario("fetch.predicates.otherAttributeTypes") { env in
            let base = Date(timeIntervalSinceReferenceDate: 700_000_000)
            let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
            let context = env.newContext()
            let ids = try context.performAndWait { () throws -> [ObjectID] in
                let rows: [[String: Any]] = [
                    ["double": 2.0, "int32": 1, "decimal": Decimal(string: "1.25")!, "bool": true, "date": base, "uuid": uuid, "data": Data([1, 2])],
                    ["double": 2.5, "int32": 2, "decimal": Decimal(string: "2.50")!, "bool": false, "date": base.addingTimeInterval(0.5), "data": Data([1, 3])],
                    ["double": -1.0, "int32": 3, "date": base.addingTimeInterval(-86_400)],
                ]
                var objects: [ManagedObject] = []
                for row in rows {
                    let object = try context.insertObject(entityName: "AllTypes")
                    for (key, value) in row { try object.setValue(value, forKey: key) }
                    objects.append(object)
                }
                try context.save()
                return objects.map(\.objectID)
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                func matching(_ predicate: FetchPredicate) throws -> [ObjectID] {
                    try fresh.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: "AllTypes", predicate: predicate))
                }
                try checkEqual(try matching(.key("double") == 2), [ids[0]], "a double equals an integer constant")
                try checkEqual(try matching(.key("double") > 2), [ids[1]], "double > 2")
                try checkEqual(try matching(.key("int32") < 2.5), [ids[0], ids[1]], "int32 < 2.5")
                try checkEqual(try matching(.key("decimal") == Decimal(string: "2.5")!), [ids[1]], "decimals compare by value (2.50 == 2.5)")
                try checkEqual(try matching(.key("decimal") > 1.3), [ids[1]], "a decimal against a double")
                try checkEqual(try matching(.key("bool") == true), [ids[0]], "bool == true")
                try checkEqual(try matching(.key("bool") != true), [ids[1], ids[2]], "bool != true (nil included)")
                try checkEqual(try matching(.key("date") > base), [ids[1]], "dates compare with sub-second precision")
                try checkEqual(try matching(key("date").between(base.addingTimeInterval(-86_400), base)), [ids[0], ids[2]], "date BETWEEN")
                try checkEqual(try matching(.key("uuid") == uuid), [ids[0]], "uuid ==")
                try checkEqual(try matching(.key("data") == Data([1, 3])), [ids[1]], "data ==")
                try checkEqual(try matching(.key("data") < Data([1, 3])), [ids[0]], "data orders bytewise")
            }
        },
        ConformanceScenario("fetch.errors.unknownKeyPath") { env in
            try seedPeople(env)
            let context = env.newContext()
            try context.performAndWait {
                let unknown = try checkInvalidFetch("an unknown key") { _ = try names(context, .key("nickname") == "x") }
                try checkEqual(unknown.key, "nickname", "the error names the key path")
                try check(unknown.message.contains("Student") && unknown.message.contains("nickname"), "the message names entity and key: \(unknown.message)")
                let nested = try checkInvalidFetch("an unknown key after a relationship") { _ = try names(context, .key("schoolClass.room") == 1) }
                try check(nested.message.contains("SchoolClass") && nested.message.contains("room"), "the message names the entity where the path broke: \(nested.message)")
                try checkInvalidFetch("a key path continuing past an attribute") { _ = try names(context, .key("name.first") == "x") }
                try checkInvalidFetch("count(for:) with an unknown key") { _ = try context.count(for: FetchRequest<Student>(predicate: .key("nickname") == "x")) }
                try checkInvalidFetch("fetchObjectIDs with an unknown key") { _ = try context.fetchObjectIDs(FetchRequest<Student>(predicate: .key("nickname") == "x")) }
                try checkInvalidFetch("sorting by an unknown key") { _ = try names(context, nil, [SortKey("nickname")]) }
                try checkInvalidFetch("sorting through a to-many") { _ = try names(context, nil, [SortKey("subjects.name")]) }
                try checkInvalidFetch("a sub-entity's attribute on the parent") {
                    _ = try context.fetch(FetchRequest<ManagedObject>(entityName: "Vehicle", predicate: .key("doors") == 4))
                }
                try checkInvalidFetch("prefetching an unknown relationship") {
                    var request = FetchRequest<Student>()
                    request.relationshipKeyPathsForPrefetching = ["friends"]
                    _ = try context.fetch(request)
                }
                // A key path with an empty step names no relationship: refused, not read as
                // the path without it ("subjects..students" was prefetched as "subjects.students",
                // and "" prefetched nothing).
                for malformed in ["", "subjects..students", ".subjects", "subjects.", "schoolClass.students."] {
                    try checkInvalidFetch("prefetching the malformed key path '\(malformed)'") {
                        var request = FetchRequest<Student>()
                        request.relationshipKeyPathsForPrefetching = [malformed]
                        _ = try context.fetch(request)
                    }
                }
                let entity = try checkThrows(ObjectGraphError.self, "an unknown entity") { _ = try context.fetch(FetchRequest<ManagedObject>(entityName: "Spaceship")) }
                try checkEqual(entity.code, .unknownEntity, "code for an unknown entity")
                _ = Student(context: context)
                try checkInvalidFetch("an unknown key with pending changes") { _ = try names(context, .key("nickname") == "x") }
            }
        },
        ConformanceScenario("fetch.errors.typeMismatch") { env in
            try seedPeople(env)
            let context = env.newContext()
            try context.performAndWait {
                let mismatch = try checkInvalidFetch("an integer attribute against a string") { _ = try names(context, .key("age") == "old") }
                try checkEqual(mismatch.key, "age", "the error names the key path")
                try checkInvalidFetch("a string attribute against a number") { _ = try names(context, .key("name") > 5) }
                try checkInvalidFetch("IN with numbers for a string") { _ = try names(context, key("name").isIn([1, 2])) }
                try checkInvalidFetch("BEGINSWITH on an integer") { _ = try names(context, key("age").beginsWith("3")) }
                try checkInvalidFetch("a relationship against a string") { _ = try names(context, .key("schoolClass") == "Math") }
                try checkInvalidFetch("a key path through a to-one against the wrong type") { _ = try names(context, .key("schoolClass.title") == 3) }
                try checkInvalidFetch("ANY with the wrong type") { _ = try names(context, .any("subjects.name", .equal, 3)) }
                try checkInvalidFetch("a malformed regular expression") { _ = try names(context, key("name").matches("([")) }
                try checkEqual(try names(context, .key("name") == "Ada"), ["Ada"], "a well-typed fetch still works")
            }
        },
    ]
}
