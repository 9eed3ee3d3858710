import Foundation
import ObjectGraph

// The brute-force side of the differential test: a plain-Swift copy of a generated graph and
// an interpreter for predicates and sort keys over it, written from Core Data's semantics and
// sharing no code with ObjectGraph's evaluator, folding or sorting.

/// The test model: items with one attribute of each comparable kind, owned by owners (who have
/// bosses), each holding parts.
struct DiffSchema {
    enum Kind: CaseIterable { case string, int, double, decimal, bool, date }
    struct Attribute { let name: String; let kind: Kind; let type: AttributeType }
    struct Relationship { let name: String; let destination: String; let toMany: Bool; let inverse: String }

    let attributes: [String: [Attribute]] = [
        "Item": [
            Attribute(name: "name", kind: .string, type: .string), Attribute(name: "rank", kind: .int, type: .integer32),
            Attribute(name: "score", kind: .double, type: .double), Attribute(name: "price", kind: .decimal, type: .decimal),
            Attribute(name: "flag", kind: .bool, type: .boolean), Attribute(name: "when", kind: .date, type: .date),
        ],
        "Owner": [Attribute(name: "title", kind: .string, type: .string), Attribute(name: "level", kind: .int, type: .integer64)],
        "Part": [Attribute(name: "label", kind: .string, type: .string), Attribute(name: "weight", kind: .int, type: .integer16)],
    ]
    let relationships: [String: [Relationship]] = [
        "Item": [
            Relationship(name: "owner", destination: "Owner", toMany: false, inverse: "items"),
            Relationship(name: "parts", destination: "Part", toMany: true, inverse: "item"),
        ],
        "Owner": [
            Relationship(name: "boss", destination: "Owner", toMany: false, inverse: "reports"),
            Relationship(name: "reports", destination: "Owner", toMany: true, inverse: "boss"),
            Relationship(name: "items", destination: "Item", toMany: true, inverse: "owner"),
        ],
        "Part": [Relationship(name: "item", destination: "Item", toMany: false, inverse: "parts")],
    ]

    func attribute(_ entity: String, _ name: String) -> Attribute? { attributes[entity]?.first { $0.name == name } }
    func relationship(_ entity: String, _ name: String) -> Relationship? { relationships[entity]?.first { $0.name == name } }

    /// The ObjectGraph model of the schema: every attribute optional.
    func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            for entity in ["Item", "Owner", "Part"] {
                m.entity(entity) { e in
                    for a in attributes[entity]! { e.attribute(a.name, a.type, optional: true) }
                    for r in relationships[entity]! {
                        if r.toMany { e.toMany(r.name, r.destination, inverse: r.inverse) } else { e.toOne(r.name, r.destination, inverse: r.inverse) }
                    }
                }
            }
        }
    }
}

/// A value as the reference sees it: every number is a `Double` (the generator only makes
/// numbers a Double holds exactly), objects are (entity, index).
enum RVal: Hashable {
    case null, num(Double), str(String), bool(Bool), date(Date), obj(String, Int)
}

/// The graph as plain values. To-many relationships are derived from their to-one inverses,
/// so both sides always agree; deleted objects are skipped everywhere (nullify).
struct RGraph {
    struct Object {
        var attributes: [String: RVal] = [:]
        var toOne: [String: Int] = [:]
        var deleted = false
        /// The primary-key tie-break: saved objects by primary key, then unsaved ones in creation order.
        var tieKey: (Int, Int64) = (0, 0)
    }

    let schema: DiffSchema
    var objects: [String: [Object]] = ["Item": [], "Owner": [], "Part": []]

    func live(_ entity: String) -> [Int] { objects[entity]!.indices.filter { !objects[entity]![$0].deleted } }

    func target(_ entity: String, _ index: Int, _ relationship: DiffSchema.Relationship) -> Int? {
        guard let t = objects[entity]![index].toOne[relationship.name], !objects[relationship.destination]![t].deleted else { return nil }
        return t
    }

    func members(_ entity: String, _ index: Int, _ relationship: DiffSchema.Relationship) -> [Int] {
        live(relationship.destination).filter { objects[relationship.destination]![$0].toOne[relationship.inverse] == index }
    }
}

/// The reference interpreter.
struct Reference {
    let graph: RGraph
    var schema: DiffSchema { graph.schema }

    // MARK: Text

