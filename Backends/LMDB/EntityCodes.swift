/// A set of entity codes (see ``RowCodec``), as a bit set: which rows a request reads is tested
/// for every row a scan passes and at every count, where a `Set<UInt16>` hashed the code each
/// time (79 of the 3,700 instructions a 100,000-row fetch spends per row, callgrind). Codes
/// below 64 — every code of a store with fewer than 64 entities — are bits of one word.
///
/// **Threading contract.** A value; safe to share.
struct EntityCodes: Equatable, Sendable {
    private var low: UInt64 = 0
    /// Codes from 64 up.
    private var high: Set<UInt16> = []

    /// No codes.
    init() {}

    /// The codes of `codes`.
    init(_ codes: some Sequence<UInt16>) {
        for code in codes { insert(code) }
    }

    /// Adds `code`.
    mutating func insert(_ code: UInt16) {
        if code < 64 { low |= 1 << UInt64(code) } else { high.insert(code) }
    }

    /// Whether `code` is in the set.
    @inline(__always)
    func contains(_ code: UInt16) -> Bool {
        code < 64 ? low & (1 << UInt64(code)) != 0 : !high.isEmpty && high.contains(code)
    }

    /// Whether every code of this set is in `other`.
    func isSubset(of other: EntityCodes) -> Bool {
        low & ~other.low == 0 && (high.isEmpty || high.isSubset(of: other.high))
    }
}
