/// An object's (or a class's) identity as a dictionary key, hashed with one multiply-mix
/// instead of SipHash.
///
/// Models, stores and connections keep per-description tables (an entity's codes, a
/// relationship's index, a plan's prepared statement) that every fetch, count and fault looks
/// up; with `ObjectIdentifier` keys each lookup ran a SipHash round, ~3% of a count on LMDB
/// (perf). An address is not chosen by whoever could flood a table, so the seeded mix of
/// ``ObjectID`` is enough here too. The key does not keep the object alive: the table's owner
/// must (descriptions live as long as their model).
public struct IdentityKey: Hashable, Sendable {
    private let identifier: ObjectIdentifier

    /// The identity of `object`.
    @inline(__always)
    public init(_ object: AnyObject) { identifier = ObjectIdentifier(object) }

    /// The identity of `type`.
    @inline(__always)
    public init(_ type: any Any.Type) { identifier = ObjectIdentifier(type) }

    /// Hashes the identity into `hasher` (for keys hashed as parts of other values).
    public func hash(into hasher: inout Hasher) { hasher.combine(identifier) }

    /// The hash `Set` and `Dictionary` use (see the type's summary).
    public func _rawHashValue(seed: Int) -> Int {
        ObjectID.mix(UInt64(UInt(bitPattern: identifier)), seed: seed)
    }
}
