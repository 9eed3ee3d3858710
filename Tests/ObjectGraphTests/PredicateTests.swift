import Foundation
import ObjectGraph
import Testing

/// The shared evaluator's semantics, on stored rows and on live objects alike (see
/// ``PredicateFixture`` for the data).
@Suite("Predicates: evaluation")
struct PredicateTests {
    let f: PredicateFixture
    init() throws { f = try PredicateFixture() }

    @Test func comparisonOperators() throws {
        try f.expect(key("i") == 2, ["b"])
        try f.expect(key("i") != 2, ["a", "c", "d", "e"])
        try f.expect(key("i") < 3, ["a", "b"])
        try f.expect(key("i") <= 3, ["a", "b", "c"])
        try f.expect(key("i") > 2, ["c", "e"])
        try f.expect(key("i") >= 3, ["c", "e"])
        try f.expect(key("i").isIn([1, 3, 99]), ["a", "c"])
        try f.expect(key("i").isIn([Int]()), [])
        try f.expect(key("i").between(2, 10), ["b", "c", "e"])
        try f.expect(key("i").between(4, 9), [])
        try f.expect(key("text").isIn(["ecole", "straße"]), ["b", "d"])
    }

    @Test func everyOperatorIsCovered() throws {
        // One query per operator, so a new operator without a test here fails this test.
        let covered: [ComparisonOperator: FetchPredicate] = [
            .equal: key("key") == "e", .notEqual: key("i") != 10, .lessThan: key("d") < 0,
            .lessThanOrEqual: key("d") <= -1, .greaterThan: key("m") > 99, .greaterThanOrEqual: key("m") >= 100,
            .in: key("key").isIn(["e"]), .between: key("i").between(10, 10),
            .beginsWith: key("key").beginsWith("e"), .endsWith: key("key").endsWith("e"),
            .contains: key("key").contains("e"), .like: key("key").like("?"), .matches: key("key").matches("[e]"),
        ]
        #expect(Set(covered.keys) == Set(ComparisonOperator.allCases))
        for (op, predicate) in covered where op != .like && op != .notEqual {
            try f.expect(predicate, ["e"])
        }
        try f.expect(covered[.like]!, PredicateFixture.allKeys)
        try f.expect(covered[.notEqual]!, ["a", "b", "c", "d"])
    }

    @Test func stringOperatorsWithCaseAndDiacriticOptions() throws {
        try f.expect(key("text").beginsWith("ec"), ["b"])
        try f.expect(key("text").beginsWith("Éc"), ["a"])
        try f.expect(key("text").beginsWith("ec", options: .caseInsensitive), ["b"])
        try f.expect(key("text").beginsWith("éc", options: .caseInsensitive), ["a"])
        try f.expect(key("text").beginsWith("Ec", options: .diacriticInsensitive), ["a"])
        try f.expect(key("text").beginsWith("EC", options: [.caseInsensitive, .diacriticInsensitive]), ["a", "b"])
        try f.expect(key("text").endsWith("ole"), ["a", "b"])
        try f.expect(key("text").endsWith("SSE"), ["c"])
        try f.expect(key("text").endsWith("sse", options: .caseInsensitive), ["c", "d"])
        try f.expect(key("text").contains("col"), ["a", "b"])
        try f.expect(key("text").contains("É"), ["a"])
        try f.expect(key("text").contains("e", options: .diacriticInsensitive), ["a", "b", "d"])
        try f.expect(key("text").contains("E", options: [.caseInsensitive, .diacriticInsensitive]), ["a", "b", "c", "d"])
        try f.expect(key("text").contains(""), ["a", "b", "c", "d"])
    }

    @Test func equalityWithOptionsOnNonASCIIText() throws {
        try f.expect(key("text") == "ecole", ["b"])
        try f.expect(.comparison(PredicateComparison(key("text"), .equal, .constant("ECOLE"), options: .caseInsensitive)), ["b"])
        try f.expect(.comparison(PredicateComparison(key("text"), .equal, .constant("Ecole"), options: .diacriticInsensitive)), ["a"])
        try f.expect(.comparison(PredicateComparison(key("text"), .equal, .constant("ÉCOLE"), options: .caseInsensitive)), ["a"])
        try f.expect(.comparison(PredicateComparison(key("text"), .equal, .constant("ECOLE"), options: [.caseInsensitive, .diacriticInsensitive])), ["a", "b"])
        // Full case folding: "straße" and "STRASSE" are equal ignoring case.
        try f.expect(.comparison(PredicateComparison(key("text"), .equal, .constant("strasse"), options: .caseInsensitive)), ["c", "d"])
        try f.expect(.comparison(PredicateComparison(key("text"), .equal, .constant("STRASSE"))), ["c"])
        // Canonically equivalent spellings are equal without options (decomposed "É").
        try f.expect(key("text") == "E\u{301}cole", ["a"])
    }

