/// A set of property slots, as a bit set: the changed attributes and to-ones of an object.
///
/// Every change to an object inserts its slot here, and a save walks the set; as `Set<Int>`
/// each insert paid a SipHash round and the first one an allocation (a tenth of inserting
/// 100,000 objects, measured). Slots below 64 — every entity of a real model — live in one
/// word; higher slots go to further words, allocated only then.
struct SlotSet: Sequence, Equatable, ExpressibleByArrayLiteral, Sendable {
    private var low: UInt64 = 0
    /// Words for slots 64 and up (slot `64 * (i + 1) + bit`); empty for most models.
    private var high: [UInt64] = []

    init() {}

    init(arrayLiteral slots: Int...) {
        for slot in slots { insert(slot) }
    }

    var isEmpty: Bool { low == 0 && high.allSatisfy { $0 == 0 } }

    @inline(__always)
    func contains(_ slot: Int) -> Bool {
        if slot < 64 { return slot >= 0 && low & (1 << UInt64(slot)) != 0 }
        let word = slot / 64 - 1
        return word < high.count && high[word] & (1 << UInt64(slot % 64)) != 0
    }

    @inline(__always)
    mutating func insert(_ slot: Int) {
        precondition(slot >= 0, "a slot is never negative")
        if slot < 64 {
            low |= 1 << UInt64(slot)
            return
        }
        let word = slot / 64 - 1
        if word >= high.count { high.append(contentsOf: repeatElement(0, count: word - high.count + 1)) }
        high[word] |= 1 << UInt64(slot % 64)
    }

    mutating func remove(_ slot: Int) {
        if slot < 64 {
            if slot >= 0 { low &= ~(1 << UInt64(slot)) }
            return
        }
        let word = slot / 64 - 1
        if word < high.count { high[word] &= ~(1 << UInt64(slot % 64)) }
    }

    static func == (lhs: SlotSet, rhs: SlotSet) -> Bool {
        guard lhs.low == rhs.low else { return false }
        let count = Swift.max(lhs.high.count, rhs.high.count)
        for index in 0..<count where (index < lhs.high.count ? lhs.high[index] : 0) != (index < rhs.high.count ? rhs.high[index] : 0) {
            return false
        }
        return true
    }

    /// The slots in ascending order.
    func makeIterator() -> Iterator { Iterator(set: self) }

    /// Walks the words, taking the lowest set bit each step.
    struct Iterator: IteratorProtocol {
        let set: SlotSet
        var word = -1
        var bits: UInt64

        init(set: SlotSet) {
            self.set = set
            self.bits = set.low
        }

        mutating func next() -> Int? {
            while bits == 0 {
                word += 1
                guard word < set.high.count else { return nil }
                bits = set.high[word]
            }
            let bit = bits.trailingZeroBitCount
            bits &= bits - 1
            return (word + 1) * 64 + bit
        }
    }
}
