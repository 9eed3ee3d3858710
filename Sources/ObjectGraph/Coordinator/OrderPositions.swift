/// Positions for an ordered relationship stored with gaps (multiples of 1024), so that an
/// insert or a move in the middle usually writes one member's position instead of
/// renumbering the list. In the shared layer so that every store keeping positions with its
/// members (SQLite's rows, LMDB's duplicates) places them alike.
package enum OrderPositions {
    /// The distance between neighbouring positions when a list is numbered afresh.
    package static let gap: Int64 = 1024

    /// The positions to write so that `order` is the stored order, given the positions members
    /// have now. Members whose relative order is unchanged (a longest increasing run of their
    /// current positions) keep their positions; the others get positions between their kept
    /// neighbours, or, when a gap is too small, the whole list is renumbered.
    package static func plan(order: [ObjectID], existing: [ObjectID: Int64]) -> [ObjectID: Int64] {
        let current = order.map { existing[$0] }
        let kept = longestIncreasing(current)
        var result: [ObjectID: Int64] = [:]
        var index = 0
        var previousKept: Int64? = nil
        while index < order.count {
            if kept.contains(index) {
                previousKept = current[index]
                index += 1
                continue
            }
            // A run of members to place between previousKept and the next kept position.
            var end = index
            while end < order.count && !kept.contains(end) { end += 1 }
            let count = Int64(end - index)
            let next: Int64? = end < order.count ? current[end] : nil
            let low = previousKept ?? ((next ?? 0) - gap * (count + 1))
            let high = next ?? (low + gap * (count + 1))
            let step = (high - low) / (count + 1)
            if step < 1 { return renumbered(order, existing) }
            for offset in 0..<Int(count) {
                result[order[index + offset]] = low + step * Int64(offset + 1)
            }
            index = end
        }
        return result
    }

    private static func renumbered(_ order: [ObjectID], _ existing: [ObjectID: Int64]) -> [ObjectID: Int64] {
        var result: [ObjectID: Int64] = [:]
        for (index, id) in order.enumerated() where existing[id] != Int64(index) * gap {
            result[id] = Int64(index) * gap
        }
        return result
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