    /// `[c]`: full case folding, locale-independent — per scalar, upper then lower case maps
    /// "ß" to "ss", "ﬁ" to "fi", "ς" and "Σ" to "σ", "İ" to "i" + U+0307; dotless "ı" has no
    /// folding (the Turkic mappings are not the default). `[d]`: canonical decomposition, then
    /// every nonspacing mark removed.
    static func fold(_ s: String, _ c: Bool, _ d: Bool) -> String {
        var text = s
        if c {
            var out = ""
            for u in text.unicodeScalars {
                if u == "\u{131}" { out.unicodeScalars.append(u) } else { out += String(u).uppercased().lowercased() }
            }
            text = out
        }
        if d {
            var out = String.UnicodeScalarView()
            for u in text.decomposedStringWithCanonicalMapping.unicodeScalars where u.properties.generalCategory != .nonspacingMark {
                out.append(u)
            }
            text = String(out)
        }
        return text
    }

    /// Natural order: Unicode scalars of the canonical composition.
    static func scalarOrder(_ a: String, _ b: String) -> Int {
        let x = a.precomposedStringWithCanonicalMapping.unicodeScalars.map(\.value)
        let y = b.precomposedStringWithCanonicalMapping.unicodeScalars.map(\.value)
        for (p, q) in zip(x, y) where p != q { return p < q ? -1 : 1 }
        return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
    }

    /// Localized-standard order of already folded strings: runs of ASCII digits by value,
    /// everything else by scalar.
    static func numericOrder(_ a: String, _ b: String) -> Int {
        let x = Array(a.unicodeScalars), y = Array(b.unicodeScalars)
        var i = 0, j = 0
        func isDigit(_ u: Unicode.Scalar) -> Bool { u.value >= 48 && u.value <= 57 }
        while i < x.count && j < y.count {
            if isDigit(x[i]) && isDigit(y[j]) {
                var m = 0, n = 0
                while i < x.count, isDigit(x[i]) { m = m * 10 + Int(x[i].value - 48); i += 1 }
                while j < y.count, isDigit(y[j]) { n = n * 10 + Int(y[j].value - 48); j += 1 }
                if m != n { return m < n ? -1 : 1 }
            } else {
                if x[i] != y[j] { return x[i].value < y[j].value ? -1 : 1 }
                i += 1; j += 1
            }
        }
        return (x.count - i) == (y.count - j) ? 0 : ((x.count - i) < (y.count - j) ? -1 : 1)
    }

    /// LIKE over characters: `*` any run, `?` one character, a backslash making the next
    /// character literal (one ending the pattern is itself).
    static func like(_ text: [Character], _ source: [Character]) -> Bool {
        // The pattern as (character, literal) pairs: a wildcard is a non-literal * or ?.
        var pattern: [(character: Character, literal: Bool)] = []
        var index = 0
        while index < source.count {
            if source[index] == "\\" && index + 1 < source.count {
                pattern.append((source[index + 1], true))
                index += 2
            } else {
                pattern.append((source[index], source[index] != "*" && source[index] != "?"))
                index += 1
            }
        }
        // table[i][j]: text[i...] matches pattern[j...]
        var table = Array(repeating: Array(repeating: false, count: pattern.count + 1), count: text.count + 1)
        table[text.count][pattern.count] = true
        for j in stride(from: pattern.count - 1, through: 0, by: -1) where !pattern[j].literal && pattern[j].character == "*" {
            table[text.count][j] = table[text.count][j + 1]
        }
        for i in stride(from: text.count - 1, through: 0, by: -1) {
            for j in stride(from: pattern.count - 1, through: 0, by: -1) {
                switch (pattern[j].literal, pattern[j].character) {
                case (false, "*"): table[i][j] = table[i][j + 1] || table[i + 1][j]
                case (false, _): table[i][j] = table[i + 1][j + 1]
                default: table[i][j] = pattern[j].character == text[i] && table[i + 1][j + 1]
                }
            }
        }
        return table[0][0]
    }

    static func hasPrefix(_ t: [Character], _ p: [Character]) -> Bool { p.count <= t.count && Array(t[0..<p.count]) == p }
    static func hasSuffix(_ t: [Character], _ p: [Character]) -> Bool { p.count <= t.count && Array(t[(t.count - p.count)...]) == p }
    static func contains(_ t: [Character], _ p: [Character]) -> Bool {
        if p.isEmpty { return true }
        if p.count > t.count { return false }
        return (0...(t.count - p.count)).contains { Array(t[$0..<($0 + p.count)]) == p }
    }

    // MARK: Values