    @Test func likeAndMatches() throws {
        try f.expect(key("text").like("?cole"), ["a", "b"])
        try f.expect(key("text").like("e*"), ["b"])
        try f.expect(key("text").like("E*", options: .caseInsensitive), ["b"])
        try f.expect(key("text").like("e*", options: [.caseInsensitive, .diacriticInsensitive]), ["a", "b"])
        try f.expect(key("text").like("*ASS*"), ["c"])
        try f.expect(key("text").like("st*", options: .caseInsensitive), ["c", "d"])
        try f.expect(key("text").like("S*E"), ["c"])
        try f.expect(key("text").like("c.le"), [])
        try f.expect(key("text").matches("ecole"), ["b"])
        try f.expect(key("text").matches("col"), [])
        try f.expect(key("text").matches("[a-z]+"), ["b"])
        try f.expect(key("text").matches("ECOLE", options: .caseInsensitive), ["b"])
        try f.expect(key("text").matches("Ecole", options: .diacriticInsensitive), ["a"])
        try f.expect(key("text").matches("e.ole", options: [.caseInsensitive, .diacriticInsensitive]), ["a", "b"])
        try f.expect(key("text").matches("ecole|STRASSE"), ["b", "c"])
    }

    @Test func numbersCompareAcrossIntegerDoubleAndDecimal() throws {
        try f.expect(key("d") > 2, ["c"])
        try f.expect(key("d") == 2, ["b"])
        try f.expect(key("d") >= 1.5, ["a", "b", "c"])
        try f.expect(key("i") == 2.0, ["b"])
        try f.expect(key("i") < 2.5, ["a", "b"])
        try f.expect(key("i") == Decimal(3), ["c"])
        try f.expect(key("m") == 2, ["b"])
        try f.expect(key("m") > 3, ["c", "e"])
        try f.expect(key("m") == 3.25, ["c"])
        try f.expect(key("m") < Decimal(string: "2.5")!, ["b"])
        try f.expect(key("m").between(2.5, 3.25), ["a", "c"])
        try f.expect(key("d").between(1.5, 3), ["a", "b"])
        try f.expect(key("i").isIn([AttributeValue.double(2), .decimal(10)]), ["b", "e"])
    }

    @Test func nilSemantics() throws {
        try f.expect(key("i") == AttributeValue.null, ["d"])
        try f.expect(key("i") != AttributeValue.null, ["a", "b", "c", "e"])
        try f.expect(key("text") == AttributeValue.null, ["e"])
        try f.expect(key("i") < AttributeValue.null, [])
        try f.expect(key("i") >= AttributeValue.null, [])
        try f.expect(key("i") < 100, ["a", "b", "c", "e"])
        try f.expect(key("text") != "ecole", ["a", "c", "d", "e"])
        try f.expect(key("text").beginsWith(""), ["a", "b", "c", "d"])
        try f.expect(key("i").isIn([AttributeValue.null, .integer(1)]), ["a", "d"])
        try f.expect(key("school.name") == AttributeValue.null, ["d"])
        try f.expect(key("school") == (nil as ObjectID?), ["d"])
    }

    @Test func logicalConnectives() throws {
        try f.expect(.truePredicate, PredicateFixture.allKeys)
        try f.expect(.falsePredicate, [])
        try f.expect(!(key("i") == 2), ["a", "c", "d", "e"])
        try f.expect(key("i") > 1 && key("d") < 3, ["b", "e"])
        try f.expect(key("i") > 1 && key("d") < 3 && key("d") > 0, ["b"])
        try f.expect(key("i") == 1 || key("i") == 10 || key("text") == "straße", ["a", "d", "e"])
        try f.expect(.and([]), PredicateFixture.allKeys)
        try f.expect(.or([]), [])
    }

    @Test func keyPathsThroughToOne() throws {
        try f.expect(key("school.name") == "North", ["a", "b", "e"])
        try f.expect(key("school.name").beginsWith("S"), ["c"])
        try f.expect(key("school.name") != "North", ["c", "d"])
        try f.expect(key("student.school.name") == "South", ["6"], entity: "Grade", label: "score")
        try f.expect(["c"]) { context in
            key("school") == (try f.objectID("School", "name", "South", in: context) as ObjectID?)
        }
    }

    @Test func anyAllNone() throws {
        try f.expect(.any("grades.score", .greaterThan, 8), ["a", "e"])
        try f.expect(.any("grades.score", .equal, 3), ["b"])
        try f.expect(.all("grades.score", .greaterThan, 5), ["a", "c", "d", "e"])
        try f.expect(.none("grades.score", .greaterThan, 8), ["b", "c", "d"])
        try f.expect(.any("students.text", .beginsWith, "é", options: [.caseInsensitive]), ["North"], entity: "School", label: "name")
        try f.expect(.all("students.i", .lessThan, 5), ["South", "East"], entity: "School", label: "name")
        try f.expect(.none("students.grades.score", .equal, 9), ["South", "East"], entity: "School", label: "name")
        try f.expect(.any("school.students.key", .equal, "e"), ["a", "b", "e"])
    }

