/// A set of interned-name tokens (``InternedNames``), sorted, for membership tests on every
/// fetch, count and ID routed to a store.
///
/// `Set<UInt32>` ran a SipHash round per test; a store's entities are few, so a scan of a
/// short sorted array (a binary search past ``linearLimit``) answers with no hashing.
struct TokenSet: Sendable {
    private let tokens: [UInt32]

    /// At most this many tokens are scanned; more are searched by halving.
    static let linearLimit = 16

    init<S: Sequence<UInt32>>(_ tokens: S) {
        self.tokens = Array(Set(tokens)).sorted()
    }

    func contains(_ token: UInt32) -> Bool {
        if tokens.count <= Self.linearLimit {
            for candidate in tokens where candidate == token { return true }
            return false
        }
        var low = 0, high = tokens.count
        while low < high {
            let middle = (low + high) / 2
            if tokens[middle] < token { low = middle + 1 } else { high = middle }
        }
        return low < tokens.count && tokens[low] == token
    }
}
