/// A context's registered objects: one per record (uniquing), looked up by ID.
///
/// **Threading contract.** A value type owned by one ``ManagedObjectContext`` and used only on
/// its queue; it is never shared.
///
/// Objects are held strongly, and "held by nothing but the registry" stands for "released by
/// the app". Core Data holds them weakly; in Swift a weak reference gives every object a side
/// table, after which each retain and release of the object takes the runtime's slow path (a
/// fifth of inserting, traversing or fetching per chat, measured). An entry whose object only
/// the registry holds is dropped when it is looked up, so the app never gets back an object it
/// let go of (with the values it had then); ``sweep()`` drops the others in bulk.
///
/// The objects sit in an array in registration order, with the dictionary mapping IDs to
/// positions: sweeping and emptying then walk objects in the order they were allocated. Walking
/// them in hash order, as a dictionary of objects does, touched each object's memory at random
/// (freeing 100,000 fetched objects at a reset took a fifth of a fetch, measured).
///
/// No object is deallocated inside a method of the registry: a dropped object moves to
/// ``dropped``, which the context empties (``takeDropped()``) once its access to the registry
/// has ended. A subclass's `deinit` that used the context would otherwise run in the middle of
/// a registry mutation, and Swift's exclusivity check would stop the process.
struct ObjectRegistry {
    private var positions: [ObjectID: Int] = [:]
    private var objects: [ManagedObject?] = []
    /// Positions of newly inserted objects not yet entered in `positions`
    /// (``insertPending(_:)``): their temporary IDs are entered at the first lookup or change
    /// that needs them, and a save that makes them permanent enters only the new IDs.
    private var pending: [Int] = []
    /// Positions of objects a fetch into an empty registry registered without entering their
    /// IDs (``appendUnindexed(_:)``), entered all at once by the first operation that needs
    /// the ID map. A context that fetches, reads and is dropped (a server's request) then
    /// never hashes an ID: entering each was a twelfth of fetching 100,000 objects on LMDB.
    private var unindexed: [Int] = []
    /// The namespaces (entity and store) of the unindexed objects' IDs, usually one: a lookup
    /// of an ID in another namespace cannot find one of them, and leaves them unindexed (the
    /// first subject reached from 10,000 fetched students entered all the students' IDs).
    private var unindexedNamespaces: [ObjectID.Namespace] = []
    /// Positions in `objects` that hold `nil`, reused before the array grows.
    private var vacant: [Int] = []
    /// Objects dropped and not yet released (see the type's summary).
    private(set) var dropped: [ManagedObject] = []
    /// An emptied `dropped` buffer handed back (``recycle(_:)``), reused by the next
    /// ``takeDropped()``: a loop faulting one object at a time drops one object per fault, and
    /// a fresh array for each was an allocation per fault.
    private var spare: [ManagedObject] = []
    /// Counts the times an entry was dropped or replaced: while it is unchanged, every object
    /// found under an ID is still the one registered under it (see ``ReachedObjectCache``).
    private(set) var generation = 0

    /// The number of entries, released objects not yet swept included.
    var count: Int { positions.count + pending.count + unindexed.count }

    /// Positions in the storage, vacant ones included (the storage starts over when everything
    /// is dropped at once).
    var slotCount: Int { objects.count }

    /// How many objects are registered without their IDs entered yet (see ``unindexed``).
    var unindexedCount: Int { unindexed.count }

    /// Whether nothing is registered, so that a fetch's objects cannot be registered already
    /// and may be registered with ``appendUnindexed(_:)``.
    var isEmpty: Bool { count == 0 }

    /// Makes room for `capacity` entries in all.
    mutating func reserveCapacity(_ capacity: Int) {
        positions.reserveCapacity(capacity)
        objects.reserveCapacity(capacity)
    }

    /// Makes room for `count` more objects registered by ``appendUnindexed(_:)`` (their map
    /// entries get room when they are entered).
    mutating func reserveUnindexed(_ count: Int) {
        if isEmpty && !objects.isEmpty {
            // Only vacant slots are left (an object without an entry, which only a store
            // answering one object twice leaves, is dropped): the storage starts over, so a
            // loop of fetches into an emptied registry does not grow it.
            for position in objects.indices {
                if let object = objects[position].take() { dropped.append(consume object) }
            }
            objects.removeAll(keepingCapacity: true)
            vacant.removeAll(keepingCapacity: true)
        }
        objects.reserveCapacity(objects.count + count)
        unindexed.reserveCapacity(unindexed.count + count)
    }

