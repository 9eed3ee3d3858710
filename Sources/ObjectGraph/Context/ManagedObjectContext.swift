import Foundation
import OrderedCollections
import Synchronization

/// The workbench where objects are inserted, changed, deleted, validated and saved.
///
/// **Threading contract.** A context is confined to one queue: a private serial queue of its
/// own (``ConcurrencyType/privateQueue``) or the main queue (``ConcurrencyType/mainQueue``).
/// Run work on it with ``performAndWait(_:)`` (synchronous, re-entrant), ``perform(_:)``
/// (`async`, returns the block's value) or ``enqueue(_:)`` (fire-and-forget). The three have
/// distinct names so that `await` never silently picks the fire-and-forget one. A main-queue
/// context may also be used directly on the main queue (the main thread or `@MainActor` code,
/// which Linux runs on a worker thread after `dispatch_main`). Touching the context or one of its
/// objects anywhere else is caught at that point: throwing APIs throw
/// ``ObjectGraphError/Code/concurrencyViolation``; non-throwing ones (typed properties) print
/// what was touched from which thread and stop the process. The context itself is `Sendable` so
/// that it can be handed to another thread to `perform` on; its objects are not. Its
/// configuration (``mergePolicy``, ``undoStack``, ``retainsRegisteredObjects``,
/// ``automaticallyMergesChangesFromParent``) may be set from any thread: it is applied on the
/// queue, after the running block. An object's ``ManagedObject/objectID``, once permanent, may
/// be read anywhere.
///
/// Pending deletes are propagated (delete rules applied) at the end of every perform block,
/// before fetches and at save — as Core Data's `processPendingChanges`.
public final class ManagedObjectContext: @unchecked Sendable {
    /// Which queue the context is confined to.
    public enum ConcurrencyType: Sendable {
        /// A private serial queue owned by the context.
        case privateQueue
        /// The main queue (and the main thread).
        case mainQueue
    }

    /// Which queue the context is confined to.
    public let concurrencyType: ConcurrencyType
    /// The coordinator the context reads from and saves to.
    public let coordinator: PersistentStoreCoordinator
    /// A name for messages and debugging.
    public let name: String
    let queue: DispatchQueue
    let token: Int
    /// What the context's objects hold of it (see ``ContextLink``).
    let link: ContextLink

    // State below is confined to the context's queue, which the API checks; the runtime's
    // dynamic exclusivity checks would add a call to every access (perf), hence `unchecked`.
    /// Every registered object (see ``ObjectRegistry`` for how released objects are let go).
    @exclusivity(unchecked) var registry = ObjectRegistry()
    /// Strong references for ``retainsRegisteredObjects``.
    @exclusivity(unchecked) var retained: [ObjectID: ManagedObject] = [:]
    // Cascades remove objects from these one at a time, which must stay O(1). Saves order
    // them once (``inSaveOrder(_:)``) so change sets are deterministic. Inserted objects are
    // not keyed by ID: their IDs change at the save, and re-keying 100,000 entries was a third
    // of giving them permanent IDs (measured); they keep insertion order (see InsertedObjects).
    @exclusivity(unchecked) var insertedStorage = InsertedObjects()
    @exclusivity(unchecked) var updatedStorage: [ObjectID: ManagedObject] = [:]
    /// How many times an object entered `updatedStorage`, ever (see ``ObjectList/entries``):
    /// counted where objects enter it, `markUpdated(_:)` and undo.
    @exclusivity(unchecked) var updatedEntries = 0
    /// Deleted objects whose rows exist in the store (a deleted insert goes to
    /// `discardedInserts` instead), in the order they were deleted: a save orders them
    /// from there, whose runs are already ascending (a cascade deletes each owner's members
    /// in key order), instead of sorting a hash order (a twelfth of saving a cascade of
    /// 10,000, perf). Looked up by ID through the registry (``isDeletedHere(_:)``).
    @exclusivity(unchecked) var deletedStorage = DeletedObjects()
    /// Deleted objects whose delete rules have not been applied yet.
    @exclusivity(unchecked) var pendingDeletes: [ManagedObject] = []
    /// Inserted objects deleted before being saved: rules applied, never sent to the store.
    @exclusivity(unchecked) var discardedInserts: [ObjectIdentifier: ManagedObject] = [:]
    @exclusivity(unchecked) var changeLog = ChangeLog()
    /// Members of batched fetches not loaded yet, by ID (see ``FetchRequest/fetchBatchSize``).
    @exclusivity(unchecked) var batchGroups: [ObjectID: BatchGroup] = [:]
    /// The registry is swept of objects only it holds when it grows past this.
    @exclusivity(unchecked) var sweepThreshold = 4096
    /// Objects recently reached through relationships, held strongly (see ``reachedObject(_:)``).
    @exclusivity(unchecked) var recentlyReached: [ManagedObject] = []
    @exclusivity(unchecked) var recentlyReachedNext = 0
    static let recentlyReachedCapacity = 1024
    /// The objects most recently reached, by ID (see ``ReachedObjectCache``).
    @exclusivity(unchecked) var reachedCache = ReachedObjectCache()
    /// The coordinator's ``RowCache/readMark`` when the ring and the cache of reached objects
    /// were last checked for objects the store may have changed under (see
    /// ``releaseReachedIfStoreChanged()``).
    @exclusivity(unchecked) var reachedMark: UInt64 = 0
    @exclusivity(unchecked) var statisticsStorage = ContextStatistics()

