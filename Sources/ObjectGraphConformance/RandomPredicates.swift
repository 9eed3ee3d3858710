import Foundation
import ObjectGraph

/// Generates random, valid predicates over the conformance model's `AllTypes` and `Student`
/// entities for ``FetchScenarios/randomPredicates``: the values they compare with come from
/// the same small pools the objects' values do, so that equalities, ranges and string
/// operators hit as often as they miss.
struct RandomPredicates {
    enum Kind { case integer, real, decimal, string, bool, date, data, uuid, uri }

    /// Each `AllTypes` attribute the generator reads, with its kind.
    static let attributes: [(key: String, kind: Kind)] = [
        ("int16", .integer), ("int32", .integer), ("int64", .integer), ("double", .real), ("float", .real),
        ("decimal", .decimal), ("string", .string), ("bool", .bool), ("date", .date), ("data", .data),
        ("uuid", .uuid), ("uri", .uri),
    ]

    private static let reference = Date(timeIntervalSinceReferenceDate: 0)
    private static let uuids = ["0F2A5C36-1B51-4C4B-9E4A-2A7D7A1F0001", "7B0C9E1D-2222-4E3F-8A8B-000000000002", "FFFFFFFF-0000-4000-8000-000000000003"].compactMap(UUID.init(uuidString:))
    private static let strings: [String] = ["", "a", "A", "á", "Á", "ab", "Ab", "b", "straße", "STRASSE", "x%y", "x_y", "a*b", "naïve", "naive", "Zed", "zed", "ß", "e\u{301}", "é"]

    /// The values an attribute of each kind takes and is compared with; `.null` in every pool.
    static func values(_ kind: Kind) -> [AttributeValue] {
        switch kind {
        case .integer: return [.null, .integer(-3), .integer(0), .integer(1), .integer(2), .integer(7), .integer(300)]
        case .real: return [.null, .double(-1.5), .double(-0.0), .double(0), .double(0.5), .double(2), .double(1e10), .double(.infinity), .double(-.infinity), .double(.nan), .double(.leastNonzeroMagnitude)]
        case .decimal: return [.null, .decimal(0), .decimal(Decimal(string: "1.5")!), .decimal(-2.25), .decimal(10), .decimal(.nan)]
        case .string: return [.null] + strings.map { .string($0) }
        case .bool: return [.null, .bool(true), .bool(false)]
        case .date: return [.null] + [0, 100, -100, 1e6].map { .date(reference.addingTimeInterval($0)) }
        case .data: return [.null, .data(Data()), .data(Data([0])), .data(Data([1, 2])), .data(Data([0xFF]))]
        case .uuid: return [.null] + uuids.map { .uuid($0) }
        case .uri: return [.null, .uri(URL(string: "https://example.com/a")!), .uri(URL(string: "file:///tmp/b")!)]
        }
    }

    /// The values `key` takes and is compared with: its kind's, and for `int64` the extremes
    /// and integers beyond a double's precision (compared with doubles by the mixed-kind
    /// comparisons, which must not round them).
    static func values(of key: String, _ kind: Kind) -> [AttributeValue] {
        guard key == "int64" else { return values(kind) }
        return values(kind) + [.integer(.max), .integer(.min), .integer(1 << 53), .integer((1 << 53) + 1)]
    }

    /// Each attribute's pool, for the objects' values.
    static var pools: [(key: String, values: [AttributeValue])] { attributes.map { ($0.key, values(of: $0.key, $0.kind)) } }

    static let titles = ["Math", "math", "Physics", "Ärt"]
    static let subjectNames = ["Math", "Logic", "art", "Ärt", "Music"]
    static let names = ["Ada", "ada", "Álan", "alan", "Grace", "Édsger", "Linus", "zoe"]

    private static let likePatterns = ["a*", "*b", "?", "x?y", "*ß*", "A*b", "", "*", "st*e", "na?ve"]
    private static let regexes = ["a.*", "[aA].", ".*ß", "x.y", "(?i)zed", "n.*e", "", ".+"]

    // MARK: AllTypes

    /// A predicate over `AllTypes`, nesting at most three levels of `AND`/`OR`/`NOT`.
    func allTypes(_ random: inout SeededRandom, depth: Int) -> FetchPredicate {
        if let compound = compound(&random, depth: depth, allTypes) { return compound }
        let (key, kind) = Self.attributes[random.next(Self.attributes.count)]
        if random.next(12) == 0 {
            // Two attributes of one kind compared with each other.
            let others = Self.attributes.filter { $0.kind == kind || (Self.isNumeric($0.kind) && Self.isNumeric(kind)) }
            let other = others[random.next(others.count)].key
            let operators = Self.orderedOperators(kind) + (kind == .string ? [.beginsWith, .endsWith, .contains] : [])
            return comparison(.keyPath(key), operators[random.next(operators.count)], .keyPath(other), kind: kind, &random)
        }
        return attributeComparison(key, kind, &random)
    }

