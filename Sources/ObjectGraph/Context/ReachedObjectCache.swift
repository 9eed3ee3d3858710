/// The objects most recently reached through relationships, by ID, in front of the registry.
///
/// A traversal reaches the same few objects again and again (10,000 students' subjects are 100
/// subjects, 100,000 messages' chat is 1,000 chats), and each reach looked the ID up in the
/// registry's hash table and checked the object's reference count: a tenth of reading every
/// student's subjects (perf). A small direct-mapped table answers those repeats by one
/// comparison.
///
/// An entry is trusted only while the registry has dropped and replaced nothing since it was
/// written (``ObjectRegistry/generation``): until then the object is still the one registered
/// under its ID — the entry's strong reference keeps it from counting as released — and a
/// re-keyed object (a save gave it its permanent ID) is found only under the ID it now has.
/// Like the context's ring of reached objects it keeps at most ``capacity`` objects alive; a
/// reset empties it.
///
/// **Threading contract.** A value type owned by one ``ManagedObjectContext`` and used only on
/// its queue.
struct ReachedObjectCache {
    static let capacity = 256

    private var entries: [(object: ManagedObject?, generation: Int)] = []

    /// The object cached for `id`, if its entry is still valid at registry `generation`.
    @inline(__always)
    func object(for id: ObjectID, generation: Int) -> ManagedObject? {
        guard !entries.isEmpty else { return nil }
        let entry = entries[Self.slot(id)]
        guard entry.generation == generation, let object = entry.object, object.objectID == id else { return nil }
        return object
    }

    /// Remembers `object`, registered under its ID at registry `generation`.
    mutating func store(_ object: ManagedObject, generation: Int) {
        if entries.isEmpty { entries = Array(repeating: (nil, -1), count: Self.capacity) }
        entries[Self.slot(object.objectID)] = (object, generation)
    }

    /// Forgets every object.
    mutating func removeAll() { entries = [] }

    /// Keys in a run (stores number rows in sequence) fill consecutive slots; entities are
    /// spread by their interned name.
    @inline(__always)
    private static func slot(_ id: ObjectID) -> Int {
        Int(truncatingIfNeeded: UInt64(bitPattern: id.value) &+ UInt64(id.entityToken) &* 0x9E37_79B9) & (capacity - 1)
    }
}
