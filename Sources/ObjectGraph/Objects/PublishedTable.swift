/// A small table that grows by an entry now and then and is read on hot paths from any thread:
/// what a wrapped property's declaration resolves to (``WrapperResolutionCache``), the token of a
/// wrapper's explicit name (``PropertyWrapperNames/token(for:)``).
///
/// **Threading contract.** Safe from any thread: a ``PublishedValue`` of its entries. Readers
/// take no lock and scan the entries last published; writers publish a copy with one more
/// entry, and every copy stays allocated, so the tables are meant to stay tiny (a handful of
/// entries each).
final class PublishedTable<Key: Equatable & Sendable, Value: Sendable>: Sendable {
    private struct Entries: Sendable {
        var keys: [Key] = []
        var values: [Value] = []
    }

    private let entries = PublishedValue(Entries())

    /// An empty table.
    init() {}

    /// `answer` applied to the value for `key`, lent from the table (no reference of its own is
    /// taken); `nil` when the table has no entry for `key`.
    @inline(__always)
    func withValue<Answer>(for key: Key, _ answer: (Value) -> Answer) -> Answer? {
        entries.read { entries -> Answer? in
            for index in entries.keys.indices where entries.keys[index] == key { return answer(entries.values[index]) }
            return nil
        }
    }

    /// Enters `value` for `key`, unless the table has an entry for `key` already; the value
    /// the table then holds for `key`.
    func add(_ key: Key, _ value: Value) -> Value {
        entries.update { entries -> Value in
            // (Found only when another thread entered `key` since the caller looked.)
            if let index = entries.keys.firstIndex(of: key) { return entries.values[index] }
            entries.keys.append(key)
            entries.values.append(value)
            return value
        }
    }
}
