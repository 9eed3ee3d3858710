import Foundation
import OrderedCollections

/// An object of the graph: one record of an entity, living in one context.
///
/// Subclass it and bind the subclass in the model (`m.entity("Chat", as: Chat.self)`) to get
/// typed properties through ``Attribute`` and ``Relationship``; or use it directly with
/// ``value(forKey:)`` and ``setValue(_:forKey:)``.
///
/// Objects are **not** `Sendable`: an object belongs to its context's queue, and touching it
/// from another thread is caught at that point (see ``ManagedObjectContext``). Pass its
/// ``objectID`` between threads instead.
///
/// An object fetched or reached through a relationship starts as a *fault*: its values are
/// loaded when a property is first read. Equality and hashing are by identity; uniquing
/// guarantees one object per record per context.
open class ManagedObject: Hashable, CustomStringConvertible {
    /// The record's ID: temporary until the first save, then permanent.
    ///
    /// A permanent ID never changes, so it may be read on any thread, to hand to another
    /// context's ``ManagedObjectContext/existingObject(with:)``. A temporary one is replaced by
    /// the save (or ``ManagedObjectContext/obtainPermanentIDs(for:)``) on the context's queue,
    /// and read elsewhere meanwhile it can come out half old, half new — the ID of another
    /// record: read it inside a block (no other context can resolve a temporary ID anyway).
    @exclusivity(unchecked) public internal(set) var objectID: ObjectID
    /// The object's entity.
    public let entity: EntityDescription
    /// The object's link to its context (see ``ContextLink``: held strongly, it holds the
    /// context weakly).
    @exclusivity(unchecked) private var contextLink: ContextLink?
    /// The context, `nil` once it is gone (or for an object in none): inside one of the
    /// context's blocks without a weak load (``confinedOwner``), elsewhere through the link.
    /// Hot paths use ``withContext(_:)`` instead, which does not retain the context either.
    var contextStorage: ManagedObjectContext? {
        get {
            if let owner = confinedOwner { return owner.takeUnretainedValue() }
            return contextLink?.context
        }
        set { contextLink = newValue?.link }
    }
    /// The context, when the current thread runs one of its blocks (which keeps it alive), as
    /// an unretained reference; `nil` anywhere else.
    @inline(__always)
    private final var confinedOwner: Unmanaged<ManagedObjectContext>? {
        guard isHeldByCurrentThread else { return nil }
        return contextLink.unsafelyUnwrapped.owner
    }
    /// Runs `body` with the object's context; `nil` when the object has none (never inserted,
    /// or its context is gone). Inside one of the context's blocks the context is lent without
    /// a retain or a weak load (see ``ContextLink/owner``); elsewhere it is loaded through the
    /// weak reference and held for the call.
    @inline(__always)
    final func withContext<R>(_ body: (ManagedObjectContext) throws -> R) rethrows -> R? {
        if let owner = confinedOwner { return try owner._withUnsafeGuaranteedRef(body) }
        guard let context = contextLink?.context else { return nil }
        return try body(context)
    }
    /// What every typed accessor does with the context: `body` on the context's queue (checked),
    /// an error from it stopping with `verb`, the object and `key` — a programming error behind
    /// a non-throwing accessor; `nil` when the object is in no context.
    @inline(__always)
    final func withContext<R>(_ verb: String, _ key: String, _ body: (ManagedObjectContext) throws -> R) -> R? {
        withContext { context in
            context.requireQueue("\(objectID).\(key)")
            do { return try body(context) } catch { ManagedObject.trap("\(verb) \(objectID).\(key): \(error)") }
        }
    }
    /// The token of ``contextStorage`` (0 for none), read from the link, so that reading a
    /// loaded value checks the queue without loading the weak reference (two atomic updates
    /// of the context's reference count per read). A context's token is never reused, so the
    /// token of a context that is gone is held by no thread. (Not stored in the object: every
    /// object of a context shares the link, whose memory is hot, and objects are smaller.)
    @inline(__always)
    final var contextToken: Int { contextLink?.token ?? 0 }
    /// Whether the current thread runs one of the context's blocks (see ``QueueOwnership``);
    /// false for an object in no context.
    @inline(__always)
    final var isHeldByCurrentThread: Bool {
        guard let contextLink else { return false }
        return QueueOwnership.holds(contextLink)
    }

