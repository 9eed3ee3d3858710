import Foundation
import ObjectGraph

// Random graphs and random predicates for the differential test, and their rendering as
// NSPredicate format strings (so the parser is exercised too).

/// SplitMix64: a small, fast, seedable generator.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A generated predicate, evaluated by ``Reference`` and rendered for ObjectGraph.
indirect enum GPred {
    case constant(Bool)
    case and([GPred])
    case or([GPred])
    case not(GPred)
    case comparison(GComparison)
}

/// A generated comparison.
struct GComparison {
    var modifier: ComparisonModifier = .direct
    var left: GOperand
    var op: ComparisonOperator
    var right: GOperand
    var caseInsensitive = false
    var diacriticInsensitive = false
}

/// A generated operand; key paths are component lists relative to the evaluated object.
indirect enum GOperand {
    case value(RVal)
    case list([RVal])
    case key([String])
    case evaluatedObject
    case subqueryCount([String], GPred)
}

/// Makes random graphs and predicates over ``DiffSchema``.
struct Generator {
    var rng: SplitMix64
    let schema = DiffSchema()
    static let base = Date(timeIntervalSinceReferenceDate: 750_000_000)
    /// Text pieces chosen for trouble: case pairs, precomposed and decomposed é, ß/ss,
    /// Turkish i's, a ligature, sigmas, emoji with and without modifiers, a flag, digits, the
    /// Ångström and Kelvin signs (canonically Å and K), a titlecase digraph, LIKE's escape and
    /// wildcards.
    static let tokens = ["a", "A", "b", "B", "é", "É", "e\u{301}", "e", "E", "ß", "ss", "SS", "ı", "I", "i", "İ", "ﬁ",
                         "σ", "ς", "Σ", "👍", "👍🏽", "🇩🇪", " ", "1", "2", "10", "Å", "\u{212B}", "\u{212A}", "k", "ǅ", "\\", "*", "?"]
    static let regexes = [".*", "a.*", ".*a", "[aAbB]*", "(a|b|é)+", ".", "..", "\\X", "\\X\\X", ".*👍.*", "[^ ]*", "e.*",
                          "ss|ß", ".*[12]+", "(?i)a.*", "É?.*"]

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
    mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }

    // MARK: Values

    mutating func string() -> String { (0..<int(0...3)).map { _ in pick(Self.tokens) }.joined() }

    mutating func value(_ kind: DiffSchema.Kind, attribute: String) -> RVal {
        switch kind {
        case .string: return .str(string())
        case .int:
            switch attribute {
            case "rank": return .num(Double(int(-3...3)))
            case "level": return .num(Double(int(-2...4)))
            default: return .num(Double(int(0...5)))
            }
        case .double: return .num(Double(int(-6...6)) / 2)
        case .decimal: return .num(Double(int(-8...8)) / 4)
        case .bool: return .bool(chance(0.5))
        case .date: return .date(Self.base.addingTimeInterval(Double(int(-4...4)) * 1800))
        }
    }

    /// A random graph: owners (with bosses), items (with owners), parts (with items).
    mutating func graph() -> RGraph {
        var graph = RGraph(schema: schema)
        for (entity, count) in [("Owner", int(3...7)), ("Item", int(12...30)), ("Part", int(0...45))] {
            for _ in 0..<count {
                var object = RGraph.Object()
                for a in schema.attributes[entity]! where !chance(0.15) { object.attributes[a.name] = value(a.kind, attribute: a.name) }
                graph.objects[entity]!.append(object)
            }
        }
        let owners = graph.objects["Owner"]!.count, items = graph.objects["Item"]!.count
        for o in 0..<owners where owners > 1 && chance(0.6) {
            var boss = int(0...(owners - 1))
            if boss == o { boss = (boss + 1) % owners }
            graph.objects["Owner"]![o].toOne["boss"] = boss
        }
        for i in 0..<items where chance(0.75) { graph.objects["Item"]![i].toOne["owner"] = int(0...(owners - 1)) }
        for p in graph.objects["Part"]!.indices where chance(0.85) { graph.objects["Part"]![p].toOne["item"] = int(0...(items - 1)) }
        return graph
    }

    // MARK: Predicates

    /// A random predicate for `root`. Without `backReferences`, no key path walks `items`
    /// (whose answers unsaved changes of other items would change).
    mutating func predicate(_ root: String, _ graph: RGraph, backReferences: Bool, depth: Int = 2, inSubquery: Bool = false) -> GPred {
        if depth > 0 && chance(0.35) {
            switch int(0...4) {
            case 0: return .not(predicate(root, graph, backReferences: backReferences, depth: depth - 1, inSubquery: inSubquery))
            case 1, 2: return .and((0..<int(2...3)).map { _ in predicate(root, graph, backReferences: backReferences, depth: depth - 1, inSubquery: inSubquery) })
            default: return .or((0..<int(2...3)).map { _ in predicate(root, graph, backReferences: backReferences, depth: depth - 1, inSubquery: inSubquery) })
            }
        }
        if chance(0.01) { return .constant(chance(0.5)) }
        let roll = int(0...99)
        if roll < 50 { return .comparison(attributeComparison(root, graph, backReferences: backReferences, toMany: false)) }
        if roll < 68 { return .comparison(attributeComparison(root, graph, backReferences: backReferences, toMany: true)) }
        if roll < 80 { return .comparison(aggregateComparison(root, graph, backReferences: backReferences)) }
        if roll < 88 && !inSubquery { return .comparison(subqueryComparison(root, graph, backReferences: backReferences)) }
        if roll < 96 { return .comparison(objectComparison(root, graph, backReferences: backReferences, inSubquery: inSubquery)) }
        return .comparison(keyAgainstKey(root, backReferences: backReferences))
    }

    /// A key path of relationship steps from `entity`, and where it ends.
    mutating func steps(from entity: String, count: Int, backReferences: Bool, toMany: Bool?) -> (path: [String], end: String, collection: Bool) {
        var path: [String] = [], current = entity, collection = false
        for _ in 0..<count {
            let options = schema.relationships[current]!.filter { r in
                (backReferences || r.name != "items") && (toMany == nil || (toMany! || !r.toMany))
            }
            guard !options.isEmpty else { break }
            let r = pick(options)
            path.append(r.name)
            collection = collection || r.toMany
            current = r.destination
        }
        return (path, current, collection)
    }

    /// A value of `attribute` some live object holds (so comparisons hit), else a fresh one.
    mutating func existing(_ entity: String, _ attribute: DiffSchema.Attribute, _ graph: RGraph) -> RVal {
        let held = graph.live(entity).compactMap { graph.objects[entity]![$0].attributes[attribute.name] }.filter { $0 != .null }
        if !held.isEmpty && chance(0.65) { return pick(held) }
        return value(attribute.kind, attribute: attribute.name)
    }

    mutating func attributeComparison(_ root: String, _ graph: RGraph, backReferences: Bool, toMany: Bool) -> GComparison {
        var walk = steps(from: root, count: toMany ? int(1...2) : pick([0, 0, 0, 1, 1, 2]), backReferences: backReferences, toMany: toMany ? true : false)
        if toMany && !walk.collection { walk = steps(from: root, count: 0, backReferences: backReferences, toMany: false) }
        let attribute = pick(schema.attributes[walk.end]!)
        if walk.collection && attribute.kind != .bool && chance(0.15) {
            // `value IN collection`: some member's value equals it.
            return GComparison(left: .value(existing(walk.end, attribute, graph)), op: .in, right: .key(walk.path + [attribute.name]), caseInsensitive: attribute.kind == .string && chance(0.4))
        }
        var c = GComparison(left: .key(walk.path + [attribute.name]), op: .equal, right: .value(.null))
        if walk.collection { c.modifier = pick([.any, .any, .all, .none]) }
        fill(&c, kind: attribute.kind, sample: { me in me.existing(walk.end, attribute, graph) })
        return c
    }

    /// Chooses an operator for `kind` and a right side, drawing constants from `sample`.
    mutating func fill(_ c: inout GComparison, kind: DiffSchema.Kind, sample: (inout Generator) -> RVal) {
        func constant(_ me: inout Generator) -> RVal {
            if me.chance(0.08) { return .null }
            var v = sample(&me)
            if case .num(let n) = v, me.chance(0.15) { v = .num(n + 0.5) }  // across integer and fractional
            return v
        }
        switch kind {
        case .string:
            c.op = pick([.equal, .notEqual, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual, .in, .between,
                         .beginsWith, .endsWith, .contains, .contains, .like, .like, .matches])
            c.caseInsensitive = chance(0.5)
            c.diacriticInsensitive = chance(0.4)
            let text = sample(&self)
            let s: String = { if case .str(let s) = text { return s } else { return "" } }()
            let characters = Array(s)
            switch c.op {
            case .beginsWith: c.right = .value(.str(String(characters.prefix(int(0...characters.count)))))
            case .endsWith: c.right = .value(.str(String(characters.suffix(int(0...characters.count)))))
            case .contains:
                let start = int(0...characters.count)
                c.right = .value(.str(String(characters[start..<int(start...characters.count)])))
            case .like:
                var pattern = ""
                for ch in characters { pattern += chance(0.2) ? "?" : (chance(0.15) ? "*" : String(ch)) }
                c.right = .value(.str(chance(0.3) ? "*" + pattern : pattern))
            case .matches: c.right = .value(.str(pick(Self.regexes)))
            case .in: c.right = .list((0..<int(1...3)).map { _ in sample(&self) })
            case .between:
                let a = sample(&self), b = sample(&self)
                c.right = .list((Reference.order(a, b, false, false) ?? 0) <= 0 ? [a, b] : [b, a])
            default: c.right = .value(chance(0.1) ? .null : text)
            }
        case .bool:
            c.op = pick([.equal, .notEqual, .in, .lessThan, .greaterThanOrEqual])
            switch c.op {
            case .in: c.right = .list([.bool(chance(0.5))])
            case .lessThan, .greaterThanOrEqual: c.right = .value(.bool(chance(0.5)))
            default: c.right = .value(chance(0.1) ? .null : (chance(0.25) ? .num(chance(0.5) ? 1 : 0) : .bool(chance(0.5))))
            }
        case .int, .double, .decimal, .date:
            c.op = pick([.equal, .notEqual, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual, .in, .between])
            switch c.op {
            case .in: c.right = .list((0..<int(1...3)).map { _ in sample(&self) })
            case .between:
                let a = sample(&self), b = sample(&self)
                c.right = .list((Reference.order(a, b, false, false) ?? 0) <= 0 ? [a, b] : [b, a])
            default: c.right = .value(constant(&self))
            }
        }
    }

    mutating func aggregateComparison(_ root: String, _ graph: RGraph, backReferences: Bool) -> GComparison {
        let walk = steps(from: root, count: pick([0, 0, 1]), backReferences: backReferences, toMany: nil)
        let toMany = schema.relationships[walk.end]!.filter { $0.toMany && (backReferences || $0.name != "items") }
        guard let r = toMany.isEmpty ? nil : pick(toMany) else { return attributeComparison(root, graph, backReferences: backReferences, toMany: false) }
        var c = GComparison(left: .key([]), op: .equal, right: .value(.null))
        if walk.collection { c.modifier = pick([.any, .all, .none]) }
        let function = pick(["@count", "@count", "@sum", "@avg", "@min", "@max"])
        if function == "@count" {
            c.left = .key(walk.path + [r.name, "@count"])
            fill(&c, kind: .int) { me in .num(Double(me.int(0...4))) }
            return c
        }
        let candidates = schema.attributes[r.destination]!.filter { a in
            function == "@min" || function == "@max" ? a.kind != .bool : [.int, .double, .decimal].contains(a.kind)
        }
        let attribute = pick(candidates)
        c.left = .key(walk.path + [r.name, function, attribute.name])
        let kind: DiffSchema.Kind = function == "@avg" ? .double : (function == "@sum" ? .int : attribute.kind)
        fill(&c, kind: kind) { me in
            if kind == .string || kind == .date { return me.existing(r.destination, attribute, graph) }
            return .num(Double(me.int(-4...8)) / (function == "@avg" ? 2 : 1))
        }
        return c
    }

    mutating func subqueryComparison(_ root: String, _ graph: RGraph, backReferences: Bool) -> GComparison {
        let walk = steps(from: root, count: pick([0, 0, 1]), backReferences: backReferences, toMany: false)
        let toMany = schema.relationships[walk.end]!.filter { $0.toMany && (backReferences || $0.name != "items") }
        guard let r = toMany.isEmpty ? nil : pick(toMany) else { return attributeComparison(root, graph, backReferences: backReferences, toMany: false) }
        let inner = predicate(r.destination, graph, backReferences: backReferences, depth: 1, inSubquery: true)
        var c = GComparison(left: .subqueryCount(walk.path + [r.name], inner), op: .equal, right: .value(.null))
        fill(&c, kind: .int) { me in .num(Double(me.int(0...3))) }
        return c
    }

    mutating func objectComparison(_ root: String, _ graph: RGraph, backReferences: Bool, inSubquery: Bool) -> GComparison {
        func someObject(_ me: inout Generator, _ entity: String) -> RVal {
            let live = graph.live(entity)
            return live.isEmpty || me.chance(0.12) ? .null : .obj(entity, me.pick(live))
        }
        if !inSubquery && chance(0.2) {
            let op: ComparisonOperator = pick([.equal, .notEqual, .in])
            let right: GOperand = op == .in ? .list((0..<int(1...3)).map { _ in someObject(&self, root) }.filter { $0 != .null }) : .value(someObject(&self, root))
            return GComparison(left: .evaluatedObject, op: op, right: right)
        }
        let walk = steps(from: root, count: pick([0, 0, 1]), backReferences: backReferences, toMany: false)
        let relationships = schema.relationships[walk.end]!.filter { backReferences || $0.name != "items" }
        let r = pick(relationships)
        if r.toMany {
            // Membership (to-one steps only), or a quantified comparison of the members.
            let member = someObject(&self, r.destination)
            if chance(0.5), member != .null { return GComparison(left: .key(walk.path + [r.name]), op: .contains, right: .value(member)) }
            return GComparison(modifier: pick([.any, .all, .none]), left: .key(walk.path + [r.name]), op: pick([.equal, .notEqual]), right: .value(member))
        }
        let op: ComparisonOperator = pick([.equal, .equal, .notEqual, .in])
        let right: GOperand = op == .in ? .list((0..<int(1...3)).map { _ in someObject(&self, r.destination) }.filter { $0 != .null }) : .value(someObject(&self, r.destination))
        return GComparison(left: .key(walk.path + [r.name]), op: op, right: right)
    }

    mutating func keyAgainstKey(_ root: String, backReferences: Bool) -> GComparison {
        func numericKey(_ me: inout Generator) -> [String] {
            let walk = me.steps(from: root, count: me.pick([0, 1]), backReferences: backReferences, toMany: false)
            let numeric = me.schema.attributes[walk.end]!.filter { [.int, .double, .decimal].contains($0.kind) }
            if let counted = me.schema.relationships[walk.end]!.first(where: { $0.toMany && (backReferences || $0.name != "items") }), numeric.isEmpty || me.chance(0.3) {
                return walk.path + [counted.name, "@count"]
            }
            return numeric.isEmpty ? [me.schema.attributes[root]!.first { $0.kind == .int }!.name] : walk.path + [me.pick(numeric).name]
        }
        return GComparison(left: .key(numericKey(&self)), op: pick([.equal, .notEqual, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual]), right: .key(numericKey(&self)))
    }

    /// Random sort keys for `root` (through to-one relationships only).
    mutating func sortKeys(_ root: String) -> [SortKey] {
        let paths = root == "Item"
            ? ["name", "rank", "score", "price", "flag", "when", "owner.title", "owner.level", "owner.boss.title"]
            : ["title", "level", "boss.title", "boss.level"]
        return (0..<int(1...3)).map { _ in
            SortKey(pick(paths), ascending: chance(0.5), comparison: pick([.natural, .natural, .caseInsensitive, .localizedStandard]))
        }
    }
}
