/// Which of an object's list positions a list keeps (see ``ObjectList``): an object can be in
/// both a context's inserted and deleted lists over its life, never in both at once, but each
/// list keeps its own field so that neither has to rely on that.
protocol ObjectListPosition {
    static func position(of object: ManagedObject) -> Int32
    static func setPosition(_ position: Int32, of object: ManagedObject)
}

/// A context's inserted objects (``ManagedObject/insertedPosition``).
enum InsertedPosition: ObjectListPosition {
    @inline(__always) static func position(of object: ManagedObject) -> Int32 { object.insertedPosition }
    @inline(__always) static func setPosition(_ position: Int32, of object: ManagedObject) { object.insertedPosition = position }
}

/// A context's deleted objects (``ManagedObject/deletedPosition``).
enum DeletedPosition: ObjectListPosition {
    @inline(__always) static func position(of object: ManagedObject) -> Int32 { object.deletedPosition }
    @inline(__always) static func setPosition(_ position: Int32, of object: ManagedObject) { object.deletedPosition = position }
}

/// A context's inserted objects, in the order they were inserted.
typealias InsertedObjects = ObjectList<InsertedPosition>
/// A context's deleted objects whose rows exist in the store (a deleted insert is discarded
/// instead), in the order they were deleted.
typealias DeletedObjects = ObjectList<DeletedPosition>

/// A context's inserted or deleted objects, in the order they entered the list.
///
/// **Threading contract.** A value type owned by one ``ManagedObjectContext`` and used only on
/// its queue; it is never shared.
///
/// A set hashed by object address iterated the objects in hash order: every pass of a bulk save
/// over 100,000 inserts (will-save, save order, ID remapping, snapshots) touched each object's
/// memory at random, and the hashed insert itself was a fifth of inserting an object (perf,
/// LMDB insert). Deleted objects were a dictionary by ID, whose insert — a store at a random
/// place in a table of every deletion — was the costliest step of marking each member of a
/// cascade deleted (perf, SQLite cascade of 10,000). Here an insert appends, each object
/// remembers its position (`Position`), a removal leaves a hole that is closed once holes are
/// half of the list, and iteration walks the objects in list order — for objects created into
/// a context, also creation order, and for a cascade's members, key order within each owner:
/// the orders a save wants.
///
/// Iterating works on a copy: objects inserted or removed meanwhile (in `willSave()`, say) do
/// not disturb a running loop, as with a `Set`.
struct ObjectList<Position: ObjectListPosition>: Sequence {
    private var slots: [ManagedObject?] = []
    /// The objects present (slots that are not holes).
    private(set) var count = 0
    /// How many times an object entered the list, ever: it grows exactly when something new
    /// is in the list (its count may not, when another left meanwhile).
    private(set) var entries = 0

    /// An empty list.
    init() {}

    /// Whether the list is empty.
    var isEmpty: Bool { count == 0 }

    /// Whether `object` is in the list: its remembered position holds it.
    func contains(_ object: ManagedObject) -> Bool {
        let position = Int(Position.position(of: object))
        return position >= 0 && position < slots.count && slots[position] === object
    }

    /// Adds `object` at the end, unless it is already in the list.
    mutating func insert(_ object: ManagedObject) {
        guard !contains(object) else { return }
        // An internal limit: two billion objects in one context would need hundreds of GiB.
        guard let position = Int32(exactly: slots.count) else { ManagedObject.trap("more than \(Int32.max) objects in one list of a context") }
        Position.setPosition(position, of: object)
        slots.append(object)
        count += 1
        entries &+= 1
    }

    /// Takes `object` out of the list, if it is there.
    mutating func remove(_ object: ManagedObject) {
        guard contains(object) else { return }
        slots[Int(Position.position(of: object))] = nil
        Position.setPosition(-1, of: object)
        count -= 1
        if slots.count > 64 && count * 2 < slots.count { compact() }
    }

    /// Makes room for `count` objects in all.
    mutating func reserveCapacity(_ count: Int) { slots.reserveCapacity(count) }

    /// Calls `body` with each object in list order, lent without a retain: the list holds
    /// each for the call, so `body` must not change this list — it may change another copy,
    /// such as the context's own when this is a copy taken for the loop (copies share storage
    /// until one changes).
    func forEachUnretained(_ body: (ManagedObject) throws -> Void) rethrows {
        try slots.withUnsafeBufferPointer { buffer in
            try buffer.withMemoryRebound(to: Unmanaged<ManagedObject>?.self) { objects in
                for case let object? in objects { try object._withUnsafeGuaranteedRef(body) }
            }
        }
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
            Position.setPosition(Int32(kept.count), of: object)
            kept.append(object)
        }
        slots = kept
    }

    /// Iterates the objects in list order, skipping holes.
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