    // Values, indexed by slot; empty while the object is a fault. Every change goes through
    // `attributeValues` and `toOneValues`, whose `_modify` keeps the committed row first.
    @exclusivity(unchecked) private var attributeStorage = AttributeValues()
    @exclusivity(unchecked) private var toOneStorage = ToOneValues()
    @exclusivity(unchecked) var toManyStates: [ToManyState]
    /// `body` with the state of the to-many relationship in `slot`, read in place: reading a
    /// property of `toManyStates[slot]` copied the whole state first (its sets and arrays
    /// retained and released), for the paths that walk many objects' relationships.
    @inline(__always)
    final func withToManyState<R>(_ slot: Int, _ body: (UnsafePointer<ToManyState>) -> R) -> R {
        toManyStates.withUnsafeBufferPointer { states in
            // (Checked as the array's subscript checks: a slot indexes the entity's to-manys.)
            precondition(slot >= 0 && slot < states.count, "to-many slot \(slot) out of range for \(entity.name)")
            return body(states.baseAddress.unsafelyUnwrapped + slot)
        }
    }
    /// The members of the to-many relationship in `slot`; `nil` while it is a fault.
    final func loadedMembers(_ slot: Int) -> OrderedSet<ObjectID>? {
        withToManyState(slot) { ToManyState.members(at: $0) }
    }
    /// The committed row, when it is not the current values (see ``committedSnapshot``);
    /// boxed, so an object that never changes carries one word for it, not a whole row.
    @exclusivity(unchecked) private var committedBox: CommittedRow?
    /// The committed row's version while the current values *are* the committed row, -1
    /// otherwise. A fetched object that is only read — most of them — then keeps no second
    /// reference to its value arrays: keeping the row beside the values was two retains at
    /// every install and two releases at every deallocation, and an optional row to destroy.
    @exclusivity(unchecked) private var cleanVersion: Int64 = -1
    @exclusivity(unchecked) var changedAttributeSlots = SlotSet()
    @exclusivity(unchecked) var changedToOneSlots = SlotSet()
    /// The object's position in its context's ``InsertedObjects``, -1 for none (a hint checked
    /// against the list, so a stale value after a reset or save is harmless).
    @exclusivity(unchecked) var insertedPosition: Int32 = -1
    /// The object's position in its context's ``DeletedObjects``, -1 for none (a hint, as
    /// ``insertedPosition`` is).
    @exclusivity(unchecked) var deletedPosition: Int32 = -1
    /// What its context's ``ChangeLog`` holds of the object (see ``ChangeLog/Mark``).
    @exclusivity(unchecked) var changeLogMarks: UInt8 = 0
    /// The state flags below, one bit each: as separate `Bool`s they made every object a
    /// word larger (the fields after them start on a word).
    @exclusivity(unchecked) private var state: StateBits = .fault
    private struct StateBits: OptionSet {
        let rawValue: UInt8
        static let fault = StateBits(rawValue: 1)
        static let inserted = StateBits(rawValue: 2)
        static let deleted = StateBits(rawValue: 4)
        static let updated = StateBits(rawValue: 8)
        /// The record turned out not to exist (deleted elsewhere).
        static let inaccessible = StateBits(rawValue: 16)
        /// The running save has called ``ManagedObject/willSave()`` on the object.
        static let willSaveCalled = StateBits(rawValue: 32)
        /// Deleted by a cascade rule, not by `delete(_:)` (read only while deleted).
        static let cascaded = StateBits(rawValue: 64)
        /// An inaccessible fault the context turned into a deleted object with empty values
        /// (``ManagedObjectContext/shouldDeleteInaccessibleFaults``): its save stores nothing.
        static let vanished = StateBits(rawValue: 128)
    }
    final var isFaultStorage: Bool { get { state.contains(.fault) } set { state.update(.fault, newValue) } }
    final var isInsertedStorage: Bool { get { state.contains(.inserted) } set { state.update(.inserted, newValue) } }
    final var isDeletedStorage: Bool { get { state.contains(.deleted) } set { state.update(.deleted, newValue) } }
    final var isUpdatedStorage: Bool { get { state.contains(.updated) } set { state.update(.updated, newValue) } }
    final var isInaccessibleStorage: Bool { get { state.contains(.inaccessible) } set { state.update(.inaccessible, newValue) } }
    final var isWillSaveCalledStorage: Bool { get { state.contains(.willSaveCalled) } set { state.update(.willSaveCalled, newValue) } }
    final var isDeletedByCascadeStorage: Bool { get { state.contains(.cascaded) } set { state.update(.cascaded, newValue) } }
    final var isVanishedStorage: Bool { get { state.contains(.vanished) } set { state.update(.vanished, newValue) } }
    /// Whether the object was let go by its context — deleted by a save there or by another
    /// context's save it merged, a discarded insert, or its context reset — rather than being
    /// in no context by mistake (never inserted, or its context deallocated): typed reads of
    /// such an object answer empty values instead of stopping the process.
    final var leftItsContext: Bool { isInaccessibleStorage && contextStorage == nil }
    /// Whether the object is in no context, has a temporary ID and was not let go by a context:
    /// created without one (`init(entity:insertInto: nil)`), or an insert its context rolled
    /// back or undid. It holds attribute values of its own until
    /// ``ManagedObjectContext/insert(_:)`` adopts them (see `ManagedObject+Uninserted.swift`).
    /// An object a context let go — a reset, a saved or merged deletion — is flagged
    /// inaccessible, and one whose context is gone keeps its link, so neither is one. Nor is one
    /// with a permanent ID: rolled back after `obtainPermanentIDs(for:)` it has no row, but
    /// rolled back after a save that failed midway (one store's part landed, another's
    /// refused) it does, and taking it for new inserted that row a second time (review).
    final var isUninserted: Bool { contextLink == nil && !isInaccessibleStorage && objectID.isTemporary }
    /// ``deletedPosition`` of an object its context let go because another save deleted its
    /// row (a merged deletion, or one a save found): the field means nothing once the object
    /// is in no context, and a flag of its own would make every object larger.
    static let deletedInStorePosition: Int32 = -2
    /// Whether the object left its context because its row was deleted by another save (see
    /// ``deletedInStorePosition``), not by a reset, a save here or a discarded insert.
    final var leftAsDeletedInStore: Bool { leftItsContext && deletedPosition == Self.deletedInStorePosition }

