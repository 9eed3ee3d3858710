import OrderedCollections

/// The in-object state of one to-many relationship: its members once loaded, and the changes
/// made since they were read from the store.
///
/// Changes are recorded even while the relationship is a fault, so inverse maintenance never
/// has to load a large set just to add one member (setting `message.chat` does not load
/// `chat.messages`). Loading applies the recorded changes on top of what the store holds.
struct ToManyState {
    private var storedMembers: OrderedSet<ObjectID>?
    private var recordedAdded: OrderedSet<ObjectID> = []
    /// Set for an inserted object's relationship, whose additions are exactly its members:
    /// ``added`` then reads ``members`` instead of keeping a second set in step (filling a new
    /// chat's 100 messages grew two hashed sets, a tenth of inserting them, measured). Any
    /// change to the members from outside this type first gives ``added`` its own copy.
    private var addedMirrorsMembers = false
    /// Members appended by ``appendNew(_:)`` and not yet hashed into ``storedMembers``,
    /// which they follow in order: filling a new chat's 100 messages probed and regrew the
    /// set at every append, a tenth of a bulk insert, while the save rebuilds the set anyway
    /// when it gives the members their permanent IDs (``remap(_:)``). Any other use of the
    /// members first appends them, checked (``settle()``), so a duplicate can never get in.
    private var pending: [ObjectID] = []
    /// Members removed since the last save.
    var removed: Set<ObjectID> = []
    /// Whether an ordered relationship was reordered without a membership change.
    var orderChanged = false
    /// The members' order when they were dropped by ``unload()`` with ``orderChanged``: the
    /// next ``load(stored:)`` puts the reloaded members back in it.
    private var localOrder: [ObjectID]? = nil
    /// The members as read when this context first reordered them (`nil`: not reordered, or
    /// reordered where the read order was not at hand): a merge policy where the store's
    /// changes win keeps the local order only if the stored order is still this one.
    private var readOrder: [ObjectID]? = nil
    /// Set by ``yieldOrderIfStoreReordered()``: the next load keeps the local order only if
    /// the stored members are in ``readOrder``'s order.
    private var orderYieldsToStore = false

    private init(members: OrderedSet<ObjectID>?, addedMirrorsMembers: Bool = false) {
        storedMembers = members
        self.addedMirrorsMembers = addedMirrorsMembers
    }

    static let fault = ToManyState(members: nil)
    /// An inserted object's relationship: empty, everything it comes to hold added.
    static let inserted = ToManyState(members: [], addedMirrorsMembers: true)

    /// The current members; `nil` while the relationship is a fault. (Read while appended
    /// members are pending, a set is built with them, costing what the typed to-many
    /// accessor's own set costs it anyway: a read stays linear in the members.)
    var members: OrderedSet<ObjectID>? {
        get { pending.isEmpty ? storedMembers : Self.joined(storedMembers, pending) }
        set {
            separateAdded()
            storedMembers = newValue
        }
        _modify {
            separateAdded()
            yield &storedMembers
        }
    }

    /// Members added since the last save, in the order they were added.
    var added: OrderedSet<ObjectID> {
        get { addedMirrorsMembers ? members ?? [] : recordedAdded }
        set {
            settle()
            addedMirrorsMembers = false
            recordedAdded = newValue
        }
        _modify {
            separateAdded()
            yield &recordedAdded
        }
    }

    /// Whether no member was added since the last save (without building the set).
    private var addedIsEmpty: Bool {
        addedMirrorsMembers ? (storedMembers?.isEmpty ?? true) && pending.isEmpty : recordedAdded.isEmpty
    }

    /// ``members`` of the state `state` points to, read in place (see
    /// ``ManagedObject/withToManyState(_:_:)``).
    static func members(at state: UnsafePointer<ToManyState>) -> OrderedSet<ObjectID>? {
        state.pointee.pending.isEmpty ? state.pointee.storedMembers : joined(state.pointee.storedMembers, state.pointee.pending)
    }