    /// The object registered for `id`, unless the app released it: then its entry is dropped
    /// (the object moves to ``dropped``) and the answer is `nil`.
    mutating func live(_ id: ObjectID) -> ManagedObject? {
        enterUnindexed(for: id)
        guard let index = positions.index(forKey: id) else {
            guard !pending.isEmpty && id.isTemporary else { return nil }
            enterPending()
            return live(id)
        }
        let position = positions.values[index]
        if isReleased(at: position) {
            positions.remove(at: index)
            vacate(position)
            return nil
        }
        return objects[position]
    }

    /// What ``lookUpOrReserve(_:)`` found.
    enum Lookup {
        /// The object registered for the ID, which the app still holds.
        case live(ManagedObject)
        /// No such object: the ID's entry now leads to this position, which the caller fills
        /// with a new object (``fill(_:with:)``) before any other use of the registry.
        case reserved(Int)
    }

    /// The object registered for `id`, or, when there is none the app still holds, a position
    /// entered for `id` for the caller's new object: one probe of the ID map either way, where
    /// looking up and then registering a new fault probed twice (every fetched row, every
    /// object reached for the first time).
    ///
    /// The object is made by the caller, outside this method: a subclass's initializer may
    /// use the context, which must not happen in the middle of a registry access.
    mutating func lookUpOrReserve(_ id: ObjectID) -> Lookup {
        prepareEntry(for: id)
        let free = vacant.last ?? objects.count
        var found = -1
        Self.modify(&positions[id, default: -1]) { position in
            if position < 0 { position = free } else { found = position }
        }
        if found < 0 {
            if free == objects.count { objects.append(nil) } else { vacant.removeLast() }
            return .reserved(free)
        }
        // (Checked before taking a reference, which would make it look held.)
        if objects[found] != nil && !isReleased(at: found) { return .live(objects[found].unsafelyUnwrapped) }
        // Released by the app: its entry is reused for the new object.
        if let released = objects[found].take() { dropped.append(consume released) }
        generation &+= 1
        return .reserved(found)
    }

    /// Puts `object` at a position ``lookUpOrReserve(_:)`` reserved for its ID.
    mutating func fill(_ position: Int, with object: ManagedObject) {
        objects[position] = object
    }

    /// `body` on `value` in place: with a dictionary's defaulted subscript, one probe finds or
    /// makes the entry and `body` reads and writes it.
    @inline(__always)
    private static func modify<T>(_ value: inout T, _ body: (inout T) -> Void) { body(&value) }

    /// What finding or writing `id`'s entry needs first: the unindexed objects entered, the
    /// pending ones too for a temporary ID, and the last registered object dropped if the app
    /// let it go (see ``dropLastIfReleased()``).
    private mutating func prepareEntry(for id: ObjectID) {
        enterUnindexed(for: id)
        if !pending.isEmpty && id.isTemporary { enterPending() }
        dropLastIfReleased()
    }

    /// Drops the most recently registered object when the app has let it go: a loop that
    /// faults one object at a time then reuses its slot at once, while its memory is still in
    /// cache, instead of at the next sweep.
    private mutating func dropLastIfReleased() {
        // (Found through its own entry: an object re-keyed elsewhere is left to the sweep.)
        if let last = objects.indices.last, objects[last] != nil, isReleased(at: last),
           let index = positions.index(forKey: objects[last].unsafelyUnwrapped.objectID), positions.values[index] == last {
            positions.remove(at: index)
            vacate(last)
        }
    }

    /// Registers `object` under its ID, replacing whatever was registered under it (the
    /// last registered object is dropped first if the app let it go, see
    /// ``dropLastIfReleased()``).
    mutating func insert(_ object: ManagedObject) {
        // (The ID may be a pending one's: entered first, it is replaced as any other.)
        prepareEntry(for: object.objectID)
        // One probe for the common case, a new entry: the entry is written at once, and put
        // back in the rare case that the ID was registered already (a lookup first was a
        // second probe for every fetched or inserted object).
        let position = vacant.last ?? objects.count
        if let registered = positions.updateValue(position, forKey: object.objectID) {
            positions[object.objectID] = registered
            if let previous = objects[registered] { dropped.append(previous) }
            objects[registered] = object
            generation &+= 1
            return
        }
        if position == objects.count {
            objects.append(object)
        } else {
            vacant.removeLast()
            objects[position] = object
        }
    }

    /// Registers a newly inserted object (one never registered here, with a new temporary ID)
    /// without entering its ID yet: a bulk insert then saved hashed every temporary ID into
    /// the map only for the save to replace it (a twentieth of inserting an object, perf).
    /// Lookups, removals and re-keyings of temporary IDs enter the pending ones first.
    mutating func insertPending(_ object: ManagedObject) {
        pending.append(objects.count)
        objects.append(object)
    }