    /// Creates an object of `entity`; with a context, inserts it there (calling
    /// ``awakeFromInsert()``). Subclasses inherit this initializer; the framework also uses
    /// it, without a context, to create faults.
    public required init(entity: EntityDescription, insertInto context: ManagedObjectContext?) {
        // The context is taken owned, as initializers take their arguments. Taking it
        // `__shared` saved a retain and a release per object (2% of inserting), but a subclass
        // overriding this initializer without `__shared`, as anyone would write it, then
        // released the context once too often (see InitializerTests).
        //
        // Everything read from `entity` first: storing it is then its last use, which moves the
        // caller's reference in (a use after the store made the compiler retain it once more
        // and release the parameter at the end — two atomic updates per object made).
        self.objectID = ObjectID.temporary(entity: entity)
        // The entity's list of faults, shared until the first change copies it: a list of its
        // own for every object was half of making a fault of an entity with a to-many (perf,
        // 10,000 students), with a generic-metadata lookup each. (The object already holds a
        // reference to the entity, so this adds no new kind of shared count.)
        self.toManyStates = entity.faultToManyStates
        self.entity = entity
        if let context {
            do { try context.insert(self) } catch {
                // Reached only for an abstract entity or a context used off its queue: both
                // programming errors in the calling code, so stop with the reason.
                Self.trap("cannot insert \(self.entity.name): \(error)")
            }
        }
    }

    /// Creates an object of the entity bound to this class and inserts it into `context`.
    ///
    /// Stops the process with a message naming the class when the class is bound to no
    /// entity; use ``ManagedObjectContext/insertObject(entityName:)`` for a thrown error.
    public convenience init(context: ManagedObjectContext) {
        guard let entity = context.model.entity(for: Self.self) else {
            Self.trap("\(Self.self) is not bound to an entity of the context's model; bind it with entity(_:as:)")
        }
        self.init(entity: entity, insertInto: context)
    }

    /// The context the object belongs to; `nil` once it is deleted and saved, or its context is gone.
    public var managedObjectContext: ManagedObjectContext? { contextStorage }

    /// Whether the object belongs to `context`: its token compared, where `contextStorage ===
    /// context` loads the weak reference (two atomic updates) on every mutation and save.
    /// Tokens are never reused, and `context` is alive while it asks, so the two agree.
    @inline(__always)
    final func belongs(to context: ManagedObjectContext) -> Bool { contextToken == context.token }

