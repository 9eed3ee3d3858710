import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Testing

// Foundation's #Predicate on typed subclasses, translated to FetchPredicate: each construct
// gives the same tree as the format parser (or the builder), and fetching with it returns the
// same objects as the equivalent format predicate.

/// A transformable value, non-optional on ``Writer`` so probing has to build one.
struct MacroStyle: TransformableValue, Equatable {
    var font: String
    var sizes: [Int]
    var note: String?
}

final class Writer: ManagedObject {
    @Attribute var name: String
    @Attribute var nickname: String?
    @Attribute var age: Int16?
    @Attribute var rating: Double
    @Attribute var active: Bool
    /// Set for Ada (true) and Bob (false) only.
    @Attribute var featured: Bool?
    @Attribute var born: Date?
    @Attribute("code") var badge: String?
    @Attribute var style: MacroStyle
    @Attribute var layout: MacroStyle
    @Relationship var imprint: Imprint?
    @Relationship var books: Set<Book>

    /// Computed from a stored property: not itself stored, so a predicate cannot use it.
    var shout: String { name.uppercased() }
}

final class Book: ManagedObject {
    @Attribute var title: String
    @Attribute var pages: Int32
    @Relationship var writer: Writer?
}

final class Imprint: ManagedObject {
    @Attribute var name: String
    @Attribute var city: String?
    @Relationship var writers: Set<Writer>
    @Relationship var parent: Imprint?
}

/// Writers (name, nickname, age, rating, active, imprint, books: pages):
///
/// | Ada | "Countess" | 36  | 4.5 | yes | Penguin | Notes 120                |
/// | Bob | nil        | 25  | 3.0 | no  | Penguin | Intro 300, Advanced 500  |
/// | Cyd | "Cy"       | nil | 5.0 | yes | Orbit   | —                        |
/// | Dee | "Dee"      | 61  | 2.5 | no  | —       | Memoir 250               |
/// | Alf | "Alfie"    | 30  | 4.0 | yes | Orbit   | Atlas 80, Almanac 90     |
///
/// Penguin is in London and belongs to Orbit; Orbit has no city.
final class MacroFixture {
    let container: PersistentContainer
    let context: ManagedObjectContext
    var model: ManagedObjectModel { container.model }
    private(set) var ids: [String: ObjectID] = [:]