    /// An `AND` or `OR` of two predicates made by `make`, or a `NOT` of one, a third of the
    /// time while fewer than three levels deep; `nil` for a comparison.
    private func compound(_ random: inout SeededRandom, depth: Int, _ make: (inout SeededRandom, Int) -> FetchPredicate) -> FetchPredicate? {
        guard depth < 3, random.next(3) == 0 else { return nil }
        switch random.next(3) {
        case 0: return .and([make(&random, depth + 1), make(&random, depth + 1)])
        case 1: return .or([make(&random, depth + 1), make(&random, depth + 1)])
        default: return .not(make(&random, depth + 1))
        }
    }

    /// One or two sort keys over `AllTypes`.
    func allTypesSort(_ random: inout SeededRandom) -> [SortKey] {
        let sortable = Self.attributes.filter { [.integer, .real, .decimal, .string, .bool, .date].contains($0.kind) }
        return (0..<(1 + random.next(2))).map { _ in
            let (key, kind) = sortable[random.next(sortable.count)]
            let comparison: SortKey.Comparison = kind == .string ? [.natural, .caseInsensitive, .localizedStandard][random.next(3)] : .natural
            return SortKey(key, ascending: random.next(2) == 0, comparison: comparison)
        }
    }

    /// A dictionary fetch over `entity` (`AllTypes` or `IndexedTypes`) filtered by
    /// `predicate`: grouped by an attribute with the count, extremes, sum and mean of others;
    /// or two attributes' values, distinct or not; sorted by what it groups or fetches.
    func dictionaryRequest(_ entity: String, predicate: FetchPredicate, _ random: inout SeededRandom) -> FetchRequest<ManagedObject> {
        let groupable = ["int16", "int64", "double", "string", "bool", "date", "decimal"]
        let ordered = ["int32", "int64", "double", "float", "decimal", "string", "date"]
        let numeric = ["int16", "int32", "int64", "double", "float", "decimal"]
        func pick(_ keys: [String]) -> String { keys[random.next(keys.count)] }
        var request = FetchRequest<ManagedObject>(entityName: entity, predicate: predicate)
        let first = pick(groupable)
        if random.next(2) == 0 {
            request.propertiesToFetch = [
                .key(first), .count(as: "n"), .minimum(pick(ordered), as: "low"), .maximum(pick(ordered), as: "high"),
                .sum(pick(numeric), as: "total"), .average(pick(numeric), as: "mean"),
            ]
            request.propertiesToGroupBy = [first]
            request.sortKeys = [SortKey(first, ascending: random.next(2) == 0)]
        } else {
            let second = pick(groupable.filter { $0 != first })
            request.propertiesToFetch = [.key(first), .key(second)]
            request.returnsDistinctResults = random.next(2) == 0
            request.sortKeys = [SortKey(first, ascending: random.next(2) == 0), SortKey(second)]
        }
        return request
    }

    private func attributeComparison(_ key: String, _ kind: Kind, _ random: inout SeededRandom) -> FetchPredicate {
        var pool = Self.values(of: key, kind)
        // Mixed numeric kinds: an integer attribute against 1.5, a double against 7, and
        // doubles at the edge of what an Int64 holds.
        if Self.isNumeric(kind), random.next(4) == 0 {
            pool += [.double(1.5), .integer(2), .decimal(Decimal(7)), .double(9_007_199_254_740_992), .double(9.223372036854775807e18), .integer(.max)]
        }
        func constant() -> PredicateOperand { .constant(pool[random.next(pool.count)]) }
        switch random.next(kind == .string ? 6 : 4) {
        case 0:
            // Mostly short lists; now and then one longer than a store may put in one
            // expression (hundreds of items, repeats included).
            let count = random.next(10) == 0 ? 100 + random.next(700) : 1 + random.next(3)
            return comparison(.keyPath(key), .in, .list((0..<count).map { _ in constant() }), kind: kind, &random)
        case 1 where Self.isOrdered(kind):
            let bounds = [pool[random.next(pool.count)], pool[random.next(pool.count)]].map(PredicateOperand.constant)
            return comparison(.keyPath(key), .between, .list(bounds), kind: kind, &random)
        case 4:
            let op: ComparisonOperator = [.beginsWith, .endsWith, .contains][random.next(3)]
            return comparison(.keyPath(key), op, .constant(.string(Self.strings[random.next(Self.strings.count)])), kind: kind, &random)
        case 5:
            if random.next(2) == 0 {
                return comparison(.keyPath(key), .like, .constant(.string(Self.likePatterns[random.next(Self.likePatterns.count)])), kind: kind, &random)
            }
            return comparison(.keyPath(key), .matches, .constant(.string(Self.regexes[random.next(Self.regexes.count)])), kind: kind, &random)
        default:
            let operators = Self.orderedOperators(kind)
            return comparison(.keyPath(key), operators[random.next(operators.count)], constant(), kind: kind, &random)
        }
    }