    // The configuration below is read by the context's own work, on its queue, through these
    // fields; the public properties (ManagedObjectContext+Configuration) reach them on the queue.
    /// See ``retainsRegisteredObjects``.
    @exclusivity(unchecked) var retainsRegisteredObjectsStorage = false
    /// See ``mergePolicy``.
    @exclusivity(unchecked) var mergePolicyStorage: MergePolicy = .error
    /// Nonzero while an object's ``ManagedObject/awakeFromFetch()`` runs: attribute setters
    /// then record no change (see ``awake(_:)``).
    @exclusivity(unchecked) var awakingFromFetch = 0
    /// See ``shouldDeleteInaccessibleFaults``.
    @exclusivity(unchecked) var shouldDeleteInaccessibleFaultsStorage = true
    /// The unsaved objects the running save merged into others to resolve uniqueness
    /// conflicts, each with the object it was merged into (see ManagedObjectContext+Uniqueness);
    /// reported in the save's ``ContextDidSave/mergedIDs``.
    @exclusivity(unchecked) var uniquenessMerges: [(loser: ManagedObject, survivor: ManagedObject)] = []
    /// Observes other contexts' saves while automatic merging is on (ManagedObjectContext+Merging).
    @exclusivity(unchecked) var automaticMerge: AutomaticMerge?
    /// The parent of a child context (ManagedObjectContext+Nested); `nil` for a root context.
    @exclusivity(unchecked) var parentStorage: ManagedObjectContext?
    /// The temporary IDs of inserted objects given permanent IDs because a child looked, with
    /// those permanent IDs, until the next save (ManagedObjectContext+HandedOverIDs).
    @exclusivity(unchecked) var handedOverIDs: [ObjectID: ObjectID] = [:]
    /// See ``undoStack``.
    @exclusivity(unchecked) var undoStackStorage: ContextUndoStack?

    private static let tokens = Atomic<Int>(0)

    /// Creates a context on `coordinator`.
    public init(concurrencyType: ConcurrencyType = .privateQueue, coordinator: PersistentStoreCoordinator, name: String? = nil) {
        self.concurrencyType = concurrencyType
        self.coordinator = coordinator
        let token = Self.tokens.add(1, ordering: .relaxed).newValue
        self.token = token
        self.link = ContextLink(token: token)
        self.name = name ?? "context-\(token)"
        switch concurrencyType {
        case .privateQueue: queue = DispatchQueue(label: "objectgraph.context.\(self.name)")
        case .mainQueue: queue = DispatchQueue.main
        }
        if concurrencyType == .mainQueue { undoStackStorage = ContextUndoStack() }
        link.attach(self)
    }

    deinit {
        // First: from here on the context's objects see none (see ContextLink).
        link.detach()
    }

    /// The model the context's objects follow.
    public var model: ManagedObjectModel { coordinator.model }

    // MARK: Running work on the context's queue

