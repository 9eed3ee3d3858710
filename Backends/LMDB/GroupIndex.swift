import ObjectGraph

/// Which group a grouping key belongs to, while grouped counts are gathered
/// (``LMDBStore/groups(_:_:in:)``): one lookup per owner row.
///
/// ASCII string keys — the common case, such as `chat.title` — go through a small
/// open-addressing table hashed with FNV-1a over their bytes: a `Dictionary` hashed every
/// title with SipHash behind a fresh `Hasher`, a fifth of a 1,000-group answer (perf). Equal
/// ASCII strings are equal bytes, but a string with other characters may equal an ASCII one
/// (canonical equivalence: "\u{212A}" is "K"), so the first such key moves every group into
/// a `Dictionary`, which then answers by the values' own hashing and equality, as the shared
/// grouping does. Keys that are not strings, which equal no string, go to the `Dictionary`
/// from the start.
///
/// A value used by one grouping, on the thread answering it.
struct GroupIndex {
    /// Per bucket, the group's position plus one; 0 for an empty bucket.
    private var buckets: [Int32]
    private let mask: Int
    /// The positions of the groups not in `buckets`, by key: those whose keys are not
    /// strings, and every group once ``keyed`` is set.
    private var others: [AttributeValue: Int] = [:]
    /// Whether every group is in `others` (a string with other than ASCII characters came).
    private var keyed = false

    /// Room for `capacity` groups without growing.
    init(capacity: Int) {
        var size = 16
        while size < capacity * 2 { size *= 2 }
        buckets = Array(repeating: 0, count: size)
        mask = size - 1
    }

    /// The position of the group whose key equals `key`, if there is one; otherwise records
    /// `next` (the number of groups so far) as that group's position and returns `nil`.
    /// `keyAt` gives a group's key by position.
    mutating func position(of key: AttributeValue, insertingAs next: Int, keyAt: (Int) -> AttributeValue) -> Int? {
        if !keyed, case .string(var string) = key {
            if let hash = string.withUTF8(Self.asciiHash) {
                return lookUp(key, hash: hash, insertingAs: next, keyAt: keyAt)
            }
            keyed = true
            for position in 0..<next { others[keyAt(position)] = position }
        }
        if let position = others.updateValue(next, forKey: key) {
            others[key] = position
            return position
        }
        return nil
    }

    /// ``position(of:insertingAs:keyAt:)`` for an ASCII string key of hash `hash`.
    private mutating func lookUp(_ key: AttributeValue, hash: UInt64, insertingAs next: Int, keyAt: (Int) -> AttributeValue) -> Int? {
        var bucket = Int(truncatingIfNeeded: hash) & mask
        while true {
            let entry = buckets[bucket]
            if entry == 0 { break }
            let position = Int(entry) - 1
            if keyAt(position) == key { return position }
            bucket = (bucket + 1) & mask
        }
        if next + 1 > buckets.count / 2 {
            grow(keyAt: keyAt, count: next)
            bucket = Int(truncatingIfNeeded: hash) & mask
            while buckets[bucket] != 0 { bucket = (bucket + 1) & mask }
        }
        buckets[bucket] = Int32(truncatingIfNeeded: next + 1)
        return nil
    }

    /// Doubles the table (more groups than it was sized for), entering the first `count`
    /// groups' ASCII keys again.
    private mutating func grow(keyAt: (Int) -> AttributeValue, count: Int) {
        var bigger = GroupIndex(capacity: buckets.count)
        bigger.others = others
        for position in 0..<count {
            guard case .string(var string) = keyAt(position), let hash = string.withUTF8(Self.asciiHash) else { continue }
            var bucket = Int(truncatingIfNeeded: hash) & bigger.mask
            while bigger.buckets[bucket] != 0 { bucket = (bucket + 1) & bigger.mask }
            bigger.buckets[bucket] = Int32(truncatingIfNeeded: position + 1)
        }
        self = bigger
    }

    /// FNV-1a over the bytes, finished with a multiply and xor-shift so that the low bits,
    /// which pick the bucket, depend on every byte; `nil` when a byte is not ASCII.
    private static func asciiHash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64? {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var high: UInt8 = 0
        for byte in bytes {
            high |= byte
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        guard high < 0x80 else { return nil }
        let mixed = (hash ^ (hash >> 32)) &* 0xbf58_476d_1ce4_e5b9
        return mixed ^ (mixed >> 31)
    }
}