    /// Registers an object a fetch into an empty registry made, without entering its ID yet
    /// (see ``unindexed``). The caller guarantees that no two such objects share an ID: a
    /// store's answer lists each object once.
    mutating func appendUnindexed(_ object: ManagedObject) {
        noteUnindexedNamespace(object.objectID.namespace)
        unindexed.append(objects.count)
        objects.append(object)
    }

    @inline(__always)
    private mutating func noteUnindexedNamespace(_ namespace: ObjectID.Namespace) {
        if unindexedNamespaces.last != namespace && !unindexedNamespaces.contains(namespace) { unindexedNamespaces.append(namespace) }
    }

    /// Enters the IDs of the objects registered by ``appendUnindexed(_:)``, if any.
    @inline(__always)
    private mutating func enterUnindexed() {
        if !unindexed.isEmpty { enterAllUnindexed() }
    }

    /// Enters the unindexed objects' IDs when one of them could be `id` (same namespace).
    @inline(__always)
    private mutating func enterUnindexed(for id: ObjectID) {
        if !unindexed.isEmpty && unindexedNamespaces.contains(id.namespace) { enterAllUnindexed() }
    }

    private mutating func enterAllUnindexed() {
        let entering = unindexed
        unindexed = []
        unindexedNamespaces.removeAll(keepingCapacity: true)
        positions.reserveCapacity(positions.count + entering.count)
        for position in entering {
            guard let object = objects[position] else { continue }
            if let first = positions.updateValue(position, forKey: object.objectID), first != position {
                // A store answered one object twice (a damaged file can: a truncated SQLite
                // file did, in an audit): the first stays the registered one. Not an assertion:
                // a file's content must never stop the process, in a debug build either.
                positions[object.objectID] = first
            }
        }
    }

    /// Enters the pending objects' IDs in the map.
    private mutating func enterPending() {
        let entering = pending
        pending = []
        for position in entering {
            guard let object = objects[position] else { continue }
            if let previous = positions.updateValue(position, forKey: object.objectID), previous != position { vacate(previous) }
        }
    }

    /// Moves the entry of `old` to `new` (an object's ID became permanent); registers `object`
    /// under `new` when `old` had no entry.
    mutating func rekey(_ old: ObjectID, to new: ObjectID, object: ManagedObject) {
        enterUnindexed()
        if !pending.isEmpty && old.isTemporary { enterPending() }
        guard let position = positions.removeValue(forKey: old) else {
            insert(object)
            return
        }
        if let previous = positions.updateValue(position, forKey: new) { vacate(previous) }
    }

    /// Moves the entries of `objects` from their temporary IDs to the permanent ones `map`
    /// gives (a save; each object already carries its new ID), as ``rekey(_:to:object:)``
    /// does one by one. When they are most of the registry (a bulk insert), the ID map is
    /// rebuilt in one pass instead: removing 100,000 entries from a hash table and inserting
    /// them again under new keys cost twice the probes and moved entries at every removal.
    mutating func rekey(_ objects: [ManagedObject], oldIDs: [ObjectID], map: TemporaryIDMap) {
        if positions.isEmpty && pending.count == objects.count
            && pending.indices.allSatisfy({ self.objects[pending[$0]] === objects[$0] }) {
            // Nothing is keyed (a bulk insert into a fresh context) and the objects are exactly
            // the pending ones: they carry their permanent IDs now and join the unindexed
            // ones, entered when something first needs the ID map. A context that inserts,
            // saves and is let go never hashes them; building the map here was a twentieth of
            // the save. (New permanent IDs are unique, and nothing else is keyed to clash.)
            for object in objects { noteUnindexedNamespace(object.objectID.namespace) }
            unindexed.append(contentsOf: pending)
            pending = []
            return
        }
        enterUnindexed()
        guard objects.count * 2 >= positions.count else {
            for (object, old) in zip(objects, oldIDs) { rekey(old, to: object.objectID, object: object) }
            return
        }
        var rebuilt: [ObjectID: Int] = [:]
        rebuilt.reserveCapacity(positions.count + pending.count)
        var moved: [(id: ObjectID, position: Int)] = []
        moved.reserveCapacity(objects.count)
        for (id, position) in positions {
            if let new = map[id] { moved.append((new, position)) } else { rebuilt[id] = position }
        }
        var found = moved.count
        // Pending objects are entered under the IDs they carry: the new one for those of this
        // save (permanent), their temporary one for the others.
        for position in pending {
            guard let object = self.objects[position] else { continue }
            let id = object.objectID
            if !id.isTemporary { found += 1 }
            moved.append((id, position))
        }
        pending = []
        // A moved entry wins over one already under its new ID, as in rekey(_:to:object:).
        for (id, position) in moved {
            if let previous = rebuilt.updateValue(position, forKey: id), previous != position { vacate(previous) }
        }
        positions = rebuilt
        // Objects whose temporary ID had no entry are registered under their new one, replacing
        // whatever held it (as insert(_:) does on the one-by-one path).
        if found != objects.count {
            for object in objects {
                if let position = positions[object.objectID], self.objects[position] === object { continue }
                insert(object)
            }
        }
    }