    /// Runs `body` on the context's queue and waits for it; re-entrant (runs at once when
    /// already on the queue). Delete rules are applied when the outermost block ends.
    ///
    /// On the main queue, a main-queue context's outermost `performAndWait` runs `body` in
    /// place (a `sync` onto the main queue would deadlock) but ends like any other block: its
    /// pending changes are processed and announced, as when called from another thread.
    public func performAndWait<T>(_ body: () throws -> T) rethrows -> T {
        if QueueOwnership.holds(link) { return try body() }
        if concurrencyType == .mainQueue && QueueOwnership.isOnMainQueue {
            return try QueueOwnership.with(link) {
                defer { try? processPendingChanges() }
                return try body()
            }
        }
        return try queue.sync {
            try QueueOwnership.with(link) {
                defer { try? processPendingChanges() }
                return try body()
            }
        }
    }

    /// Runs `body` on the context's queue and returns its result asynchronously, once the
    /// block has ended: its pending changes processed (delete rules applied) and announced.
    ///
    /// Cancelling the calling task does not stop the block, as Core Data's `perform` does not:
    /// once scheduled it runs to completion, and its result (or error) is returned rather than
    /// `CancellationError`. A block cut short could leave half of its changes in the context.
    /// The block runs on the context's queue, outside the task, so `Task.isCancelled` inside
    /// it says nothing about the caller; check before calling to skip the work.
    public func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                // Resumed after processPendingChanges, not inside the block: the caller went on
                // (on another thread) while the context still applied the block's delete rules
                // and posted its objects-did-change.
                let result = QueueOwnership.with(self.link) { () -> Result<T, any Error> in
                    defer { try? self.processPendingChanges() }
                    return Result { try body() }
                }
                continuation.resume(with: result)
            }
        }
    }

    /// Schedules `body` on the context's queue and returns at once (Core Data's fire-and-forget
    /// `perform`); use ``perform(_:)`` to wait for a result.
    public func enqueue(_ body: @escaping @Sendable () -> Void) {
        queue.async {
            QueueOwnership.with(self.link) {
                defer { try? self.processPendingChanges() }
                body()
            }
        }
    }

    /// Whether the current thread may use this context now.
    public func ownsQueue() -> Bool {
        if concurrencyType == .mainQueue && QueueOwnership.isOnMainQueue { return true }
        return QueueOwnership.holds(link)
    }

    /// Throws ``ObjectGraphError/Code/concurrencyViolation`` unless on the context's queue.
    func checkQueue(_ what: @autoclosure () -> String) throws {
        guard !ownsQueue() else { return }
        throw ObjectGraphError(.concurrencyViolation, violationMessage(what()))
    }

    /// Stops the process with a message unless on the context's queue (for non-throwing APIs).
    func requireQueue(_ what: @autoclosure () -> String) {
        guard !ownsQueue() else { return }
        ManagedObject.trap(violationMessage(what()))
    }

    private func violationMessage(_ what: String) -> String {
        let queueName = concurrencyType == .mainQueue ? "the main queue" : "its private queue '\(queue.label)'"
        return "concurrency violation: \(what) belongs to context '\(name)' on \(queueName), but was used on \(QueueOwnership.currentThreadName) outside perform/performAndWait"
    }

    // MARK: Registered objects and uniquing

    /// The object for `id` in this context: the registered one if there is one (uniquing), else
    /// a new fault. Does not check that the record exists; touching a fault for a missing
    /// record makes it a deleted object with empty values, or, with
    /// ``shouldDeleteInaccessibleFaults`` off, throws or stops with
    /// ``ObjectGraphError/Code/objectNotFound``. An ID of an entity the model lacks gets a
    /// stand-in in no context, which key-value access refuses with
    /// ``ObjectGraphError/Code/unknownEntity`` (``existingObject(with:)`` throws it at once).
    public func object(with id: ObjectID) -> ManagedObject {
        requireQueue("object(with: \(id))")
        let resolved = resolvingHandedOverID(id)
        guard model.entity(for: resolved) != nil else { return standInForUnknownEntity(resolved) }
        coordinator.noteObject(for: resolved)
        return registeredOrFault(resolved)
    }

    /// The object for `id`, loaded; throws ``ObjectGraphError/Code/objectNotFound`` if the
    /// record does not exist.
    public func existingObject(with id: ObjectID) throws -> ManagedObject {
        try checkQueue("existingObject(with: \(id))")
        guard model.entity(named: id.entityName) != nil else {
            throw ObjectGraphError(.unknownEntity, objectID: id, "the model has no entity \(id.entityName)")
        }
        let object = registeredOrFault(resolvingHandedOverID(id))
        try fulfillFaultIfNeeded(object)
        return object
    }

    /// The registered object for `id`, without creating a fault.
    public func registeredObject(for id: ObjectID) -> ManagedObject? {
        requireQueue("registeredObject(for: \(id))")
        return registeredLive(id)
    }

    /// Every object currently registered (and alive) in the context.
    public var registeredObjects: Set<ManagedObject> {
        requireQueue("registeredObjects")
        return Set(liveRegisteredObjects())
    }

    func registeredOrFault(_ id: ObjectID) -> ManagedObject {
        lookUpOrFault(id).object
    }

    /// The registered object for `id` (`isNew` false), or a new fault registered for it: one
    /// probe of the registry's ID map for either (see ``ObjectRegistry/lookUpOrReserve(_:)``).
    func lookUpOrFault(_ id: ObjectID) -> (object: ManagedObject, isNew: Bool) {
        releaseReachedIfStoreChanged()
        switch registry.lookUpOrReserve(id) {
        case .live(let object):
            releaseDroppedObjects()
            return (object, false)
        case .reserved(let position):
            let object = makeFault(id)
            registry.fill(position, with: object)
            registered(object)
            return (object, true)
        }
    }

    /// A new fault for `id`, registered without entering its ID in the registry's map (see
    /// ``ObjectRegistry/appendUnindexed(_:)``): for a fetch into an empty registry, whose
    /// answer lists each object once.
    func unindexedFault(_ id: ObjectID) -> ManagedObject {
        let object = makeFault(id)
        registry.appendUnindexed(object)
        registered(object)
        return object
    }

    /// A new fault for `id`, not registered.
    private func makeFault(_ id: ObjectID) -> ManagedObject {
        guard let entity = model.entity(for: id) else {
            ManagedObject.trap("object ID \(id) names entity \(id.entityName), which the model does not have")
        }
        // (The entity moved in: kept to the end of the scope, across the call below, it was
        // retained once more per fault, an atomic update.)
        let managedClass = entity.managedClass
        let object = managedClass.init(entity: consume entity, insertInto: nil)
        // An initializer override that set values gave them to an object not inserted yet
        // (see ManagedObject+Uninserted.swift); a fault's values are the store's.
        if _slowPath(!object.isFaultStorage) { ManagedObject.refault(object) }
        object.objectID = id
        object.contextStorage = self
        return object
    }

    /// The object for `id` reached through a relationship (or a prefetch). A newly created one
    /// is also kept alive in a small ring of recently reached objects: an object only the
    /// registry holds counts as released, and without the ring a traversal that reaches the
    /// same 100 subjects from 10,000 students would create, fault and free each subject 100
    /// times. The ring is bounded (``recentlyReachedCapacity`` objects), so memory stays
    /// bounded; `reset()` empties it. Repeated reaches are answered by ``reachedCache``. Once
    /// anything may have changed in the store, both let go of the objects they hold (see
    /// ``releaseReachedIfStoreChanged()``).
    func reachedObject(_ id: ObjectID) -> ManagedObject {
        releaseReachedIfStoreChanged()
        if let cached = reachedCache.object(for: id, generation: registry.generation) {
            #if DEBUG
            // Every reach the tests make checks the cache's promise against the registry.
            assert(registry.live(id) === cached, "the reached-object cache answered \(id) with an object the registry does not hold under it")
            releaseDroppedObjects()
            #endif
            return cached
        }
        let (object, isNew) = lookUpOrFault(id)
        if isNew {
            if recentlyReached.count < Self.recentlyReachedCapacity {
                recentlyReached.append(object)
            } else {
                recentlyReached[recentlyReachedNext] = object
                recentlyReachedNext = (recentlyReachedNext + 1) % Self.recentlyReachedCapacity
            }
        }
        // Written after the lookup or the registration, which may have dropped entries.
        reachedCache.store(object, generation: registry.generation)
        return object
    }

    /// The registered object for `id`, unless the app let it go: an object the app released
    /// must never come back with the values it had (merges and refreshes skip it, as they would
    /// skip a deallocated one), so the next lookup makes a new fault that reads the current row.
    func registeredLive(_ id: ObjectID) -> ManagedObject? {
        releaseReachedIfStoreChanged()
        let object = registry.live(id)
        releaseDroppedObjects()
        return object
    }

    /// Releases the objects the registry dropped, after the access that dropped them ended:
    /// a subclass's `deinit` may use the context (see ``ObjectRegistry``).
    @inline(__always)
    func releaseDroppedObjects() {
        guard !registry.dropped.isEmpty else { return }
        var taken = registry.takeDropped()
        // Released here, outside every access to the registry; the buffer is kept for reuse.
        // One by one: `removeAll(keepingCapacity:)` went through the generic range
        // replacement and destroyed each object through its type's value witness, about 230
        // instructions around each release (callgrind, a loop faulting one object at a time).
        while taken.popLast() != nil {}
        registry.recycle(taken)
    }

    /// Every registered object something besides the registry holds, in no particular order.
    func liveRegisteredObjects() -> [ManagedObject] { registry.liveObjects() }

    /// `isNew`: the object was never registered here and has a new temporary ID (see
    /// ``ObjectRegistry/insertPending(_:)``).
    func register(_ object: ManagedObject, isNew: Bool = false) {
        if isNew { registry.insertPending(object) } else { registry.insert(object) }
        registered(object)
    }

    /// What follows every registration: retaining (``retainsRegisteredObjects``), sweeping
    /// when due, releasing what the registry dropped.
    private func registered(_ object: ManagedObject) {
        if retainsRegisteredObjectsStorage { retained[object.objectID] = object }
        // (A fetch sets the threshold to `.max` while it registers: then the registry's size,
        // three counts, is not taken per object.)
        if sweepThreshold != .max && registry.count > sweepThreshold { sweepReleasedObjects() }
        releaseDroppedObjects()
    }

    /// Drops the entries of objects the app released; amortized O(1) per registration, since the
    /// next sweep waits until the registry has doubled again.
    func sweepReleasedObjects() {
        registry.sweep()
        sweepThreshold = max(4096, registry.count * 2)
        releaseDroppedObjects()
    }

    /// `releasingDropped: false` leaves objects the registry dropped for the caller's
    /// ``releaseDroppedObjects()`` (once after a loop of unregistrations, not once each).
    func unregister(_ object: ManagedObject, releasingDropped: Bool = true) {
        registry.remove(object.objectID)
        if releasingDropped { releaseDroppedObjects() }
        if !retained.isEmpty { retained.removeValue(forKey: object.objectID) }
    }

    // MARK: Insert

    /// Inserts `object` (created without a context) into this context, with the attribute
    /// values it was given there, then calls its ``ManagedObject/awakeFromInsert()``. An object already in
    /// this context (inserted, fetched or saved) is left as it is; one deleted here, the
    /// deletion not saved yet, throws ``ObjectGraphError/Code/objectDeleted``; one saved and
    /// then let go by its context throws ``ObjectGraphError/Code/objectInaccessible``.
    public func insert(_ object: ManagedObject) throws {
        try checkQueue("insert(\(object.entity.name))")
        guard !object.entity.isAbstract else {
            throw ObjectGraphError(.abstractEntity, "\(object.entity.name) is abstract; insert one of its sub-entities (\(object.entity.subentityNames.joined(separator: ", ")))")
        }
        let current = object.contextStorage
        if let current, current !== self {
            throw ObjectGraphError(.wrongContext, objectID: object.objectID, "\(object.objectID) already belongs to context '\(current.name)'")
        }
        if current != nil {
            // Already in this context (inserted, fetched, or saved since it was inserted):
            // there is nothing to insert, and going on would reset its values and insert its
            // row a second time at the save. A deleted one is refused: its delete rules have
            // run. (Checked here, not by its inserted flag alone: an object whose context is
            // gone still says it is inserted, and was left out of this context without a word.)
            if object.isInsertedStorage { return }
            if object.isDeletedStorage {
                throw ObjectGraphError(
                    .objectDeleted, objectID: object.objectID,
                    "cannot insert \(object.objectID): it is deleted in this context; undo or roll back the deletion to keep it, or insert a new object")
            }
            return
        }
        // A permanent ID with no context: the object was saved, then let go (a reset, its
        // deletion saved, its context gone), or it may have been (a rollback after a save
        // that failed midway). Inserting it would insert a row under a key the store has given
        // out already, perhaps a second row for it.
        guard object.objectID.isTemporary else {
            throw ObjectGraphError(
                .objectInaccessible, objectID: object.objectID,
                "cannot insert \(object.objectID): it was saved and then let go by its context (a reset, its deletion saved, or the context gone); look it up again with object(with:), or insert a new object")
        }
        let entity = object.entity
        // (The undo record alone: a new object has no earlier state in this event to keep.)
        undoStackStorage?.willChange(object, in: self)
        // Values it holds are kept, with the slots set, as Core Data keeps them: set while it
        // was in no context (see ManagedObject+Uninserted.swift), or by a context now gone. One
        // given none, or let go by a reset, starts from the defaults. Relationships start
        // empty: none is kept outside a context. It is in a context again: no longer let go.
        let keepsValues = !object.isFaultStorage && !object.isInaccessibleStorage
        object.contextStorage = self
        object.isInaccessibleStorage = false
        if !keepsValues {
            object.attributeValues = AttributeValues(entity.defaultValues)
            if !object.changedAttributeSlots.isEmpty { object.changedAttributeSlots = SlotSet() }
        }
        // (An object whose context is gone may still say what it was there.)
        object.isUpdatedStorage = false
        object.isDeletedStorage = false
        object.toOneValues = ToOneValues(repeating: nil, count: entity.toOneRelationships.count)
        // (Not `Array(repeating:count: 0)` for an entity without to-manys: that still copied
        // the `.inserted` state in and destroyed it, five reference counts each way per object.)
        let toManyCount = entity.toManyRelationships.count
        object.toManyStates = toManyCount == 0 ? [] : Array(repeating: .inserted, count: toManyCount)
        object.isFaultStorage = false
        object.isInsertedStorage = true
        register(object, isNew: true)
        insertedStorage.insert(object)
        changeLog.inserted(object)
        object.awakeFromInsert()
    }

    /// Creates and inserts an object of the entity named `entityName`.
    @discardableResult
    public func insertObject(entityName: String) throws -> ManagedObject {
        try checkQueue("insertObject(entityName: \(entityName))")
        let entity = try model.requireEntity(entityName)
        let object = entity.managedClass.init(entity: entity, insertInto: nil)
        try insert(object)
        return object
    }

    /// Creates and inserts an object of the entity bound to `type`.
    public func insert<T: ManagedObject>(_ type: T.Type) throws -> T {
        try checkQueue("insert(\(T.self))")
        guard let entity = model.entity(for: type) else {
            throw ObjectGraphError(.unknownEntity, "\(T.self) is not bound to an entity of the model")
        }
        let object = T(entity: entity, insertInto: nil)
        try insert(object)
        return object
    }

    // MARK: Change tracking

    /// Objects inserted since the last save.
    public var insertedObjects: Set<ManagedObject> {
        requireQueue("insertedObjects")
        return Set(insertedStorage)
    }

    /// Objects with unsaved changes (not inserted or deleted ones).
    public var updatedObjects: Set<ManagedObject> {
        requireQueue("updatedObjects")
        return Set(updatedStorage.values)
    }

    /// Objects deleted since the last save (after delete rules, once pending changes are processed).
    public var deletedObjects: Set<ManagedObject> {
        requireQueue("deletedObjects")
        return Set(deletedStorage)
    }

    /// Whether anything is unsaved.
    public var hasChanges: Bool {
        requireQueue("hasChanges")
        return !insertedStorage.isEmpty || !updatedStorage.isEmpty || !deletedStorage.isEmpty || !pendingDeletes.isEmpty
    }

    /// Round trips and faults fired since the context was created (or the counters reset).
    public var statistics: ContextStatistics {
        requireQueue("statistics")
        return statisticsStorage
    }

    /// Sets the counters back to zero.
    public func resetStatistics() {
        requireQueue("resetStatistics()")
        statisticsStorage = ContextStatistics()
    }

    /// The inserted objects in save order (by creation): the insertion order itself when it
    /// is already that, as for objects created into this context, else sorted.
    func insertedInSaveOrder() -> [ManagedObject] {
        var ordered: [ManagedObject] = []
        ordered.reserveCapacity(insertedStorage.count)
        var previous = Int64.min
        var ascending = true
        // (Lent: the list holds each object, and the append takes the one reference kept.)
        insertedStorage.forEachUnretained { object in
            let id = object.objectID
            if !id.isTemporary || id.value <= previous { ascending = false }
            previous = id.value
            ordered.append(object)
        }
        if ascending { return ordered }
        return inSaveOrder(ordered)
    }

    /// The deleted objects in save order (``inSaveOrder(_:)``): their runs are already in
    /// order, which the stable sort merges.
    func deletedInSaveOrder() -> [ManagedObject] {
        Self.saveOrder(count: deletedStorage.count) { add in
            deletedStorage.forEachUnretained { add($0.objectID, Unmanaged.passUnretained($0)) }
        }
    }

    /// Whether the stored object `id` is deleted in this context (and not saved yet). A
    /// deleted object stays registered (``deletedStorage`` holds it) until its deletion is
    /// saved or undone.
    func isDeletedHere(_ id: ObjectID) -> Bool {
        guard !deletedStorage.isEmpty, let object = registeredLive(id) else { return false }
        return deletedStorage.contains(object)
    }

    /// The objects of a change set in a stable order: by primary key, unsaved ones by creation.
    func inSaveOrder(_ objects: some Collection<(key: ObjectID, value: ManagedObject)>) -> [ManagedObject] {
        withExtendedLifetime(objects) {
            Self.saveOrder(count: objects.count) { add in
                for (id, object) in objects { add(id, Unmanaged.passUnretained(object)) }
            }
        }
    }

    /// `objects` in save order, read without retaining each (they are lent for the call).
    func inSaveOrder(_ objects: [ManagedObject]) -> [ManagedObject] {
        withExtendedLifetime(objects) {
            Self.saveOrder(count: objects.count) { add in
                objects.forEachUnretained { add($0.objectID, Unmanaged.passUnretained($0)) }
            }
        }
    }

    /// The objects `entries` lists (each with its ID; the caller keeps them alive), in save
    /// order.
    private static func saveOrder(count: Int, _ entries: ((ObjectID, Unmanaged<ManagedObject>) -> Void) -> Void) -> [ManagedObject] {
        // Sorting plain integers: the objects ride along unretained, so neither the sort's
        // moves nor a side array of the objects retain and release each one (two of each per
        // object were a third of ordering a cascade's 10,000 deletions, perf). Stored objects
        // come before unsaved ones, so the two kinds are sorted apart, each by its key alone
        // (comparing (kind, key) pairs was half the sort).
        typealias Keyed = (key: Int64, object: Unmanaged<ManagedObject>)
        var stored: [Keyed] = []
        var unsaved: [Keyed] = []
        stored.reserveCapacity(count)
        var storedAscending = true
        var unsavedAscending = true
        entries { id, object in
            let entry = (key: id.value, object: object)
            if id.isTemporary {
                if let last = unsaved.last, last.key >= entry.key { unsavedAscending = false }
                unsaved.append(entry)
            } else {
                if let last = stored.last, last.key >= entry.key { storedAscending = false }
                stored.append(entry)
            }
        }
        // (Rows of different tables may share a key; the stable sort keeps such objects in
        // the order they came, as the positional tiebreak it replaces did.)
        if !storedAscending { stored.sort { $0.key < $1.key } }
        if !unsavedAscending { unsaved.sort { $0.key < $1.key } }
        var ordered: [ManagedObject] = []
        ordered.reserveCapacity(stored.count + unsaved.count)
        for entry in stored { ordered.append(entry.object.takeUnretainedValue()) }
        for entry in unsaved { ordered.append(entry.object.takeUnretainedValue()) }
        return ordered
    }

    func markUpdated(_ object: ManagedObject) {
        guard !object.isInsertedStorage, !object.isDeletedStorage else {
            // An unsaved insert changed after a notification announced it is updated in this
            // event, as `changedValuesForCurrentEvent()` already said (observers were never
            // told). One inserted in this very event is not: it is only inserted. A bit test,
            // for the common case of setting up a new object.
            if object.isInsertedStorage && object.changeLogMarks & ChangeLog.Mark.inserted == 0 { changeLog.updated(object) }
            return
        }
        if !object.isUpdatedStorage {
            object.isUpdatedStorage = true
            updatedStorage[object.objectID] = object
            updatedEntries &+= 1
        }
        changeLog.updated(object)
    }
}

/// Counters that make N+1 access patterns visible in tests and benchmarks.
public struct ContextStatistics: Sendable, Hashable {
    /// Calls that reached the coordinator's stores (fetches, snapshot loads, relationship
    /// loads, saves); row-cache hits are not round trips.
    public var storeRoundTrips = 0
    /// Object faults fired (values loaded for one object).
    public var faultsFired = 0
    /// To-many relationship faults fired.
    public var relationshipFaultsFired = 0
    /// Snapshots served from the coordinator's row cache.
    public var rowCacheHits = 0
}