    // The state flags below change as the context's queue works on the object, so reading
    // one elsewhere is the same misuse as reading a value: it stops, as typed accessors do. An
    // object in no context (never inserted, or its context gone) answers anywhere.

    /// Whether the object's values have not been loaded yet; never for an object not inserted
    /// yet, which has values of its own (its entity's defaults until set).
    public var isFault: Bool { requireConfined("isFault"); return isFaultStorage && !isUninserted }
    /// Whether the object was inserted and not yet saved.
    public var isInserted: Bool { requireConfined("isInserted"); return isInsertedStorage }
    /// Whether the object has unsaved changes to stored properties.
    public var isUpdated: Bool { requireConfined("isUpdated"); return isUpdatedStorage }
    /// Whether the object was deleted and the delete is not yet saved.
    public var isDeleted: Bool { requireConfined("isDeleted"); return isDeletedStorage }
    /// Whether the object is inserted, updated or deleted.
    public var hasChanges: Bool { requireConfined("hasChanges"); return isInsertedStorage || isUpdatedStorage || isDeletedStorage }

    /// Stops with a message naming `property`, the object, its context and the thread unless
    /// the current thread may use the object's context (see ``ManagedObjectContext/ownsQueue()``).
    @inline(__always)
    final func requireConfined(_ property: StaticString) {
        if isHeldByCurrentThread { return }
        _ = withContext { $0.requireQueue("\(objectID).\(property)") }
    }

    /// Whether the current thread may read the object's values: it is in no context, or the
    /// thread may use its context.
    final var isReadableHere: Bool {
        isHeldByCurrentThread || withContext({ $0.ownsQueue() }) != false
    }

    // MARK: Lifecycle hooks (Core Data's names; override to add behaviour)

    /// Called once when the object is first inserted into a context.
    open func awakeFromInsert() {}
    /// Called when a fault's values are loaded from the store. As in Core Data, the context
    /// records no change for attributes set here, so transient values and caches can be set
    /// up without making the object (or its context) changed; relationships set here are
    /// recorded as usual.
    open func awakeFromFetch() {}
    /// Called before the object's changes are saved; changes made here are saved too.
    open func willSave() {}
    /// Called after the object's changes were saved, deletions included: a deleted object gets
    /// `didSave` with ``isDeleted`` still `true` (as in Core Data), and is not deleted afterwards.
    open func didSave() {}
    /// Called when the object is deleted, before delete rules are applied.
    open func prepareForDeletion() {}
    /// The properties this class checks itself, in ``validate(_:forKey:)``: the Swift stand-in
    /// for Core Data's `validate<Key>(_:)` methods, which it finds by name. Only these keys
    /// are passed to ``validate(_:forKey:)``, so a save of objects whose class validates
    /// nothing pays nothing for the hook. Read once, when the model is built; a name the
    /// entity does not have makes the model throw ``ModelError/Code/unknownProperty``.
    open class var validatedKeys: Set<String> { [] }

    /// Checks `value` as the value of `key` (one of ``validatedKeys``), after the model's own
    /// rules for it passed: throw to refuse it. Called for inserted and updated objects at
    /// every save, by ``validateForInsert()`` and ``validateForUpdate()``, and by
    /// ``validateValue(_:forKey:)`` with the value proposed; never for a deleted object.
    /// `value` is what ``value(forKey:)`` would give (an attribute's Swift value, `nil` for
    /// none; a to-one's object; a to-many's set of objects).
    ///
    /// Whatever it throws joins the ``ValidationError`` of the save or check: a
    /// ``ValidationError``'s violations as they are, any other error as a violation with code
    /// ``ValidationError/Code/managedObjectValidation`` (1550) holding it as its
    /// ``ValidationError/Violation/underlying`` error. It should not change the object.
    open func validate(_ value: Any?, forKey key: String) throws {}

    /// Checks the object as a save checks an inserted one: required attributes and
    /// relationships, attribute rules, integer widths, to-many counts and the class's
    /// ``validate(_:forKey:)``; throws one ``ValidationError`` with every violation.
    ///
    /// As in Core Data, override it (calling `super` first) to check the object as a whole,
    /// such as a value that depends on another: a save calls it on each inserted object of a
    /// bound class after its own checks, and what it throws joins the save's
    /// ``ValidationError`` (a `ValidationError`'s violations as they are, any other error as a
    /// violation with code ``ValidationError/Code/managedObjectValidation`` (1550) and an
    /// empty key). There `super` throws only what the save found wrong with the object, each
    /// violation reported once. It should not change any object.
    open func validateForInsert() throws { try validateWholeObject("validateForInsert()") }