    static func makeModel() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Writer", as: Writer.self) { e in
                e.attribute("name", .string)
                e.attribute("nickname", .string, optional: true)
                e.attribute("age", .integer16, optional: true)
                e.attribute("rating", .double)
                e.attribute("active", .boolean)
                e.attribute("featured", .boolean, optional: true)
                e.attribute("born", .date, optional: true)
                e.attribute("code", .string, optional: true)
                e.transformable("style", MacroStyle.self, optional: false, default: MacroStyle(font: "Serif", sizes: [12], note: nil))
                e.transformable("layout", MacroStyle.self, optional: false)
                e.toOne("imprint", "Imprint", inverse: "writers")
                e.toMany("books", "Book", inverse: "writer")
            }
            m.entity("Book", as: Book.self) { e in
                e.attribute("title", .string)
                e.attribute("pages", .integer32)
                e.toOne("writer", "Writer", inverse: "books")
            }
            m.entity("Imprint", as: Imprint.self) { e in
                e.attribute("name", .string)
                e.attribute("city", .string, optional: true)
                e.toMany("writers", "Writer", inverse: "imprint")
                e.toOne("parent", "Imprint")
            }
        }
    }

    init(save: Bool = true) throws {
        container = try PersistentContainer(model: try Self.makeModel(), stores: [.inMemory()])
        context = container.newBackgroundContext()
        var ids: [String: ObjectID] = [:]
        try context.performAndWait {
            let orbit = Imprint(context: context)
            orbit.name = "Orbit"
            let penguin = Imprint(context: context)
            penguin.name = "Penguin"
            penguin.city = "London"
            penguin.parent = orbit
            let rows: [(String, String?, Int16?, Double, Bool, Imprint?, [(String, Int32)])] = [
                ("Ada", "Countess", 36, 4.5, true, penguin, [("Notes", 120)]),
                ("Bob", nil, 25, 3.0, false, penguin, [("Intro", 300), ("Advanced", 500)]),
                ("Cyd", "Cy", nil, 5.0, true, orbit, []),
                ("Dee", "Dee", 61, 2.5, false, nil, [("Memoir", 250)]),
                ("Alf", "Alfie", 30, 4.0, true, orbit, [("Atlas", 80), ("Almanac", 90)]),
            ]
            var objects: [String: ManagedObject] = ["Orbit": orbit, "Penguin": penguin]
            for (name, nickname, age, rating, active, imprint, books) in rows {
                let writer = Writer(context: context)
                writer.name = name
                writer.nickname = nickname
                writer.age = age
                writer.rating = rating
                writer.active = active
                writer.badge = name == "Ada" ? "A1" : nil
                writer.featured = name == "Ada" ? true : name == "Bob" ? false : nil
                writer.born = Date(timeIntervalSince1970: Double(age ?? 0) * 1_000_000)
                writer.style = MacroStyle(font: name == "Bob" ? "Mono" : "Serif", sizes: [12], note: nil)
                writer.layout = MacroStyle(font: "Grid", sizes: [Int(rating)], note: name)
                writer.imprint = imprint
                for (title, pages) in books {
                    let book = Book(context: context)
                    book.title = title
                    book.pages = pages
                    book.writer = writer
                    objects[title] = book
                }
                objects[name] = writer
            }
            if save { try context.save() }
            for (key, object) in objects { ids[key] = object.objectID }
        }
        self.ids = ids
    }

    /// Names of the writers a request fetches, sorted.
    func names(_ request: FetchRequest<Writer>) throws -> [String] {
        try context.performAndWait { try context.fetch(request).map(\.name).sorted() }
    }

    /// Checks that `predicate` translates to the same tree as `expected` and fetches the same
    /// writers; returns the names fetched.
    @discardableResult
    func check(
        _ predicate: Predicate<Writer>, _ expected: FetchPredicate, fetches names: [String]? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [String] {
        let translated = try FetchPredicate(predicate, model: model)
        #expect(translated == expected, "translated \(translated)\n      expected \(expected)", sourceLocation: sourceLocation)
        let viaMacro = try self.names(FetchRequest(predicate: predicate))
        let viaFormat = try self.names(FetchRequest(predicate: expected))
        #expect(viaMacro == viaFormat, sourceLocation: sourceLocation)
        if let names { #expect(viaMacro == names.sorted(), sourceLocation: sourceLocation) }
        return viaMacro
    }
}

@Suite("#Predicate translation")
struct MacroPredicateTests {
    @Test func comparisonsAndLogic() throws {
        let f = try MacroFixture()
        try f.check(#Predicate<Writer> { $0.name == "Ada" }, try FetchPredicate(format: "name == 'Ada'"), fetches: ["Ada"])
        try f.check(#Predicate<Writer> { $0.age! > 30 && $0.name.starts(with: "A") },
                    try FetchPredicate(format: "age > 30 AND name BEGINSWITH 'A'"), fetches: ["Ada"])
        try f.check(#Predicate<Writer> { $0.name != "Ada" || $0.rating >= 4.5 },
                    try FetchPredicate(format: "name != 'Ada' OR rating >= 4.5"), fetches: ["Ada", "Alf", "Bob", "Cyd", "Dee"])
        try f.check(#Predicate<Writer> { $0.rating < 3 || $0.rating <= 3 && $0.age! >= 25 },
                    try FetchPredicate(format: "rating < 3.0 OR (rating <= 3.0 AND age >= 25)"), fetches: ["Bob", "Dee"])
        try f.check(#Predicate<Writer> { !($0.name == "Ada") }, try FetchPredicate(format: "NOT name == 'Ada'"))
        try f.check(#Predicate<Writer> { 3.0 < $0.rating }, try FetchPredicate(format: "rating > 3.0"), fetches: ["Ada", "Alf", "Cyd"])
        try f.check(#Predicate<Writer> { $0.active }, try FetchPredicate(format: "active == YES"), fetches: ["Ada", "Alf", "Cyd"])
        try f.check(#Predicate<Writer> { !$0.active }, try FetchPredicate(format: "NOT active == YES"), fetches: ["Bob", "Dee"])
        try f.check(#Predicate<Writer> { $0.active == false }, try FetchPredicate(format: "active == NO"), fetches: ["Bob", "Dee"])
        try f.check(#Predicate<Writer> { _ in true }, .truePredicate, fetches: ["Ada", "Alf", "Bob", "Cyd", "Dee"])
        try f.check(#Predicate<Writer> { $0.active ? $0.rating > 4 : $0.age! > 50 },
                    try FetchPredicate(format: "(active == YES AND rating > 4.0) OR (NOT active == YES AND age > 50)"),
                    fetches: ["Ada", "Cyd", "Dee"])
    }

    @Test func capturedValuesAndFolding() throws {
        let f = try MacroFixture()
        let limit = 3.5
        try f.check(#Predicate<Writer> { $0.rating > limit + 0.5 }, try FetchPredicate(format: "rating > 4.0"), fetches: ["Ada", "Cyd"])
        let names = ["Ada", "Bob"]
        try f.check(#Predicate<Writer> { names.contains($0.name) }, try FetchPredicate(format: "name IN {'Ada', 'Bob'}"), fetches: ["Ada", "Bob"])
        try f.check(#Predicate<Writer> { $0.badge == "A1" }, try FetchPredicate(format: "code == 'A1'"), fetches: ["Ada"])
        let date = Date(timeIntervalSince1970: 30_000_000)
        try f.check(#Predicate<Writer> { $0.born! <= date }, try FetchPredicate(format: "born <= %@", date), fetches: ["Alf", "Bob", "Cyd"])
        let mono = MacroStyle(font: "Mono", sizes: [12], note: nil)
        try f.check(#Predicate<Writer> { $0.style == mono }, .key("style") == mono, fetches: ["Bob"])
        // No default value: the probe decodes a placeholder MacroStyle from nothing.
        let grid = MacroStyle(font: "Grid", sizes: [5], note: "Cyd")
        try f.check(#Predicate<Writer> { $0.layout == grid }, .key("layout") == grid, fetches: ["Cyd"])
    }

    @Test func optionalsAndNilCoalescing() throws {
        let f = try MacroFixture()
        try f.check(#Predicate<Writer> { $0.age == nil }, try FetchPredicate(format: "age == nil"), fetches: ["Cyd"])
        try f.check(#Predicate<Writer> { $0.age != nil }, try FetchPredicate(format: "age != nil"), fetches: ["Ada", "Alf", "Bob", "Dee"])
        try f.check(#Predicate<Writer> { ($0.age ?? 0) > 30 }, try FetchPredicate(format: "age > 30"), fetches: ["Ada", "Dee"])
        try f.check(#Predicate<Writer> { ($0.age ?? 100) > 30 }, try FetchPredicate(format: "age > 30 OR age == nil"), fetches: ["Ada", "Cyd", "Dee"])
        try f.check(#Predicate<Writer> { ($0.age ?? 0) != 30 }, try FetchPredicate(format: "age != 30 OR age == nil"), fetches: ["Ada", "Bob", "Cyd", "Dee"])
        try f.check(#Predicate<Writer> { ($0.age ?? 30) != 30 }, try FetchPredicate(format: "age != nil AND age != 30"), fetches: ["Ada", "Bob", "Dee"])
        try f.check(#Predicate<Writer> { $0.nickname?.starts(with: "C") == true },
                    try FetchPredicate(format: "nickname != nil AND nickname BEGINSWITH 'C'"), fetches: ["Ada", "Cyd"])
        try f.check(#Predicate<Writer> { $0.nickname?.contains("e") ?? false },
                    try FetchPredicate(format: "nickname != nil AND nickname CONTAINS 'e'"), fetches: ["Ada", "Alf", "Dee"])
        try f.check(#Predicate<Writer> { $0.nickname?.contains("e") == false },
                    try FetchPredicate(format: "nickname != nil AND NOT nickname CONTAINS 'e'"), fetches: ["Cyd"])
        try f.check(#Predicate<Writer> { ($0.nickname ?? "").starts(with: "C") },
                    try FetchPredicate(format: "nickname BEGINSWITH 'C'"), fetches: ["Ada", "Cyd"])
    }

    @Test func stringsAndRanges() throws {
        let f = try MacroFixture()
        try f.check(#Predicate<Writer> { !$0.name.isEmpty }, try FetchPredicate(format: "NOT name == ''"), fetches: ["Ada", "Alf", "Bob", "Cyd", "Dee"])
        try f.check(#Predicate<Writer> { $0.nickname?.isEmpty == false },
                    try FetchPredicate(format: "nickname != nil AND NOT nickname == ''"), fetches: ["Ada", "Alf", "Cyd", "Dee"])
        try f.check(#Predicate<Writer> { $0.name.contains("d") }, try FetchPredicate(format: "name CONTAINS 'd'"), fetches: ["Ada", "Cyd"])
        try f.check(#Predicate<Writer> { (25...36).contains($0.age ?? 0) }, try FetchPredicate(format: "age BETWEEN {25, 36}"), fetches: ["Ada", "Alf", "Bob"])
        let range: Range<Int16> = 25..<36
        try f.check(#Predicate<Writer> { range.contains($0.age!) }, try FetchPredicate(format: "age >= 25 AND age < 36"), fetches: ["Alf", "Bob"])
    }

    @Test func relationships() throws {
        let f = try MacroFixture()
        try f.check(#Predicate<Writer> { $0.imprint?.name == "Penguin" }, try FetchPredicate(format: "imprint.name == 'Penguin'"), fetches: ["Ada", "Bob"])
        try f.check(#Predicate<Writer> { $0.imprint?.city == nil }, try FetchPredicate(format: "imprint.city == nil"), fetches: ["Alf", "Cyd", "Dee"])
        try f.check(#Predicate<Writer> { $0.imprint?.parent?.name == "Orbit" }, try FetchPredicate(format: "imprint.parent.name == 'Orbit'"), fetches: ["Ada", "Bob"])
        try f.check(#Predicate<Writer> { $0.imprint == nil }, try FetchPredicate(format: "imprint == nil"), fetches: ["Dee"])
        try f.check(#Predicate<Writer> { $0.imprint!.name.starts(with: "O") }, try FetchPredicate(format: "imprint.name BEGINSWITH 'O'"), fetches: ["Alf", "Cyd"])
        try f.check(#Predicate<Writer> { $0.imprint?.name.starts(with: "O") ?? true },
                    try FetchPredicate(format: "NOT imprint != nil OR imprint.name BEGINSWITH 'O'"), fetches: ["Alf", "Cyd", "Dee"])
        let penguin = try #require(f.ids["Penguin"])
        try f.check(#Predicate<Writer> { $0.imprint?.objectID == penguin }, try FetchPredicate(format: "imprint == %@", penguin), fetches: ["Ada", "Bob"])
        let ada = try #require(f.ids["Ada"])
        try f.check(#Predicate<Writer> { $0.objectID != ada }, try FetchPredicate(format: "SELF != %@", ada), fetches: ["Alf", "Bob", "Cyd", "Dee"])
    }

    @Test func toManyQuantifiersAndCounts() throws {
        let f = try MacroFixture()
        try f.check(#Predicate<Writer> { $0.books.count > 1 }, try FetchPredicate(format: "books.@count > 1"), fetches: ["Alf", "Bob"])
        try f.check(#Predicate<Writer> { $0.books.isEmpty }, try FetchPredicate(format: "books.@count == 0"), fetches: ["Cyd"])
        try f.check(#Predicate<Writer> { $0.books.contains { $0.pages > 400 } }, try FetchPredicate(format: "ANY books.pages > 400"), fetches: ["Bob"])
        try f.check(#Predicate<Writer> { $0.books.allSatisfy { $0.title.starts(with: "A") } },
                    try FetchPredicate(format: "ALL books.title BEGINSWITH 'A'"), fetches: ["Alf", "Cyd"])
        try f.check(#Predicate<Writer> { $0.books.contains { $0.pages > 100 && $0.title.contains("n") } },
                    try FetchPredicate(format: "SUBQUERY(books, $x, $x.pages > 100 AND $x.title CONTAINS 'n').@count > 0"), fetches: ["Bob"])
        try f.check(#Predicate<Writer> { $0.books.allSatisfy { $0.pages > 100 || $0.title == "Atlas" } },
                    try FetchPredicate(format: "SUBQUERY(books, $x, NOT ($x.pages > 100 OR $x.title == 'Atlas')).@count == 0"),
                    fetches: ["Ada", "Bob", "Cyd", "Dee"])
        try f.check(#Predicate<Writer> { $0.books.filter { $0.pages < 100 }.count >= 2 },
                    try FetchPredicate(format: "SUBQUERY(books, $x, $x.pages < 100).@count >= 2"), fetches: ["Alf"])
        try f.check(#Predicate<Writer> { !$0.books.filter { $0.pages > 200 }.isEmpty },
                    try FetchPredicate(format: "NOT SUBQUERY(books, $x, $x.pages > 200).@count == 0"), fetches: ["Bob", "Dee"])
        let intro = try #require(f.ids["Intro"])
        try f.check(#Predicate<Writer> { $0.books.contains { $0.objectID == intro } }, try FetchPredicate(format: "ANY books == %@", intro), fetches: ["Bob"])
        try f.check(#Predicate<Writer> { $0.imprint?.writers.contains { $0.name == "Cyd" } == true },
                    try FetchPredicate(format: "imprint != nil AND ANY imprint.writers.name == 'Cyd'"), fetches: ["Alf", "Cyd"])
        try f.check(#Predicate<Writer> { $0.books.contains { $0.writer?.imprint?.name == "Orbit" } },
                    try FetchPredicate(format: "SUBQUERY(books, $x, $x.writer.imprint.name == 'Orbit').@count > 0"), fetches: ["Alf"])
    }

    @Test func requestsCombineBothFilters() throws {
        let f = try MacroFixture()
        var request = FetchRequest<Writer>(predicate: #Predicate { $0.rating >= 4 })
        #expect(try f.names(request) == ["Ada", "Alf", "Cyd"])
        request.predicate = try FetchPredicate(format: "name BEGINSWITH 'A'")
        #expect(try f.names(request) == ["Ada", "Alf"])
        request.sortKeys = [SortKey("rating", ascending: false)]
        let ordered = try f.context.performAndWait { try f.context.fetch(request).map(\.name) }
        #expect(ordered == ["Ada", "Alf"])
        let count = try f.context.performAndWait { try f.context.count(for: FetchRequest<Writer>(predicate: #Predicate { $0.age == nil })) }
        #expect(count == 1)
    }

    @Test func translatesOnManyThreadsAtOnce() async throws {
        let model = try MacroFixture.makeModel()
        let expected = try FetchPredicate(format: "imprint.parent.name == 'Orbit' AND ANY books.pages > 400")
        let predicate = #Predicate<Writer> { $0.imprint?.parent?.name == "Orbit" && $0.books.contains { $0.pages > 400 } }
        let results = try await withThrowingTaskGroup(of: FetchPredicate.self) { group in
            for _ in 0..<16 { group.addTask { try FetchPredicate(predicate, model: model) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 16 && results.allSatisfy { $0 == expected })
    }

    @Test func unsavedObjectsMatchTheSame() throws {
        let f = try MacroFixture(save: false)
        try f.check(#Predicate<Writer> { $0.imprint?.name == "Penguin" && $0.books.contains { $0.pages > 400 } },
                    try FetchPredicate(format: "imprint.name == 'Penguin' AND ANY books.pages > 400"), fetches: ["Bob"])
        try f.check(#Predicate<Writer> { ($0.age ?? 100) > 30 }, try FetchPredicate(format: "age > 30 OR age == nil"), fetches: ["Ada", "Cyd", "Dee"])
    }

    @Test func translationLeavesObjectsUntouched() throws {
        // Probing reads key paths from prototypes of its own: ordinary objects are unaffected,
        // and a prototype is never registered in a context.
        let f = try MacroFixture()
        _ = try FetchPredicate(#Predicate<Writer> { $0.imprint?.parent?.name == "x" && $0.books.count > 0 }, model: f.model)
        try f.context.performAndWait {
            #expect(!f.context.hasChanges)
            #expect(try f.context.fetch(FetchRequest<Imprint>()).count == 2)
            let ada = try #require(try f.context.fetch(FetchRequest<Writer>(predicate: #Predicate { $0.name == "Ada" })).first)
            #expect(ada.imprint?.name == "Penguin")
        }
    }
}

@Suite("#Predicate translation errors")
struct MacroPredicateErrorTests {
    let model: ManagedObjectModel

    init() throws { model = try MacroFixture.makeModel() }

    func expectUnsupported(_ predicate: Predicate<Writer>, mentioning: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        expectGraphError(.invalidFetch, mentioning: ["#Predicate"] + mentioning, sourceLocation: sourceLocation) {
            _ = try FetchPredicate(predicate, model: model)
        }
    }

    @Test func arithmeticOnKeyPaths() {
        expectUnsupported(#Predicate<Writer> { $0.age! + 1 > 30 }, mentioning: ["arithmetic"])
    }

    @Test func computedPropertiesAreNotStored() {
        expectUnsupported(#Predicate<Writer> { $0.shout == "ADA" }, mentioning: ["computes a value from name"])
        expectUnsupported(#Predicate<Writer> { $0.name.count > 3 }, mentioning: ["length of a string"])
        expectUnsupported(#Predicate<Writer> { $0.books.first?.pages == 3 }, mentioning: ["key path"])
    }

    @Test("an unsupported key path is named by its type and the path it continues, not by Swift's '<computed 0x…>'")
    func unsupportedKeyPathsAreNamed() {
        let cases: [(Predicate<Writer>, [String])] = [
            (#Predicate<Writer> { $0.rating.isFinite }, ["Bool property of Double", "'rating'"]),
            (#Predicate<Writer> { $0.imprint?.name.utf8.isEmpty == true }, ["property of String", "'imprint.name'"]),
            (#Predicate<Writer> { $0.shout == "ADA" }, ["String property of Writer", "computes a value from name"]),
        ]
        for (predicate, words) in cases {
            let error = expectGraphError(.invalidFetch, mentioning: ["#Predicate"] + words) { _ = try FetchPredicate(predicate, model: model) }
            #expect(error.map { !$0.message.contains("0x") } == true, "\(error?.message ?? "")")
        }
    }

    @Test func outerObjectInsideAQuantifier() {
        expectUnsupported(#Predicate<Writer> { writer in writer.books.contains { $0.title == writer.name } }, mentioning: ["outer object"])
    }

    @Test func regularExpressions() {
        expectUnsupported(#Predicate<Writer> { $0.name.contains(/A+/) }, mentioning: ["regular expression"])
    }

    @Test func unboundClass() {
        expectGraphError(.unknownEntity, mentioning: ["ManagedObject"]) {
            _ = try FetchPredicate(#Predicate<ManagedObject> { $0.objectID == $0.objectID }, model: model)
        }
    }

    @Test func fetchReportsTheError() throws {
        let f = try MacroFixture()
        expectGraphError(.invalidFetch, mentioning: ["arithmetic"]) {
            _ = try f.names(FetchRequest(predicate: #Predicate<Writer> { $0.rating * 2 > 5 }))
        }
    }
}