    /// Forgets `id`'s entry.
    mutating func remove(_ id: ObjectID) {
        enterUnindexed()
        if !pending.isEmpty && id.isTemporary { enterPending() }
        guard let position = positions.removeValue(forKey: id) else { return }
        vacate(position)
    }

    /// Forgets the entries of `ids` (a save's deletions). When they are most of the registry
    /// (a cascade), the ID map is rebuilt from the rest instead: removing 10,000 entries one by
    /// one shifted the table at every removal (a sixth of committing a cascade, perf).
    mutating func remove(_ ids: some Collection<ObjectID>) {
        guard !ids.isEmpty else { return }
        enterUnindexed()
        if !pending.isEmpty { enterPending() }
        guard ids.count * 2 >= positions.count else {
            for id in ids { remove(id) }
            return
        }
        for id in ids {
            if let position = positions[id], objects[position] != nil { vacate(position) }
        }
        keepEntriesOfRegisteredObjects()
    }

    /// Drops every entry when the registered objects are exactly the `count` objects a save
    /// just deleted (a context that only deleted, as a cascade does), and says whether it did.
    /// Every deleted object is registered (the context's list of them holds it, so its entry is
    /// never dropped as released), each under its own entry; so when `count` entries all hold
    /// deleted objects, they are those. Checking a flag per object in registration order
    /// replaces hashing every deleted ID to find its entry (a tenth of committing a cascade
    /// of 10,000 messages, perf).
    mutating func removeAllIfOnlyDeleted(count deleted: Int) -> Bool {
        guard deleted > 0, count == deleted, vacant.count + deleted == objects.count else { return false }
        // (A vacant slot holds nil and is skipped.)
        for position in objects.indices where objects[position]?.isDeletedStorage == false { return false }
        dropEverything()
        return true
    }

    /// Rebuilds the ID map from the entries whose positions still hold an object, keeping the
    /// table's size (registering as many objects again would otherwise grow it step by step).
    private mutating func keepEntriesOfRegisteredObjects() {
        var kept: [ObjectID: Int] = [:]
        kept.reserveCapacity(positions.capacity)
        for (id, position) in positions where objects[position] != nil { kept[id] = position }
        positions = kept
    }

    /// The position of `object` when it is the object registered under `id` (without
    /// retaining it: the caller checks who holds it, ``isOnlyHeld(at:)``).
    mutating func position(of object: Unmanaged<ManagedObject>, id: ObjectID) -> Int? {
        enterUnindexed(for: id)
        if !pending.isEmpty && id.isTemporary { enterPending() }
        guard let position = positions[id], objects[position].map({ Unmanaged.passUnretained($0).toOpaque() }) == object.toOpaque() else { return nil }
        return position
    }

    /// Whether nothing but the registry holds the object at `position` (a position
    /// ``position(of:id:)`` gave, with no change to the registry since).
    mutating func isOnlyHeld(at position: Int) -> Bool { isReleased(at: position) }

    /// Every registered object something besides the registry holds, in registration order
    /// (which callers must not rely on). Callers that change objects work on this array, not
    /// on the registry.
    mutating func liveObjects() -> [ManagedObject] {
        var live: [ManagedObject] = []
        for position in objects.indices where objects[position] != nil && !isReleased(at: position) {
            live.append(objects[position].unsafelyUnwrapped)
        }
        return live
    }