    static func equal(_ a: RVal, _ b: RVal, _ c: Bool, _ d: Bool) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.str(let x), .str(let y)): return fold(x, c, d) == fold(y, c, d)
        case (.bool(let x), .num(let y)), (.num(let y), .bool(let x)): return y == (x ? 1 : 0)  // NSNumber: YES is 1
        default: return order(a, b, c, d) == 0
        }
    }

    static func order(_ a: RVal, _ b: RVal, _ c: Bool, _ d: Bool) -> Int? {
        switch (a, b) {
        case (.num(let x), .num(let y)): return x == y ? 0 : (x < y ? -1 : 1)
        case (.str(let x), .str(let y)): return scalarOrder(fold(x, c, d), fold(y, c, d))
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (!x ? -1 : 1)
        case (.date(let x), .date(let y)): return x == y ? 0 : (x < y ? -1 : 1)
        case (.obj(let e, let i), .obj(let f, let j)): return e == f && i == j ? 0 : nil
        default: return nil
        }
    }

    // MARK: Key paths

    /// The values a key path reaches from an object, and whether they form a collection
    /// (the path walks a to-many step; an empty to-one step before it leaves it empty). A
    /// path of to-one steps gives one value, `.null` when a step is empty.
    func values(_ entity: String, _ index: Int, _ path: [String]) -> (values: [RVal], collection: Bool) {
        var rows = [index]
        var current = entity
        var collection = false
        var k = 0
        while k < path.count {
            let component = path[k]
            if let attribute = schema.attribute(current, component) {
                let values = rows.map { graph.objects[current]![$0].attributes[attribute.name] ?? .null }
                return (values.isEmpty && !collection ? [.null] : values, collection)
            }
            let r = schema.relationship(current, component)!
            let isLast = k == path.count - 1
            if r.toMany, k + 1 < path.count, path[k + 1].hasPrefix("@") {
                let function = path[k + 1]
                let values = rows.map { row -> RVal in
                    let members = graph.members(current, row, r)
                    if function == "@count" { return .num(Double(members.count)) }
                    let present = members.map { graph.objects[r.destination]![$0].attributes[path[k + 2]] ?? .null }.filter { $0 != .null }
                    switch function {
                    case "@sum": return .num(present.reduce(0.0) { if case .num(let v) = $1 { return $0 + v } else { return $0 } })
                    case "@avg":
                        guard !present.isEmpty else { return .null }
                        return .num(present.reduce(0.0) { if case .num(let v) = $1 { return $0 + v } else { return $0 } } / Double(present.count))
                    default:
                        let sorted = present.sorted { (Self.order($0, $1, false, false) ?? 0) < 0 }
                        return (function == "@min" ? sorted.first : sorted.last) ?? .null
                    }
                }
                return (values.isEmpty && !collection ? [.null] : values, collection)
            }
            if isLast {
                if r.toMany {
                    return (rows.flatMap { row in graph.members(current, row, r).map { RVal.obj(r.destination, $0) } }, true)
                }
                let values = rows.map { row in graph.target(current, row, r).map { RVal.obj(r.destination, $0) } ?? .null }
                return (values.isEmpty && !collection ? [.null] : values, collection)
            }
            rows = r.toMany ? rows.flatMap { graph.members(current, $0, r) } : rows.compactMap { graph.target(current, $0, r) }
            collection = collection || r.toMany
            current = r.destination
            k += 1
        }
        fatalError("a key path ends in an attribute, a relationship or an aggregate")
    }

    // MARK: Predicates

    func evaluate(_ predicate: GPred, _ entity: String, _ index: Int) -> Bool {
        switch predicate {
        case .constant(let value): return value
        case .and(let parts): return parts.allSatisfy { evaluate($0, entity, index) }
        case .or(let parts): return parts.contains { evaluate($0, entity, index) }
        case .not(let inner): return !evaluate(inner, entity, index)
        case .comparison(let c): return evaluate(c, entity, index)
        }
    }

    private func single(_ operand: GOperand, _ entity: String, _ index: Int) -> RVal {
        switch operand {
        case .value(let v): return v
        case .list: fatalError("a list is not a single value")
        case .evaluatedObject: return .obj(entity, index)
        case .key(let path): return values(entity, index, path).values.first ?? .null
        case .subqueryCount(let collection, let inner):
            var (e, rows) = (entity, [index])
            for step in collection.dropLast() {
                let r = schema.relationship(e, step)!
                rows = rows.compactMap { graph.target(e, $0, r) }
                e = r.destination
            }
            let r = schema.relationship(e, collection.last!)!
            let members = rows.flatMap { graph.members(e, $0, r) }
            return .num(Double(members.filter { evaluate(inner, r.destination, $0) }.count))
        }
    }

    private func evaluate(_ c: GComparison, _ entity: String, _ index: Int) -> Bool {
        let right: [RVal]
        switch c.right {
        case .list(let items): right = items
        case .key(let path) where c.op == .in: right = values(entity, index, path).values  // `value IN collection`
        default: right = [single(c.right, entity, index)]
        }
        if case .key(let path) = c.left {
            let (values, collection) = self.values(entity, index, path)
            if c.op == .contains, c.modifier == .direct, collection {
                return values.contains(right[0])  // membership in a to-many relationship
            }
            if collection {
                let hits = values.filter { compare($0, c, right) }
                switch c.modifier {
                case .any, .direct: return !hits.isEmpty
                case .all: return hits.count == values.count
                case .none: return hits.isEmpty
                }
            }
            return compare(values.first ?? .null, c, right)
        }
        return compare(single(c.left, entity, index), c, right)
    }

    private func compare(_ left: RVal, _ c: GComparison, _ right: [RVal]) -> Bool {
        switch c.op {
        case .equal: return Self.equal(left, right[0], c.caseInsensitive, c.diacriticInsensitive)
        case .notEqual: return !Self.equal(left, right[0], c.caseInsensitive, c.diacriticInsensitive)
        case .lessThan: return Self.order(left, right[0], c.caseInsensitive, c.diacriticInsensitive).map { $0 < 0 } ?? false
        case .lessThanOrEqual: return Self.order(left, right[0], c.caseInsensitive, c.diacriticInsensitive).map { $0 <= 0 } ?? false
        case .greaterThan: return Self.order(left, right[0], c.caseInsensitive, c.diacriticInsensitive).map { $0 > 0 } ?? false
        case .greaterThanOrEqual: return Self.order(left, right[0], c.caseInsensitive, c.diacriticInsensitive).map { $0 >= 0 } ?? false
        case .in: return right.contains { Self.equal(left, $0, c.caseInsensitive, c.diacriticInsensitive) }
        case .between:
            guard let low = Self.order(left, right[0], c.caseInsensitive, c.diacriticInsensitive),
                  let high = Self.order(left, right[1], c.caseInsensitive, c.diacriticInsensitive) else { return false }
            return low >= 0 && high <= 0
        case .beginsWith, .endsWith, .contains, .like:
            guard case .str(let l) = left, case .str(let r) = right[0] else { return false }
            let t = Array(Self.fold(l, c.caseInsensitive, c.diacriticInsensitive)), p = Array(Self.fold(r, c.caseInsensitive, c.diacriticInsensitive))
            switch c.op {
            case .beginsWith: return Self.hasPrefix(t, p)
            case .endsWith: return Self.hasSuffix(t, p)
            case .contains: return Self.contains(t, p)
            default: return Self.like(t, p)
            }
        case .matches:
            guard case .str(let l) = left, case .str(let r) = right[0] else { return false }
            let text = c.diacriticInsensitive ? Self.fold(l, false, true) : l
            let pattern = c.diacriticInsensitive ? Self.fold(r, false, true) : r
            let regex = try! NSRegularExpression(pattern: "^(?:" + pattern + ")$", options: c.caseInsensitive ? [.caseInsensitive] : [])
            return regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        }
    }

    // MARK: Fetching

    /// The indices of the live `entity` objects matching `predicate`, ordered by `sortKeys`
    /// (ties, and no keys, by the tie key), then sliced.
    func fetch(_ entity: String, _ predicate: GPred, sortKeys: [SortKey], offset: Int, limit: Int) -> [Int] {
        var rows = graph.live(entity).filter { evaluate(predicate, entity, $0) }
        let keyed = rows.map { row in (row, sortKeys.map { key in prepare(values(entity, row, key.keyPath.split(separator: ".").map(String.init)).values.first ?? .null, key.comparison) }) }
        rows = keyed.sorted { a, b in
            for (k, key) in sortKeys.enumerated() {
                let o = Self.sortOrder(a.1[k], b.1[k], key.comparison)
                if o != 0 { return key.ascending ? o < 0 : o > 0 }
            }
            let x = graph.objects[entity]![a.0].tieKey, y = graph.objects[entity]![b.0].tieKey
            return x.0 != y.0 ? x.0 < y.0 : x.1 < y.1
        }.map(\.0)
        let start = min(offset, rows.count)
        let end = limit > 0 ? min(rows.count, start + limit) : rows.count
        return Array(rows[start..<end])
    }

    private func prepare(_ value: RVal, _ comparison: SortKey.Comparison) -> RVal {
        guard case .str(let s) = value else { return value }
        switch comparison {
        case .natural: return value
        case .caseInsensitive: return .str(Self.fold(s, true, false))
        case .localizedStandard: return .str(Self.fold(s, true, true))
        }
    }

    /// nil first; localized-standard strings by ``numericOrder(_:_:)``.
    static func sortOrder(_ a: RVal, _ b: RVal, _ comparison: SortKey.Comparison) -> Int {
        switch (a, b) {
        case (.null, .null): return 0
        case (.null, _): return -1
        case (_, .null): return 1
        case (.str(let x), .str(let y)) where comparison == .localizedStandard: return numericOrder(x, y)
        default: return order(a, b, false, false) ?? 0
        }
    }
}