    /// `members` followed by `more`, each once (checked: see ``pending``).
    private static func joined(_ members: OrderedSet<ObjectID>?, _ more: [ObjectID]) -> OrderedSet<ObjectID>? {
        guard var members else { return nil }
        members.reserveCapacity(members.count + more.count)
        members.append(contentsOf: more)
        return members
    }

    /// Hashes the pending members into the set (checked: a duplicate is dropped).
    @inline(__always)
    private mutating func settle() {
        guard !pending.isEmpty else { return }
        // In place through the optional (a copy out and back would copy every member).
        if storedMembers != nil {
            storedMembers!.reserveCapacity(storedMembers!.count + pending.count)
            storedMembers!.append(contentsOf: pending)
        }
        pending = []
    }

    /// Gives ``added`` its own set before the members change other than by `add`/`remove`.
    @inline(__always)
    private mutating func separateAdded() {
        settle()
        guard addedMirrorsMembers else { return }
        recordedAdded = storedMembers ?? []
        addedMirrorsMembers = false
    }

    var isFault: Bool { storedMembers == nil }
    var hasChanges: Bool { !addedIsEmpty || !removed.isEmpty || orderChanged }

    /// Installs what the store holds, replaying recorded changes on top.
    mutating func load(stored: [ObjectID]) {
        // Stores list an unordered relationship's members by key, and keys that strictly
        // increase are distinct: the set is then built without looking for duplicates. Any
        // other list (an ordered relationship's, or a damaged store's) is checked as it is
        // built, so a duplicate can never corrupt the set.
        var result = Self.strictlyIncreasing(stored) ? OrderedSet(uncheckedUniqueElements: stored) : OrderedSet(stored)
        if removed.isEmpty && addedIsEmpty && !orderYieldsToStore && localOrder == nil {
            // Nothing recorded to replay (the members of every object a fetch loads): the
            // walks below copied the empty sets, reference-count updates for nothing.
            members = result
            return
        }
        for id in removed { result.remove(id) }
        for id in added { result.append(id) }
        let yields = orderYieldsToStore
        orderYieldsToStore = false
        if yields, localOrder != nil, readOrder.map({ Self.reordered(from: $0, to: stored) }) ?? false {
            // The store's order wins: another save reordered the members since they were read.
            localOrder = nil
            readOrder = nil
            orderChanged = false
        }
        if let order = localOrder {
            // A local reorder survives the reload: the members in this context's order, then
            // those it has not seen (added by another context's save) in the store's. The
            // stored order is now the one this context's order was made from.
            localOrder = nil
            if readOrder != nil { readOrder = stored }
            var ordered = OrderedSet<ObjectID>()
            ordered.reserveCapacity(result.count)
            for id in order where result.contains(id) { ordered.append(id) }
            for id in result { ordered.append(id) }
            result = ordered
        }
        members = result
    }

    /// Drops the loaded members so that they are read again when next touched (after a merge
    /// or a refresh brought newer rows), keeping the recorded changes: additions and removals
    /// are replayed on the reloaded members, and the order of an ordered relationship this
    /// context changed is kept (dropping it lost a `move`, or an `insert(_:at:)`'s position,
    /// and the next save stored the store's order back).
    mutating func unload() {
        guard storedMembers != nil else { return }
        if orderChanged, let current = members { localOrder = Array(current) }
        members = nil
    }

    /// Notes, before the members are reordered, the order they had (see ``readOrder``).
    mutating func willReorder() {
        guard !orderChanged else { return }
        readOrder = members.map(Array.init)
    }

    /// Drops this context's order of the members (a merge policy under which the store's
    /// changes win took the stored order): the next load keeps the stored order. Called while
    /// the members are unloaded.
    mutating func dropLocalOrder() {
        localOrder = nil
        readOrder = nil
        orderChanged = false
    }

    /// Makes the next load keep the stored order instead of this context's if another save
    /// reordered the members since this context read them (Core Data's store-trump merge,
    /// property by property). An order changed where the read order was not noted is kept.
    mutating func yieldOrderIfStoreReordered() {
        orderYieldsToStore = orderChanged
    }

