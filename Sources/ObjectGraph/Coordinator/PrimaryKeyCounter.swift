/// Arithmetic on a store's primary-key counters that a damaged or exhausted counter cannot
/// crash: the counter (or the largest stored key it is raised past) comes from the file, and
/// one near `Int64.max` — a hand-edited row, a flipped byte behind a repaired checksum —
/// overflowed the addition of the keys a save asked for, which stops a Swift process.
public enum PrimaryKeyCounter {
    /// The key after the last of `count` keys from `first`: the counter's next value.
    /// Throws ``StoreError/Code/corrupt`` naming `rootEntity` and `location` (the store's file)
    /// when they do not all fit in an `Int64`.
    public static func end(from first: Int64, count: Int64, rootEntity: String, location: String) throws -> Int64 {
        let (end, overflow) = first.addingReportingOverflow(count)
        guard !overflow, count >= 0 else {
            throw StoreError(
                .corrupt,
                "\(location): no primary keys are left for \(rootEntity): its next key is \(first), and \(count) more would pass \(Int64.max) (a damaged key counter or row key)")
        }
        return end
    }
}
