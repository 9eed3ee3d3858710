/// A context's inserted objects, in the order they were inserted.
///
/// **Threading contract.** A value type owned by one ``ManagedObjectContext`` and used only on
/// its queue; it is never shared.
///
/// A set hashed by object address iterated the objects in hash order: every pass of a bulk save
/// over 100,000 inserts (will-save, save order, ID remapping, snapshots) touched each object's
/// memory at random, and the hashed insert itself was a fifth of inserting an object (perf,
/// LMDB insert). Here an insert appends, each object remembers its position
/// (``ManagedObject/insertedPosition``), a removal leaves a hole that is closed once holes are
/// half of the list, and iteration walks the objects in insertion order — for objects created
/// into a context, also creation order, which is the order a save wants.
///
/// Iterating works on a copy: objects inserted or removed meanwhile (in `willSave()`, say) do
/// not disturb a running loop, as with a `Set`.
struct InsertedObjects: Sequence {
    private var slots: [ManagedObject?] = []
    /// The objects present (slots that are not holes).
    private(set) var count = 0

    /// An empty list.
    init() {}

    /// Whether no object is inserted.
    var isEmpty: Bool { count == 0 }

    /// Whether `object` is in the list: its remembered position holds it.
    func contains(_ object: ManagedObject) -> Bool {
        let position = Int(object.insertedPosition)
        return position >= 0 && position < slots.count && slots[position] === object
    }

    /// Adds `object` at the end, unless it is already in the list.
    mutating func insert(_ object: ManagedObject) {
        guard !contains(object) else { return }
        // An internal limit: two billion objects in one context would need hundreds of GiB.
        guard let position = Int32(exactly: slots.count) else { ManagedObject.trap("more than \(Int32.max) objects inserted into one context") }
        object.insertedPosition = position
        slots.append(object)
        count += 1
    }

    /// Takes `object` out of the list, if it is there.
    mutating func remove(_ object: ManagedObject) {
        guard contains(object) else { return }
        slots[Int(object.insertedPosition)] = nil
        object.insertedPosition = -1
        count -= 1
        if slots.count > 64 && count * 2 < slots.count { compact() }
    }

    /// Empties the list.
    mutating func removeAll() {
        slots = []
        count = 0
    }

    /// Closes the holes, keeping the order, and gives the objects their new positions.
    private mutating func compact() {
        var kept: [ManagedObject?] = []
        kept.reserveCapacity(count)
        for case let object? in slots {
            object.insertedPosition = Int32(kept.count)
            kept.append(object)
        }
        slots = kept
    }

    /// Iterates the objects in insertion order, skipping holes.
    struct Iterator: IteratorProtocol {
        fileprivate var slots: IndexingIterator<[ManagedObject?]>

        mutating func next() -> ManagedObject? {
            while let slot = slots.next() {
                if let object = slot { return object }
            }
            return nil
        }
    }

    func makeIterator() -> Iterator { Iterator(slots: slots.makeIterator()) }

    var underestimatedCount: Int { count }
}
