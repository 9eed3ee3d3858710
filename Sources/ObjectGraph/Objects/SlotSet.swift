/// A set of property slots, as a bit set: the changed attributes and to-ones of an object, and
/// the changed columns of a ``RowUpdate``.
///
/// Every change to an object inserts its slot here, and a save walks the set; as `Set<Int>`
/// each insert paid a SipHash round and the first one an allocation (a tenth of inserting
/// 100,000 objects, measured). Slots below 64 — every entity of a real model — live in one
/// word; higher slots go to further words, allocated only then.
public struct SlotSet: Sequence, Hashable, ExpressibleByArrayLiteral, Sendable {
    private var low: UInt64 = 0
    /// Words for slots 64 and up (slot `64 * (i + 1) + bit`); empty for most models.
    private var high: [UInt64] = []

    /// An empty set.
    public init() {}

    /// The set of `slots`.
    public init(arrayLiteral slots: Int...) {
        for slot in slots { insert(slot) }
    }

    /// Whether no slot is in the set.
    public var isEmpty: Bool { low == 0 && high.allSatisfy { $0 == 0 } }

    /// Whether `slot` is in the set.
    @inline(__always)
    public func contains(_ slot: Int) -> Bool {
        if slot < 64 { return slot >= 0 && low & (1 << UInt64(slot)) != 0 }
        let word = slot / 64 - 1
        return word < high.count && high[word] & (1 << UInt64(slot % 64)) != 0
    }

    /// Adds `slot` (never negative).
    @inline(__always)
    public mutating func insert(_ slot: Int) {
        precondition(slot >= 0, "a slot is never negative")
        if slot < 64 {
            low |= 1 << UInt64(slot)
            return
        }
        let word = slot / 64 - 1
        if word >= high.count { high.append(contentsOf: repeatElement(0, count: word - high.count + 1)) }
        high[word] |= 1 << UInt64(slot % 64)
    }

    /// Removes `slot`.
    public mutating func remove(_ slot: Int) {
        if slot < 64 {
            if slot >= 0 { low &= ~(1 << UInt64(slot)) }
            return
        }
        let word = slot / 64 - 1
        if word < high.count { high[word] &= ~(1 << UInt64(slot % 64)) }
    }

    /// Whether every slot of this set is in `other`.
    public func isSubset(of other: SlotSet) -> Bool {
        guard low & ~other.low == 0 else { return false }
        for (index, word) in high.enumerated() where word & ~(index < other.high.count ? other.high[index] : 0) != 0 {
            return false
        }
        return true
    }

    /// Whether both sets hold the same slots (however many high words each allocated).
    public static func == (lhs: SlotSet, rhs: SlotSet) -> Bool {
        guard lhs.low == rhs.low else { return false }
        let count = Swift.max(lhs.high.count, rhs.high.count)
        for index in 0..<count where (index < lhs.high.count ? lhs.high[index] : 0) != (index < rhs.high.count ? rhs.high[index] : 0) {
            return false
        }
        return true
    }

    /// Hashes the slots, ignoring high words that hold none (as `==` does).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(low)
        var words = high[...]
        while words.last == 0 { words.removeLast() }
        for word in words { hasher.combine(word) }
    }

    /// The slots in ascending order.
    public func makeIterator() -> Iterator { Iterator(set: self) }

    /// Walks the words, taking the lowest set bit each step.
    public struct Iterator: IteratorProtocol {
        let set: SlotSet
        var word = -1
        var bits: UInt64

        init(set: SlotSet) {
            self.set = set
            self.bits = set.low
        }

        /// The next slot in ascending order.
        public mutating func next() -> Int? {
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
