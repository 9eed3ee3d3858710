import Foundation
import ObjectGraph
import Testing

@Suite("AttributeValue.compare")
struct AttributeValueCompareTests {
    @Test func numbersCompareAcrossKinds() {
        #expect(AttributeValue.compare(.integer(1), .integer(2)) == .orderedAscending)
        #expect(AttributeValue.compare(.integer(1), .double(1.5)) == .orderedAscending)
        #expect(AttributeValue.compare(.double(2.0), .integer(2)) == .orderedSame)
        #expect(AttributeValue.compare(.double(2.5), .integer(2)) == .orderedDescending)
        #expect(AttributeValue.compare(.decimal(Decimal(string: "2.5")!), .integer(3)) == .orderedAscending)
        #expect(AttributeValue.compare(.integer(3), .decimal(Decimal(string: "2.5")!)) == .orderedDescending)
        #expect(AttributeValue.compare(.decimal(Decimal(string: "0.1")!), .double(0.25)) == .orderedAscending)
        #expect(AttributeValue.compare(.double(0.25), .decimal(Decimal(string: "0.25")!)) == .orderedSame)
        #expect(AttributeValue.compare(.decimal(10), .decimal(Decimal(string: "9.99")!)) == .orderedDescending)
        #expect(AttributeValue.compare(.double(-0.0), .double(0.0)) == .orderedSame)
    }

    @Test func integerAgainstDoubleKeepsPrecisionBeyondTwoToThe53() {
        let big: Int64 = 1 << 53
        #expect(AttributeValue.compare(.integer(big + 1), .double(Double(big))) == .orderedDescending)
        #expect(AttributeValue.compare(.double(Double(big)), .integer(big + 1)) == .orderedAscending)
        #expect(AttributeValue.compare(.integer(Int64.max), .double(9.3e18)) == .orderedAscending)
        #expect(AttributeValue.compare(.integer(Int64.min), .double(-Double.infinity)) == .orderedDescending)
        #expect(AttributeValue.compare(.integer(1), .double(.nan)) == nil)
    }

    @Test func otherKinds() throws {
        #expect(AttributeValue.compare("apple", "banana") == .orderedAscending)
        #expect(AttributeValue.compare("B", "a") == .orderedAscending, "binary order: uppercase first")
        #expect(AttributeValue.compare(.string("\u{E9}"), .string("e\u{301}")) == .orderedSame, "canonical equivalence")
        #expect(AttributeValue.compare(false, true) == .orderedAscending)
        #expect(AttributeValue.compare(true, true) == .orderedSame)
        let now = Date(timeIntervalSince1970: 1000)
        #expect(AttributeValue.compare(.date(now), .date(now.addingTimeInterval(1))) == .orderedAscending)
        #expect(AttributeValue.compare(.data(Data([1, 2])), .data(Data([1, 2, 0]))) == .orderedAscending)
        #expect(AttributeValue.compare(.data(Data([2])), .data(Data([1, 9]))) == .orderedDescending)
        #expect(AttributeValue.compare(.data(Data([1, 2])), .data(Data([1, 2]))) == .orderedSame)
        let low = try #require(UUID(uuidString: "00000000-0000-0000-0000-000000000001"))
        let high = try #require(UUID(uuidString: "F0000000-0000-0000-0000-000000000000"))
        #expect(AttributeValue.compare(.uuid(low), .uuid(high)) == .orderedAscending)
        let a = try #require(URL(string: "https://a.example")), b = try #require(URL(string: "https://b.example"))
        #expect(AttributeValue.compare(.uri(b), .uri(a)) == .orderedDescending)
    }

    @Test func nullAndMismatchedKindsDoNotCompare() {
        #expect(AttributeValue.compare(.null, .null) == nil)
        #expect(AttributeValue.compare(.null, .integer(0)) == nil)
        #expect(AttributeValue.compare(.string("1"), .integer(1)) == nil)
        #expect(AttributeValue.compare(.bool(true), .string("1")) == nil)
        #expect(AttributeValue.compare(.date(Date()), .double(0)) == nil)
    }

    @Test("booleans compare with 0 and 1, as NSPredicate's `flag == 1` does")
    func booleansAndIntegers() {
        #expect(AttributeValue.compare(.bool(true), .integer(1)) == .orderedSame)
        #expect(AttributeValue.compare(.integer(0), .bool(false)) == .orderedSame)
        #expect(AttributeValue.compare(.bool(false), .integer(1)) == .orderedAscending)
    }