    /// Whether the members `read` and `stored` both hold are in another order in `stored`.
    private static func reordered(from read: [ObjectID], to stored: [ObjectID]) -> Bool {
        let inRead = Set(read), inStored = Set(stored)
        return !read.lazy.filter(inStored.contains).elementsEqual(stored.lazy.filter(inRead.contains))
    }

    /// Whether `ids` are permanent and their keys strictly increase (so no two are equal).
    static func strictlyIncreasing(_ ids: [ObjectID]) -> Bool {
        var previous = Int64.min
        for id in ids {
            guard !id.isTemporary, id.value > previous else { return false }
            previous = id.value
        }
        return true
    }

    /// Adds `id` at the end (or at `index`); returns false if it was already a member.
    @discardableResult
    mutating func add(_ id: ObjectID, at index: Int? = nil) -> Bool {
        settle()
        if storedMembers != nil {
            // Mutated in place through the optional: copying the set out and back would copy
            // every member on each add (quadratic for a relationship filled one by one).
            // One probe: appending or inserting reports a member that is there already.
            if let index {
                if !orderChanged { readOrder = Array(storedMembers!) }
                guard storedMembers!.insert(id, at: min(max(index, 0), storedMembers!.count)).inserted else { return false }
                orderChanged = true
            } else {
                guard storedMembers!.append(id).inserted else { return false }
            }
        } else if recordedAdded.contains(id) {
            return false
        }
        // Recorded as "make it a member" whatever was recorded before. A recorded removal is
        // not known to be of a stored member (one recorded on a fault, or the mirror of a
        // stale view, may not be), so cancelling against it could drop this addition on one
        // end of a pair while the other end keeps it: the pair half-stored. A store adding a
        // present member does nothing.
        if !removed.isEmpty, removed.remove(id) != nil {
            if !orderChanged { readOrder = storedMembers.map { $0.filter { $0 != id } } }
            orderChanged = true
        }
        if !addedMirrorsMembers { recordedAdded.append(id) }
        return true
    }

    /// Removes `id`; returns false if it was known not to be a member.
    @discardableResult
    mutating func remove(_ id: ObjectID) -> Bool {
        settle()
        if storedMembers != nil {
            guard storedMembers!.remove(id) != nil else { return false }
        }
        // Recorded as "make it absent", for the reason given in add(_:at:): a recorded addition
        // may have been of a member the store holds already. Removing an absent member does
        // nothing.
        if !addedMirrorsMembers { recordedAdded.remove(id) }
        // An object never saved is a member of nothing in any store: nothing to remove there.
        if !id.isTemporary { removed.insert(id) }
        return true
    }

    /// Adds `id` as the inverse end of a membership the other side has just recorded: like
    /// ``add(_:at:)``, but recorded even when the loaded members already hold `id`. They may be
    /// stale — a sibling context's save into the parent can have removed it since they were
    /// read — and an inverse end that records nothing leaves the parent (and then the store)
    /// with one side of the pair. Adding a present member is a no-op for stores and parents.
    @discardableResult
    mutating func addMirroring(_ id: ObjectID) -> Bool {
        if add(id) { return true }
        guard members != nil, !added.contains(id) else { return false }
        added.append(id)
        return true
    }

    /// Appends `id`, which the caller knows is no member — a new object whose to-one inverse
    /// was nil, so no set holds it — without hashing it yet (see ``pending``). Only a new
    /// object's relationship takes it so; any other state is changed by ``add(_:at:)``.
    /// (Were `id` a member after all, the checked appending that every other use does first
    /// would drop the second copy.)
    mutating func appendNew(_ id: ObjectID) -> Bool {
        guard addedMirrorsMembers, storedMembers != nil, removed.isEmpty else { return add(id) }
        pending.append(id)
        return true
    }