    /// Checks the object as a save checks an updated one (the same checks as
    /// ``validateForInsert()``: every property, changed or not). A save calls it on each
    /// updated object of a bound class, as ``validateForInsert()`` says.
    open func validateForUpdate() throws { try validateWholeObject("validateForUpdate()") }

    /// Checks that the object may be deleted now: none of its ``DeleteRule/deny``
    /// relationships holds an object that is not itself deleted (code 1600). A save calls it
    /// on each deleted object of a bound class, as ``validateForInsert()`` says: override it to
    /// refuse a deletion the model's rules allow.
    open func validateForDelete() throws { try validateWholeDeletion() }

    /// Whether the object's context is saving and asking classes to check whole objects (see
    /// ``validateForInsert()``): `super` then throws what the save found, and checks nothing.
    final var isAskedBySave: Bool { contextLink?.isAskingWholeObjects ?? false }

    /// While ``isAskedBySave``: throws what the save's own checks found wrong with the object.
    final func throwViolationsFoundBySave() throws {
        guard let link = contextLink, !link.violationsFoundBySave.isEmpty,
              let found = link.violationsFoundBySave[objectID] else { return }
        throw ValidationError(violations: found)
    }

    /// Called before the object is turned back into a fault (by a refresh that drops its
    /// values, or a rollback), while its values can still be read: the companion of
    /// ``didTurnIntoFault()``, always called in a pair with it. An object that is a fault
    /// already is not turned into one, so it gets neither.
    open func willTurnIntoFault() {}
    /// Called after the object was turned back into a fault (see ``willTurnIntoFault()``).
    open func didTurnIntoFault() {}

    // MARK: Identity

