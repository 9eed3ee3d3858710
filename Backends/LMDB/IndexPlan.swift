import CLMDB
import ObjectGraph

/// Which stretches of one secondary index hold every row a predicate can match, found from
/// one conjunct of the form `attribute op constant` on an indexed attribute of the fetched
/// entity (equality, IN, an ordering comparison or BETWEEN, without `[cd]` options).
///
/// A plan only narrows the candidates: the fetch still evaluates the whole predicate on each
/// candidate with the shared evaluator, so it must hold a superset of the matches, never
/// decide them. Conjuncts it cannot express exactly are left to the evaluator.
struct IndexPlan {
    /// A key range: `lower` inclusive; `upper` inclusive or exclusive; `nil` for no end.
    struct KeyRange {
        var lower: [UInt8]
        var upper: [UInt8]?
        var upperInclusive: Bool

        static func exactly(_ key: [UInt8]) -> KeyRange { KeyRange(lower: key, upper: key, upperInclusive: true) }

        func admits(_ key: UnsafeRawBufferPointer) -> Bool {
            guard let upper else { return true }
            let order = IndexPlan.compare(key, upper)
            return upperInclusive ? order <= 0 : order < 0
        }
    }

    let attribute: AttributeDescription
    let dbi: MDB_dbi
    let ranges: [KeyRange]

    /// Bytewise order, as LMDB's default comparator orders keys.
    static func compare(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Int {
        let count = min(a.count, b.count)
        for index in 0..<count where a[index] != b[index] { return a[index] < b[index] ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// The first plan found among the predicate's top-level conjuncts, equality first.
    static func make(_ predicate: CompiledPredicate, layout: LMDBLayout, handles: LMDBHandles, keyLimit: Int) -> IndexPlan? {
        let conjuncts: [CompiledPredicate]
        if case .and(let parts) = predicate { conjuncts = parts } else { conjuncts = [predicate] }
        var best: IndexPlan? = nil
        for conjunct in conjuncts {
            guard case .comparison(let comparison) = conjunct,
                  let plan = plan(comparison, layout: layout, handles: handles, keyLimit: keyLimit) else { continue }
            if comparison.op == .equal || comparison.op == .in { return plan }
            if best == nil { best = plan }
        }
        return best
    }

    private static func plan(_ comparison: CompiledComparison, layout: LMDBLayout, handles: LMDBHandles, keyLimit: Int) -> IndexPlan? {
        guard comparison.modifier == .direct, comparison.options.isEmpty,
              case .keyPath(let path) = comparison.left, path.steps.isEmpty,
              case .attribute(let attribute) = path.terminal,
              let dbi = handles.index(of: attribute) else { return nil }
        func key(_ operand: CompiledOperand) -> [UInt8]? {
            guard case .constant(var value) = operand else { return nil }
            // A double attribute compared with an integer: exact while the integer fits a double.
            // (`magnitude`, not `abs`: abs(Int64.min) overflows, and a user's constant reaches here.)
            if case .integer(let i) = value, attribute.type == .double || attribute.type == .float, i.magnitude <= 1 << 53 { value = .double(Double(i)) }
            return IndexKey.encode(value, type: attribute.type, limit: keyLimit)
        }
        func isNull(_ operand: CompiledOperand) -> Bool {
            if case .constant(.null) = operand { return true }
            return false
        }
        let unordered = IndexKey.hasUnorderedValues(attribute.type) ? [KeyRange.exactly(IndexKey.nan)] : []
        var ranges: [KeyRange]
        switch comparison.op {
        case .equal:
            guard let exact = key(comparison.right) else { return nil }
            ranges = [.exactly(exact)]
        case .in:
            guard case .list(let items) = comparison.right else { return nil }
            ranges = []
            for item in items {
                guard let exact = key(item) else { return nil }
                ranges.append(.exactly(exact))
            }
        case .lessThan, .lessThanOrEqual:
            guard !isNull(comparison.right), let bound = key(comparison.right) else { return nil }
            ranges = [KeyRange(lower: IndexKey.firstValue, upper: bound, upperInclusive: true)] + unordered
        case .greaterThan, .greaterThanOrEqual:
            guard !isNull(comparison.right), let bound = key(comparison.right) else { return nil }
            ranges = [KeyRange(lower: bound, upper: IndexKey.nan, upperInclusive: false)] + unordered
        case .between:
            guard case .list(let bounds) = comparison.right, bounds.count == 2, !isNull(bounds[0]), !isNull(bounds[1]),
                  let low = key(bounds[0]), let high = key(bounds[1]) else { return nil }
            ranges = [KeyRange(lower: low, upper: high, upperInclusive: true)] + unordered
        default:
            return nil
        }
        return IndexPlan(attribute: attribute, dbi: dbi, ranges: ranges)
    }

    /// Calls `body` with each entry (row key and entity code) in the plan's ranges.
    func forEachEntry(in txn: LMDBTransaction, _ body: (Int64, UInt16) throws -> Void) throws {
        // Ranges may overlap (`IN {1, 1}`, or bounds cut to the same key): each row once.
        var seen = Set<Int64>()
        try txn.withCursor(dbi) { cursor in
            for range in ranges {
                var entry = try cursor.position(MDB_SET_RANGE, key: range.lower)
                while let current = entry, range.admits(current.key) {
                    var reader = ByteReader(current.value)
                    let pk = try reader.orderedInt64()
                    if ranges.count == 1 || seen.insert(pk).inserted { try body(pk, try reader.u16()) }
                    entry = try cursor.move(MDB_NEXT)
                }
            }
        }
    }
}
