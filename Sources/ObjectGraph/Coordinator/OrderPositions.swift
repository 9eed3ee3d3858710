/// Positions for an ordered relationship stored with gaps (multiples of 1024), so that an
/// insert or a move in the middle usually writes one member's position instead of
/// renumbering the list. In the shared layer so that every store keeping positions with its
/// members (SQLite's rows, LMDB's duplicates) places them alike.
package enum OrderPositions {
    /// The distance between neighbouring positions when a list is numbered afresh.
    package static let gap: Int64 = 1024

    /// The positions to write so that `order` is the stored order, given the positions members
    /// have now (see ``plan(positions:)``), by member.
    package static func plan(order: [ObjectID], existing: [ObjectID: Int64]) -> [ObjectID: Int64] {
        let planned = plan(positions: order.map { existing[$0] })
        var result: [ObjectID: Int64] = [:]
        for (index, position) in planned.enumerated() { if let position { result[order[index]] = position } }
        return result
    }

    /// The positions to write for the members of a list, in list order, given the position
    /// each has now (`nil` for one that joins); `nil` where a member keeps its position.
    /// Members whose relative order is unchanged (a longest increasing run of their current
    /// positions) keep their positions; the others get positions between their kept
    /// neighbours, or, when a gap is too small, the whole list is renumbered. By index, so a
    /// store that knows where each member stands hashes no ID here (by member, with the
    /// longest run searched even when the positions all increase, it was a sixth of an append
    /// to a list of 20,000 on LMDB, perf).
    package static func plan(positions current: [Int64?]) -> [Int64?] {
        let kept = keptPositions(current)
        var result = [Int64?](repeating: nil, count: current.count)
        var index = 0
        var previousKept: Int64? = nil
        while index < current.count {
            if kept[index] {
                previousKept = current[index]
                index += 1
                continue
            }
            // A run of members to place between previousKept and the next kept position.
            var end = index
            while end < current.count && !kept[end] { end += 1 }
            let count = Int64(end - index)
            let next: Int64? = end < current.count ? current[end] : nil
            // (Checked arithmetic: positions read from a damaged file may lie anywhere, and
            // one near either end of Int64 trapped here; renumbering does not read them.)
            let span = gap.multipliedReportingOverflow(by: count + 1)
            let low = previousKept.map { (partialValue: $0, overflow: false) } ?? (next ?? 0).subtractingReportingOverflow(span.partialValue)
            let high = next.map { (partialValue: $0, overflow: false) } ?? low.partialValue.addingReportingOverflow(span.partialValue)
            let width = high.partialValue.subtractingReportingOverflow(low.partialValue)
            if span.overflow || low.overflow || high.overflow || width.overflow { return renumbered(current) }
            let step = width.partialValue / (count + 1)
            if step < 1 { return renumbered(current) }
            for offset in 0..<Int(count) {
                result[index + offset] = low.partialValue + step * Int64(offset + 1)
            }
            index = end
        }
        return result
    }

    /// Whether each member keeps its position: those of a longest increasing run. When the
    /// present positions all increase already (an append, an insert, a removal), that run is
    /// all of them, found without searching.
    private static func keptPositions(_ current: [Int64?]) -> [Bool] {
        var last: Int64? = nil
        var increasing = true
        for case let value? in current {
            if let last, value <= last {
                increasing = false
                break
            }
            last = value
        }
        if increasing { return current.map { $0 != nil } }
        var kept = [Bool](repeating: false, count: current.count)
        for index in longestIncreasing(current) { kept[index] = true }
        return kept
    }

    private static func renumbered(_ current: [Int64?]) -> [Int64?] {
        current.enumerated().map { index, position in position == Int64(index) * gap ? nil : Int64(index) * gap }
    }

    /// Indexes of a longest strictly increasing subsequence of the present values.
    package static func longestIncreasing(_ values: [Int64?]) -> Set<Int> {
        var tails: [Int] = []          // indexes into values, by subsequence length
        var previous = Array(repeating: -1, count: values.count)
        for (index, value) in values.enumerated() {
            guard let value else { continue }
            var low = 0, high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]]! < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var result = Set<Int>()
        var cursor = tails.last ?? -1
        while cursor >= 0 {
            result.insert(cursor)
            cursor = previous[cursor]
        }
        return result
    }
}
