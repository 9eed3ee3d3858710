/// A stable 64-bit FNV-1a hash rendered as 16 hex digits.
///
/// Swift's `Hasher` is seeded per process, so it cannot identify a model across runs; this
/// one is the same on every machine and every run, which is what a store's metadata needs.
struct StableHash {
    private var state: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func combine(_ string: String) {
        for byte in string.utf8 {
            state ^= UInt64(byte)
            state = state &* 0x0000_0100_0000_01b3
        }
        // A separator keeps ("ab","c") and ("a","bc") apart.
        state ^= 0xff
        state = state &* 0x0000_0100_0000_01b3
    }

    var hex: String {
        let digits = String(state, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
