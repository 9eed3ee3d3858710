/// The permanent IDs a save (or ``ManagedObjectContext/obtainPermanentIDs(for:)``) gave to
/// temporary ones, for rewriting every reference to them.
///
/// Temporary IDs carry a process-wide sequence number, and the objects of one save were mostly
/// inserted in a run, so their numbers are dense: the map is then an array indexed by sequence
/// number. A dictionary of 100,000 IDs, looked up once per reference, cost a sixth of saving
/// 100,000 inserted objects (measured); sparse numbers fall back to one.
struct TemporaryIDMap {
    private var first: Int64 = 0
    private var dense: [ObjectID?] = []
    private var sparse: [ObjectID: ObjectID] = [:]

    /// Maps `temporaries[i]` to `permanents[i]`.
    init(_ temporaries: [ObjectID], to permanents: [ObjectID]) {
        precondition(temporaries.count == permanents.count, "one permanent ID per temporary ID")
        var lowest = Int64.max, highest = Int64.min
        for id in temporaries {
            precondition(id.isTemporary, "only temporary IDs are remapped")
            lowest = min(lowest, id.value)
            highest = max(highest, id.value)
        }
        guard !temporaries.isEmpty else { return }
        let span = highest.subtractingReportingOverflow(lowest)
        if !span.overflow, span.partialValue < Int64(4 * temporaries.count + 64) {
            first = lowest
            dense = Array(repeating: nil, count: Int(span.partialValue) + 1)
            for (old, new) in zip(temporaries, permanents) { dense[Int(old.value - lowest)] = new }
        } else {
            sparse.reserveCapacity(temporaries.count)
            for (old, new) in zip(temporaries, permanents) { sparse[old] = new }
        }
    }

    /// The permanent ID for `id`, or `nil` when `id` is not one of the remapped temporary IDs.
    @inline(__always)
    subscript(id: ObjectID) -> ObjectID? {
        guard id.isTemporary else { return nil }
        if dense.isEmpty { return sparse[id] }
        let offset = id.value &- first
        guard offset >= 0, offset < Int64(dense.count) else { return nil }
        // The sequence is process-wide, so a number identifies one temporary ID of one entity.
        return dense[Int(offset)]
    }
}