    /// Removes `id` as the inverse end of a removal the other side has just recorded: like
    /// ``remove(_:)``, but recorded even when the loaded members (maybe stale, see
    /// ``addMirroring(_:)``) do not hold `id`. Removing an absent member is a no-op.
    @discardableResult
    mutating func removeMirroring(_ id: ObjectID) -> Bool {
        if remove(id) { return true }
        guard !id.isTemporary, !removed.contains(id) else { return false }
        removed.insert(id)
        return true
    }

    /// Replaces an ID everywhere (temporary → permanent at save).
    mutating func remap(_ map: TemporaryIDMap) {
        // The map is one-to-one (each temporary ID gets a new permanent one, equal to no
        // other), so a set stays a set: it is rebuilt without looking for duplicates
        // (inserting 100,000 messages in 1,000 chats: -1 to -2%, 15 runs per side).
        func swap(_ set: OrderedSet<ObjectID>) -> OrderedSet<ObjectID> {
            OrderedSet(uncheckedUniqueElements: set.map { map[$0] ?? $0 })
        }
        if addedMirrorsMembers {
            if !pending.isEmpty, let members = storedMembers {
                // The pending members are hashed once, here, into a set sized for all of them
                // (checked: see `pending`), instead of at each append and again here.
                var all: [ObjectID] = []
                all.reserveCapacity(members.count + pending.count)
                for id in members { all.append(map[id] ?? id) }
                for id in pending { all.append(map[id] ?? id) }
                storedMembers = OrderedSet(all)
                pending = []
            } else if let members = storedMembers, !members.isEmpty {
                storedMembers = swap(members)
            }
            if !removed.isEmpty { removed = Set(removed.map { map[$0] ?? $0 }) }
            return
        }
        settle()
        let addedAreAllMembers = added == members
        if let members, !members.isEmpty { self.members = swap(members) }
        // A new object's relationship: its members are exactly what was added, remapped once.
        if addedAreAllMembers, let members { added = members } else if !added.isEmpty { added = swap(added) }
        if !removed.isEmpty { removed = Set(removed.map { map[$0] ?? $0 }) }
    }

    /// The members `stored` with this state's recorded changes applied, as loading would
    /// (the members themselves when loaded).
    func members(applyingChangesTo stored: OrderedSet<ObjectID>) -> OrderedSet<ObjectID> {
        if let members { return members }
        var copy = self
        copy.load(stored: Array(stored))
        return copy.members ?? []
    }

    /// A loaded relationship holding `members` whose store holds `committed`: the differences
    /// recorded as additions (in `members`' order) and removals, and for an ordered one, a
    /// changed order of the members both hold.
    static func holding(_ members: OrderedSet<ObjectID>, committed: OrderedSet<ObjectID>, ordered: Bool) -> ToManyState {
        var state = ToManyState(members: members)
        state.recordedAdded = OrderedSet(uncheckedUniqueElements: members.filter { !committed.contains($0) })
        state.removed = Set(committed.filter { !members.contains($0) })
        if ordered {
            state.orderChanged = !members.filter(committed.contains).elementsEqual(committed.filter(members.contains))
            if state.orderChanged { state.readOrder = Array(committed) }
        }
        return state
    }

    /// A fault recording `added` and `removed` as its changes, as one whose members were
    /// changed through an inverse while it was a fault.
    static func fault(recordingAdded added: OrderedSet<ObjectID>, removed: Set<ObjectID>) -> ToManyState {
        var state = ToManyState.fault
        state.recordedAdded = added
        state.removed = removed
        return state
    }

    /// An inserted object's relationship holding `members`, all of them additions.
    static func inserted(holding members: OrderedSet<ObjectID>) -> ToManyState {
        ToManyState(members: members, addedMirrorsMembers: true)
    }

    /// Forgets recorded changes after a save (the members are now what the store holds).
    mutating func commit() {
        settle()
        added = []
        removed = []
        orderChanged = false
        localOrder = nil
        readOrder = nil
        orderYieldsToStore = false
    }
}