    @Test func predicateEquality() {
        #expect(AttributeValue.predicateEqual(.integer(1), .double(1.0)))
        #expect(AttributeValue.predicateEqual(.decimal(2), .integer(2)))
        #expect(AttributeValue.predicateEqual(.null, .null))
        #expect(!AttributeValue.predicateEqual(.null, .integer(0)))
        #expect(!AttributeValue.predicateEqual(.string(""), .null))
        #expect(!AttributeValue.predicateEqual(.string("1"), .integer(1)))
        #expect(AttributeValue.predicateEqual(.string("Cafe\u{301}"), .string("Caf\u{E9}")))
    }

    @Test func descriptionsAndKinds() {
        #expect(AttributeValue.null.description == "nil")
        #expect(AttributeValue.string("x").description == "\"x\"")
        #expect(AttributeValue.data(Data([1, 2, 3])).description == "<3 bytes>")
        #expect(AttributeValue.integer(5).kindName == "integer")
        #expect(AttributeValue.null.anyValue == nil)
        #expect(AttributeValue.integer(5).anyValue as? Int64 == 5)
    }
}

@Suite("TextFolding")
struct TextFoldingTests {
    @Test func noOptionsLeavesTextAlone() {
        #expect(TextFolding.fold("École STRASSE", []) == "École STRASSE")
    }

    @Test func caseFolding() {
        #expect(TextFolding.fold("ÉCOLE", .caseInsensitive) == TextFolding.fold("école", .caseInsensitive))
        #expect(TextFolding.fold("École", .caseInsensitive) != TextFolding.fold("ecole", .caseInsensitive))
        #expect(TextFolding.fold("STRASSE", .caseInsensitive) == TextFolding.fold("straße", .caseInsensitive))
    }

    @Test func diacriticFolding() {
        #expect(TextFolding.fold("É", .diacriticInsensitive) == "E")
        #expect(TextFolding.fold("École", .diacriticInsensitive) == "Ecole")
        #expect(TextFolding.fold("e\u{301}", .diacriticInsensitive) == "e")
        #expect(TextFolding.fold("naïve façade", .diacriticInsensitive) == "naive facade")
        #expect(TextFolding.fold("École", .diacriticInsensitive) != TextFolding.fold("ecole", .diacriticInsensitive))
    }

    @Test func caseAndDiacriticFolding() {
        let both: StringComparisonOptions = [.caseInsensitive, .diacriticInsensitive]
        #expect(TextFolding.fold("École", both) == TextFolding.fold("ecole", both))
        #expect(TextFolding.fold("E\u{301}COLE", both) == TextFolding.fold("ecole", both))
        #expect(TextFolding.fold("Ñandú", both) == TextFolding.fold("nandu", both))
    }

    @Test func foldingIsLocaleIndependent() {
        // Turkish dotless ı is its own letter; it does not fold to i.
        #expect(TextFolding.fold("ı", .caseInsensitive) != TextFolding.fold("i", .caseInsensitive))
        #expect(TextFolding.fold("I", .caseInsensitive) == TextFolding.fold("i", .caseInsensitive))
    }
}

@Suite("AttributeValue.isIdentical")
struct AttributeValueIdentityTests {
    @Test("values == calls equal but stored differently are not identical")
    func equalIsNotIdentical() {
        #expect(AttributeValue.string("caf\u{E9}") == .string("cafe\u{301}"))
        #expect(!AttributeValue.string("caf\u{E9}").isIdentical(to: .string("cafe\u{301}")))
        #expect(AttributeValue.double(0.0) == .double(-0.0))
        #expect(!AttributeValue.double(0.0).isIdentical(to: .double(-0.0)))
        #expect(!AttributeValue.integer(1).isIdentical(to: .double(1)))
        #expect(!AttributeValue.null.isIdentical(to: .string("")))
        #expect(!AttributeValue.string("a").isIdentical(to: .string("ab")))
    }

    @Test("every kind is identical to an equal copy of itself, NaN included")
    func identicalToItself() {
        let values: [AttributeValue] = [
            .null, .integer(-7), .double(.nan), .double(1.5), .decimal(Decimal(string: "1.25")!), .string(""),
            .string(String(repeating: "long 😀 ", count: 40)), .bool(true), .date(Date(timeIntervalSinceReferenceDate: 3.5)),
            .data(Data([0, 255])), .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
            .uri(URL(string: "https://example.com/a%20b")!),
        ]
        for value in values { #expect(value.isIdentical(to: value), "\(value)") }
    }
}