    /// Drops every entry whose object the app released, and compacts the storage once at
    /// least half of it is vacant.
    ///
    /// The objects are checked in registration order (their memory in allocation order), not
    /// in hash order, which touched each at random. When at least half of the entries go (a
    /// loop that fetches and drops), the ID map is rebuilt from the survivors instead: deleting
    /// thousands of entries one by one shifted the table at every deletion (a tenth of fetching
    /// each of 1,000 chats' messages, measured).
    mutating func sweep() {
        var released: [Int] = []
        var registered = 0
        for position in objects.indices where objects[position] != nil {
            registered += 1
            if isReleased(at: position) { released.append(position) }
        }
        guard !released.isEmpty else { return }
        if released.count == registered && pending.isEmpty {
            // Everything goes (a loop that fetches a page and lets it go): the storage starts
            // over, keeping its capacity, without entering the unindexed objects' IDs only to
            // remove them again and rebuilding the map (a twentieth of fetching each chat's
            // messages, perf). (Inserted objects are never released: none can be pending.)
            dropEverything()
            return
        }
        // (Only now: a sweep that drops nothing leaves unindexed objects so.)
        enterUnindexed()
        if released.count * 2 >= positions.count {
            for position in released { vacate(position) }
            // Every entry leads to a registered object, and only the released were vacated.
            keepEntriesOfRegisteredObjects()
        } else {
            for position in released {
                // An entry is found through its object's ID; one whose object's ID has moved
                // on without its entry (see `insert(_:)`) is found by walking the map.
                let id = objects[position].unsafelyUnwrapped.objectID
                if let index = positions.index(forKey: id), positions.values[index] == position {
                    positions.remove(at: index)
                } else if let index = positions.firstIndex(where: { $0.value == position }) {
                    positions.remove(at: index)
                }
                vacate(position)
            }
        }
        if vacant.count > 64 && vacant.count * 2 >= objects.count { compact() }
    }

    /// Drops every object (each one released by the app, see ``sweep()``), keeping the
    /// storage's capacity for the next registrations.
    private mutating func dropEverything() {
        dropped.reserveCapacity(dropped.count + objects.count - vacant.count)
        for position in objects.indices {
            if let object = objects[position].take() { dropped.append(consume object) }
        }
        objects.removeAll(keepingCapacity: true)
        positions.removeAll(keepingCapacity: true)
        pending.removeAll(keepingCapacity: true)
        unindexed.removeAll(keepingCapacity: true)
        unindexedNamespaces.removeAll(keepingCapacity: true)
        vacant.removeAll(keepingCapacity: true)
        generation &+= 1
    }

    /// Empties the registry and returns its objects (in registration order) and the dropped
    /// ones, for the caller to release: objects only the registry held are then deallocated in
    /// that order. The arrays are handed over, not copied (a copy would retain every object).
    mutating func removeAll() -> (objects: [ManagedObject?], dropped: [ManagedObject]) {
        defer {
            objects = []
            positions = [:]
            pending = []
            unindexed = []
            unindexedNamespaces = []
            vacant = []
            dropped = []
            generation &+= 1
        }
        return (objects, dropped)
    }

    /// The dropped objects, for the caller to release once its access to the registry ended
    /// (and then to hand back emptied, with ``recycle(_:)``).
    mutating func takeDropped() -> [ManagedObject] {
        var taken = spare
        spare = []
        swap(&taken, &dropped)
        return taken
    }

    /// Keeps an emptied array from ``takeDropped()`` for the next one.
    mutating func recycle(_ buffer: [ManagedObject]) {
        if buffer.isEmpty && spare.capacity < buffer.capacity { spare = buffer }
    }

    // MARK: Storage

    /// Whether the registry's reference is the object's only one. Checked in place on the
    /// context's queue: nothing but the registry can hand out a new reference to an object only
    /// it holds, so a `true` cannot turn `false` before the entry is dropped.
    @inline(__always)
    private mutating func isReleased(at position: Int) -> Bool {
        isKnownUniquelyReferenced(&objects[position])
    }

    private mutating func vacate(_ position: Int) {
        if let object = objects[position].take() { dropped.append(consume object) }
        vacant.append(position)
        generation &+= 1
    }

    /// Closes the gaps, keeping registration order. (Only ``sweep()`` compacts, after entering
    /// the unindexed objects, so none of their positions is left to move.)
    private mutating func compact() {
        var moved = [Int](repeating: -1, count: objects.count)
        var kept: [ManagedObject?] = []
        kept.reserveCapacity(objects.count - vacant.count)
        for position in objects.indices where objects[position] != nil {
            moved[position] = kept.count
            kept.append(objects[position])
        }
        var index = positions.startIndex
        while index != positions.endIndex {
            positions.values[index] = moved[positions.values[index]]
            positions.formIndex(after: &index)
        }
        // (A pending position always holds its object: inserted objects are never released.)
        pending = pending.map { moved[$0] }.filter { $0 >= 0 }
        objects = kept
        vacant = []
    }
}