    @Test func countAggregate() throws {
        try f.expect(key("grades.@count") > 2, ["e"])
        try f.expect(key("grades.@count") == 0, ["d"])
        try f.expect(key("grades.@count") >= 2, ["a", "b", "e"])
        try f.expect(.comparison(PredicateComparison(.keyPath("students.@count"), .greaterThan, .constant(2))), ["North"], entity: "School", label: "name")
        try f.expect(key("students.@count").between(1, 2), ["South"], entity: "School", label: "name")
        try f.expect(key("school.students.@count") == 1, ["c"])
    }

    @Test func relationshipMembership() throws {
        try f.expect(["North"], entity: "School", label: "name") { context in
            .comparison(PredicateComparison(.keyPath("students"), .contains, .object(try f.objectID("Student", "key", "b", in: context))))
        }
        try f.expect(["a", "b", "e"]) { context in
            let north = try f.objectID("School", "name", "North", in: context)
            return .comparison(PredicateComparison(.keyPath("school"), .in, .list([.object(north)])))
        }
    }

    @Test func substitutionVariables() throws {
        let limit = FetchPredicate.comparison(PredicateComparison(.keyPath("i"), .equal, .variable("LIMIT")))
        try f.expect(limit, ["b"], variables: ["LIMIT": 2])
        try f.expect(limit, ["e"], variables: ["LIMIT": 10])
        let listed = FetchPredicate.comparison(PredicateComparison(.keyPath("i"), .in, .list([.variable("A"), .constant(3)])))
        try f.expect(listed, ["a", "c"], variables: ["A": 1])
        let named = FetchPredicate.comparison(PredicateComparison(.keyPath("text"), .beginsWith, .variable("P"), options: .caseInsensitive))
        try f.expect(named, ["c", "d"], variables: ["P": "ST"])
        let substituted: FetchPredicate = key("i") == 5
        #expect(try limit.substituting(["LIMIT": 5]) == substituted)
    }
}

@Suite("Predicates: compile errors")
struct PredicateErrorTests {
    let f: PredicateFixture
    init() throws { f = try PredicateFixture() }

    @Test func unknownKeyPathNamesEntityAndKey() {
        f.expectInvalid(key("nickname") == "x", mentioning: ["Student", "nickname"])
        f.expectInvalid(key("school.motto") == "x", mentioning: ["School", "motto"])
        f.expectInvalid(key("text.length") == 1, mentioning: ["Student", "text"])
        f.expectInvalid(key("school..name") == "x", mentioning: ["school..name"])
        f.expectInvalid(key("school.@count") == 1, mentioning: ["@count"])
    }

    @Test func stringAgainstNumberMismatch() {
        f.expectInvalid(key("text") == 5, mentioning: ["text", "string"])
        f.expectInvalid(key("i") == "five", mentioning: ["i", "integer32"])
        f.expectInvalid(key("d").isIn(["x"]), mentioning: ["d"])
        f.expectInvalid(key("i").beginsWith("1"), mentioning: ["i", "integer32"])
        f.expectInvalid(key("school") == "North", mentioning: ["school", "relationship"])
        f.expectInvalid(key("grades.@count") == "many", mentioning: ["@count"])
    }

    @Test func toManyKeyPathNeedsAModifier() {
        f.expectInvalid(key("grades.score") > 5, mentioning: ["grades.score", "Student", "ANY"])
        f.expectInvalid(key("students.key") == "a", mentioning: ["students.key"], entity: "School")
        f.expectInvalid(.any("school.name", .equal, "North"), mentioning: ["ANY", "school.name"])
    }

    @Test func missingVariable() {
        let predicate = FetchPredicate.comparison(PredicateComparison(.keyPath("i"), .equal, .variable("LIMIT")))
        f.expectInvalid(predicate, mentioning: ["$LIMIT"])
        f.expectInvalid(predicate, mentioning: ["$LIMIT"], variables: ["OTHER": 1])
        #expect(throws: ObjectGraphError.self) { _ = try predicate.substituting([:]) }
    }

    @Test func badPatternsAndBounds() {
        f.expectInvalid(key("text").matches("(unclosed"), mentioning: ["(unclosed"])
        f.expectInvalid(.comparison(PredicateComparison(.keyPath("i"), .between, .list([.constant(1), .constant(2), .constant(3)]))), mentioning: ["BETWEEN"])
    }
}
