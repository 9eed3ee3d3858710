/// A small deterministic generator (SplitMix64): the same draws on every run and platform, so
/// each worker's choices, a random walk's steps and a fuzz test's damage are reproducible from
/// a seed.
public struct SeededRandom {
    private var state: UInt64

    /// A generator starting from `seed`.
    public init(seed: UInt64) { state = seed }

    /// A value in `0..<bound`; `bound` must be positive (a range with nothing to draw from is
    /// a mistake in the caller, as `Int.random(in: 0..<0)` is).
    public mutating func next(_ bound: Int) -> Int {
        precondition(bound > 0, "SeededRandom.next needs a positive bound, got \(bound)")
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Int(z % UInt64(bound))
    }
}