    /// Identity equality: one object per record per context makes this record equality
    /// within a context.
    @inlinable
    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }

    /// Hashes the object's identity.
    @inlinable
    public final func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// The hash `Set` and `Dictionary` use: the object's address mixed with the table's seed,
    /// without a SipHash round (relationship sets are rebuilt for every traversal).
    public final func _rawHashValue(seed: Int) -> Int {
        ObjectID.mix(UInt64(UInt(bitPattern: ObjectIdentifier(self))), seed: seed)
    }

    /// "<Chat Chat/p3 fault>" or "<Chat Chat/p3 title="Lunch">" (values only if loaded).
    ///
    /// Off the context's queue the values are left out, with the reason, rather than read
    /// while the queue may be changing them; it does not stop there, unlike other accessors:
    /// descriptions are made wherever objects are logged, printed or shown by a debugger.
    open var description: String {
        guard isReadableHere else {
            let context = contextStorage.map { " of context '\($0.name)'" } ?? ""
            return "<\(entity.name) \(objectID) (values not read: used on \(QueueOwnership.currentThreadName), off the queue\(context))>"
        }
        // An object not inserted yet reads its entity's defaults until it is given values.
        let shown: AttributeValues
        if !isFaultStorage { shown = attributeValues } else if isUninserted { shown = AttributeValues(entity.defaultValues) } else {
            return "<\(entity.name) \(objectID) fault>"
        }
        let values = entity.attributes.prefix(4).map { "\($0.name)=\(shown[$0.slot])" }
        return "<\(entity.name) \(objectID) \(values.joined(separator: " "))>"
    }

    // MARK: Values and the committed row

    /// Attribute values by slot; empty while the object is a fault.
    final var attributeValues: AttributeValues {
        _read { yield attributeStorage }
        _modify {
            keepCommittedRow()
            yield &attributeStorage
        }
    }

    /// To-one destinations by slot; empty while the object is a fault.
    final var toOneValues: ToOneValues {
        _read { yield toOneStorage }
        _modify {
            keepCommittedRow()
            yield &toOneStorage
        }
    }

    /// What the store held when the object was last loaded or saved; `nil` for new objects
    /// and faults never loaded.
    final var committedSnapshot: RowSnapshot? {
        get { withCommittedSnapshot { (row: borrowing RowSnapshot) in copy row } }
        set {
            committedBox = newValue.map(CommittedRow.init)
            cleanVersion = -1
        }
    }

    /// `body` applied to ``committedSnapshot`` lent from its box, or `nil` without one: a save
    /// comparing each changed object with its committed row copied the row out, retaining and
    /// releasing its arrays (uprobe count).
    final func withCommittedSnapshot<R>(_ body: (borrowing RowSnapshot) throws -> R) rethrows -> R? {
        if let committedBox { return try body(committedBox.row) }
        guard cleanVersion >= 0 else { return nil }
        return try body(RowSnapshot(objectID: objectID, version: cleanVersion, attributes: attributeStorage, toOne: toOneStorage))
    }

    /// Makes `row`, just saved, the committed row: when its arrays are the object's own (the
    /// save sent the values as they are), only its version is kept, as for a fetched object.
    final func adoptCommitted(_ row: consuming RowSnapshot) {
        let same = row.objectID == objectID
            && row.attributes.isSameStorage(as: attributeStorage) && row.toOne == toOneStorage
        if same {
            cleanVersion = row.version
            committedBox = nil
        } else {
            committedBox = CommittedRow(consume row)
            cleanVersion = -1
        }
    }

    /// The version of ``committedSnapshot``, without building the row.
    final var committedVersion: Int64? {
        if let committedBox { return committedBox.row.version }
        return cleanVersion >= 0 ? cleanVersion : nil
    }

    /// Before the values change: the committed row, until now the values themselves, is kept
    /// on its own (sharing the arrays, which the change then copies).
    @inline(__always)
    private func keepCommittedRow() {
        guard cleanVersion >= 0 else { return }
        committedBox = CommittedRow(RowSnapshot(objectID: objectID, version: cleanVersion, attributes: attributeStorage, toOne: toOneStorage))
        cleanVersion = -1
    }

    // MARK: Internal state helpers

    /// Installs stored values: the object stops being a fault. To-ones cleared while it was
    /// a fault (a cascade deleting it, see `ManagedObjectContext.unlinkInverse`) stay cleared.
    func install(_ snapshot: consuming RowSnapshot) {
        if isFaultStorage && !changedToOneSlots.isEmpty {
            var values = snapshot.toOne
            for slot in changedToOneSlots { values[slot] = toOneStorage[slot] }
            attributeStorage = snapshot.attributes
            toOneStorage = values
            // The values differ from the row: the row is kept on its own.
            committedBox = CommittedRow(consume snapshot)
            cleanVersion = -1
        } else {
            // The values are the row: its arrays move in, and only its version is kept.
            cleanVersion = snapshot.version
            committedBox = nil
            var row = consume snapshot
            swap(&attributeStorage, &row.attributes)
            swap(&toOneStorage, &row.toOne)
        }
        isFaultStorage = false
    }

    /// Turns the object back into a fault as a refresh or rollback does: between
    /// ``willTurnIntoFault()`` and ``didTurnIntoFault()`` when it held values.
    final func turnIntoFaultCallingHooks() {
        let heldValues = !isFaultStorage
        if heldValues { willTurnIntoFault() }
        turnIntoFault()
        if heldValues { didTurnIntoFault() }
    }

    /// Turns the object back into a fault, dropping values and changes.
    func turnIntoFault() {
        isVanishedStorage = false
        attributeValues = []
        toOneValues = []
        toManyStates = entity.faultToManyStates
        changedAttributeSlots = []
        changedToOneSlots = []
        isFaultStorage = true
    }

    /// Prints the reason to standard error, then stops: used only where a non-throwing API
    /// meets a programming error (Linux's dispatchPrecondition would die without a word).
    static func trap(_ message: String) -> Never {
        let line = "ObjectGraph: \(message)\n"
        FileHandle.standardError.write(Data(line.utf8))
        fatalError(message)
    }
}

/// A committed row kept apart from an object's values (see ``ManagedObject/committedSnapshot``).
final class CommittedRow {
    let row: RowSnapshot

    init(_ row: consuming RowSnapshot) {
        self.row = row
    }
}

extension OptionSet where Element == Self {
    /// Inserts `member` when `on`, removes it otherwise.
    @inline(__always)
    fileprivate mutating func update(_ member: Self, _ on: Bool) {
        if on { insert(member) } else { remove(member) }
    }
}
