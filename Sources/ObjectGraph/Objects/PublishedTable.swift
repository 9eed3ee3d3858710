import Synchronization

/// A small table that grows by an entry now and then and is read on hot paths from any thread:
/// what a wrapped property's declaration resolves to (``WrapperResolutionCache``), the token of a
/// wrapper's explicit name (``PropertyWrapperNames/token(for:)``).
///
/// **Threading contract.** Safe from any thread. Readers take no lock: they load the current
/// table (immutable once published) through an atomic pointer and scan its few entries.
/// Writers, under a lock, publish a new table with one more entry and keep every table they
/// published alive, since a reader may still be scanning an old one; the tables are meant to
/// stay tiny (a handful of entries each).
final class PublishedTable<Key: Equatable & Sendable, Value: Sendable>: Sendable {
    private final class Table: @unchecked Sendable {
        let keys: [Key]
        let values: [Value]

        init(keys: [Key], values: [Value]) {
            self.keys = keys
            self.values = values
        }
    }

    /// The newest table's address (0 before the first), as an integer: pointers are not `Sendable`.
    private let current = Atomic<UInt>(0)
    /// Every table ever published, newest last; also the writers' lock.
    private let published = Guarded<[Table]>([])

    /// An empty table.
    init() {}

    /// `answer` applied to the value for `key`, lent from the table (no reference of its own is
    /// taken); `nil` when the table has no entry for `key`.
    @inline(__always)
    func withValue<Answer>(for key: Key, _ answer: (Value) -> Answer) -> Answer? {
        guard let raw = UnsafeRawPointer(bitPattern: current.load(ordering: .acquiring)) else { return nil }
        return Unmanaged<Table>.fromOpaque(raw)._withUnsafeGuaranteedRef { table -> Answer? in
            for index in table.keys.indices where table.keys[index] == key { return answer(table.values[index]) }
            return nil
        }
    }

    /// Enters `value` for `key`, unless the table has an entry for `key` already; the value
    /// the table then holds for `key`.
    func add(_ key: Key, _ value: Value) -> Value {
        published.withLock { tables -> Value in
            let last = tables.last
            if let last, let index = last.keys.firstIndex(of: key) { return last.values[index] }
            let table = Table(keys: (last?.keys ?? []) + [key], values: (last?.values ?? []) + [value])
            tables.append(table)
            current.store(UInt(bitPattern: Unmanaged.passUnretained(table).toOpaque()), ordering: .releasing)
            return value
        }
    }
}
