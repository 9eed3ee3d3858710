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

    /// Whether no object is cached.
    var isEmpty: Bool { entries.isEmpty }

    /// Keys in a run (stores number rows in sequence) fill consecutive slots; entities are
    /// spread by their interned name.
    @inline(__always)
    private static func slot(_ id: ObjectID) -> Int {
        Int(truncatingIfNeeded: UInt64(bitPattern: id.value) &+ UInt64(id.entityToken) &* 0x9E37_79B9) & (capacity - 1)
    }
}

/// The objects the context keeps alive because they were reached, against what the store holds.
///
/// The ring of recently reached objects and the cache hold their objects strongly, so an
/// object the app let go of did not count as let go (see ``ObjectRegistry``): after another
/// context saved a change to it, the next reach, lookup or fetch brought it back with the
/// values read before, where Core Data, having deallocated it, makes a new object that reads
/// what the store holds now.
///
/// Core Data keeps an object alive while the app holds it, or while an object alive holds it
/// through a relationship it has loaded (a fired to-many's set, a to-one). Those keep the
/// values they read until refreshed or merged, and must: a cascade over a chat's loaded
/// messages is saved against the versions it read, which is how a message another context
/// moved away is caught as a conflict. So whenever the coordinator's ``RowCache/readMark``
/// has moved (it counts every save through the coordinator, every refresh and every merge),
/// the next lookup lets go of the reached objects that hold values and that neither the app
/// holds nor an object reaches through loaded relationships from what the app holds (or what
/// has unsaved changes). They count as let go, and the next lookup makes a new fault that
/// reads the current row. Between two saves a traversal keeps the whole benefit of the ring.
///
/// What the coordinator does not see (a save through another coordinator or process, not
/// merged) is not seen here either: a new object would read the same cached row.
extension ManagedObjectContext {
    /// Lets go of the reached objects nothing holds once the store may have changed since
    /// they were checked: a load and a comparison on every lookup.
    @inline(__always)
    func releaseReachedIfStoreChanged() {
        guard reachedMark != coordinator.rowCache.readMark else { return }
        releaseUnheldReachedObjects()
    }

    @inline(never)
    private func releaseUnheldReachedObjects() {
        // Taken first: a removal while this runs moves the mark on, and the next lookup checks
        // again.
        reachedMark = coordinator.rowCache.readMark
        // The cache's objects are either in the ring or registered before they were reached
        // (the app's, or let go of); it fills again from the next reaches.
        if !reachedCache.isEmpty { reachedCache.removeAll() }
        guard !recentlyReached.isEmpty else { return }
        var ring: [ManagedObject?] = recentlyReached.map { $0 }
        recentlyReached = []
        // Which ring objects only the context holds (the ring's reference is put down while the
        // registry's is checked; the registry keeps the object alive meanwhile), and which of
        // those may be stale. Only these make the walk below, over every object the app holds,
        // worth it: usually none after this context's own saves.
        var onlyHere: [ObjectID: Int] = [:]
        var stale: [ObjectID] = []
        for index in ring.indices {
            guard let object = ring[index].map(Unmanaged.passUnretained) else { continue }
            let id = object._withUnsafeGuaranteedRef { $0.objectID }
            guard let position = registry.position(of: object, id: id) else { continue }
            ring[index] = nil
            let released = registry.isOnlyHeld(at: position)
            ring[index] = object.takeUnretainedValue()
            guard released else { continue }
            onlyHere[id] = index
            if object._withUnsafeGuaranteedRef({ mayBeStale($0) }) { stale.append(id) }
        }
        guard !stale.isEmpty else { return restoreRing(ring) }
        // What the held objects reach through loaded relationships, and what those reach.
        var reached = Set<ObjectID>()
        var next: [ManagedObject] = []
        func follow(_ object: ManagedObject) {
            guard !object.isFaultStorage || object.toManyStates.contains(where: { !$0.isFault }) else { return }
            func note(_ id: ObjectID) {
                guard let index = onlyHere[id], reached.insert(id).inserted, let found = ring[index] else { return }
                next.append(found)
            }
            if !object.isFaultStorage { for case let id? in object.toOneValues { note(id) } }
            for state in object.toManyStates { if let members = state.members { for id in members { note(id) } } }
        }
        for object in liveRegisteredObjects() where onlyHere[object.objectID] == nil { follow(object) }
        while let object = next.popLast() { follow(object) }
        for id in stale where !reached.contains(id) { if let index = onlyHere[id] { ring[index] = nil } }
        restoreRing(ring)
    }

    /// Whether `object` holds values that may be older than what a new object would read: a
    /// fault with no members loaded holds none; loaded members may always be (a membership
    /// change need not touch the object's row); loaded values are, unless the coordinator's
    /// cache holds the row at the version they were read at. (A child context's rows keep
    /// their versions across a sibling's save into the parent: there they always may be.)
    private func mayBeStale(_ object: ManagedObject) -> Bool {
        if object.toManyStates.contains(where: { !$0.isFault }) { return true }
        guard !object.isFaultStorage else { return false }
        guard parentStorage == nil, let version = object.committedVersion,
              let row = coordinator.rowCache.snapshot(for: object.objectID) else { return true }
        return row.version != version
    }

    /// Puts the ring's remaining objects back, in their order.
    private func restoreRing(_ ring: [ManagedObject?]) {
        recentlyReached = ring.compactMap { $0 }
        recentlyReachedNext = recentlyReached.count == Self.recentlyReachedCapacity ? recentlyReachedNext : 0
    }
}