    private func comparison(_ left: PredicateOperand, _ op: ComparisonOperator, _ right: PredicateOperand, kind: Kind, _ random: inout SeededRandom) -> FetchPredicate {
        let options: StringComparisonOptions = kind == .string ? [[], [.caseInsensitive], [.diacriticInsensitive], [.caseInsensitive, .diacriticInsensitive]][random.next(4)] : []
        return .comparison(PredicateComparison(left, op, right, options: options))
    }

    private static func isNumeric(_ kind: Kind) -> Bool { kind == .integer || kind == .real || kind == .decimal }
    private static func isOrdered(_ kind: Kind) -> Bool { isNumeric(kind) || kind == .string || kind == .date }
    private static func orderedOperators(_ kind: Kind) -> [ComparisonOperator] {
        isOrdered(kind) ? [.equal, .notEqual, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual] : [.equal, .notEqual]
    }

    // MARK: Student

    /// A predicate over `Student`: its name and age, its class's title (a to-one key path),
    /// its subjects (`ANY`/`ALL`/`NONE`, `@count`, `SUBQUERY`), nested like ``allTypes(_:depth:)``.
    func student(_ random: inout SeededRandom, depth: Int) -> FetchPredicate {
        if let compound = compound(&random, depth: depth, student) { return compound }
        let texts = Self.names + Self.titles + Self.subjectNames + ["A", "a", "M", "ä", ""]
        // A string operator and what it compares with: nil only for == and !=.
        func stringComparison(_ key: String, modifier: ComparisonModifier = .direct) -> FetchPredicate {
            let op: ComparisonOperator = [.equal, .notEqual, .lessThan, .greaterThanOrEqual, .beginsWith, .endsWith, .contains, .like][random.next(8)]
            let value: AttributeValue = (op == .equal || op == .notEqual) && random.next(6) == 0 ? .null : .string(texts[random.next(texts.count)])
            return .comparison(PredicateComparison(.keyPath(key), op, .constant(value), options: options(), modifier: modifier))
        }
        func options() -> StringComparisonOptions { [[], [.caseInsensitive], [.diacriticInsensitive], [.caseInsensitive, .diacriticInsensitive]][random.next(4)] }
        func count() -> PredicateOperand { .constant(.integer(Int64(random.next(4)))) }
        let countOp: ComparisonOperator = [.equal, .notEqual, .lessThan, .greaterThan, .lessThanOrEqual, .greaterThanOrEqual][random.next(6)]
        switch random.next(10) {
        case 0: return stringComparison("name")
        case 9:
            // A key path on each side: the name against the class's title.
            let op: ComparisonOperator = [.equal, .notEqual, .lessThan, .greaterThanOrEqual, .beginsWith, .contains][random.next(6)]
            return .comparison(PredicateComparison(.keyPath("name"), op, .keyPath("schoolClass.title"), options: options()))
        case 1:
            let age: AttributeValue = random.next(6) == 0 ? .null : .integer(Int64(random.next(90)))
            return .comparison(PredicateComparison(.keyPath("age"), Self.orderedOperators(.integer)[random.next(6)], .constant(age)))
        case 2: return stringComparison("schoolClass.title")
        case 3: return .comparison(PredicateComparison(.keyPath("schoolClass"), random.next(2) == 0 ? .equal : .notEqual, .constant(.null)))
        case 4, 5:
            return stringComparison("subjects.name", modifier: [.any, .all, .none][random.next(3)])
        case 6: return .comparison(PredicateComparison(.keyPath("subjects.@count"), countOp, count()))
        case 7:
            let inner = stringComparison("name")
            return .comparison(PredicateComparison(.subqueryCount(collection: "subjects", variable: "s", predicate: inner), countOp, count()))
        default:
            return .comparison(PredicateComparison(.keyPath("schoolClass.students.@count"), countOp, .constant(.integer(Int64(random.next(12))))))
        }
    }
}
