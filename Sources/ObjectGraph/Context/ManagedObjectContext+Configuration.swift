/// The context's configuration: settable from any thread, applied on the context's queue.
///
/// Apps set these right after making a context, often on the thread that made it and outside
/// any block (as Core Data's own examples set `mergePolicy`), so stopping off the queue would
/// refuse the common case. Written directly, though, they raced the context's own work: a save
/// reading `mergePolicy` or a block recording undo into `undoStack` while another thread
/// replaced it. Each property therefore reaches its field on the queue (``onQueue(_:)``): in
/// place inside a block, else after the running block ends — a block sees one value
/// throughout, and the next block sees the new one.
extension ManagedObjectContext {
    /// Whether the context keeps strong references to every registered object (by default
    /// only objects with unsaved changes are held strongly; others live while the app holds
    /// them). Turned on, it holds the objects registered now (those the app still holds: one
    /// it let go of is gone already) and every one registered later; turned off, it lets go
    /// of them all, as Core Data does, and each lives on only while the app holds it or has
    /// unsaved changes (which the context holds in any case).
    public var retainsRegisteredObjects: Bool {
        get { onQueue { retainsRegisteredObjectsStorage } }
        set { onQueue { setRetainsRegisteredObjects(newValue) } }
    }

    private func setRetainsRegisteredObjects(_ retains: Bool) {
        guard retains != retainsRegisteredObjectsStorage else { return }
        retainsRegisteredObjectsStorage = retains
        if retains {
            for object in liveRegisteredObjects() { retained[object.objectID] = object }
        } else {
            // Kept, the references went on holding every object retained so far; now an
            // object only the registry holds counts as let go, as any other (see
            // ObjectRegistry). The objects are released here, outside any registry access.
            retained = [:]
        }
    }

    /// How ``save()`` resolves optimistic-locking and uniqueness-constraint conflicts;
    /// ``MergePolicy/error`` (throw ``MergeConflictError`` or ``ValidationError``) by default.
    public var mergePolicy: MergePolicy {
        get { onQueue { mergePolicyStorage } }
        set { onQueue { mergePolicyStorage = newValue } }
    }

    /// What reading an *inaccessible fault* does — an object whose record is gone from the
    /// store (deleted by another context or process after this one got the object): `true`
    /// (the default, as in Core Data) turns it into a deleted object of this context, whose
    /// attributes read as `nil` (a non-optional typed attribute as its type's empty value:
    /// `0`, `""`, `false`, the reference date, empty data, the all-zero UUID, the root file URL), whose
    /// relationships are empty, which is in ``deletedObjects``, exempt from validation, and
    /// which the next save or ``reset()`` discards (the save stores nothing for it); `false`
    /// makes the read fail with ``ObjectGraphError/Code/objectNotFound`` (throwing APIs throw
    /// it, typed accessors stop the process with it). ``existingObject(with:)`` throws for a
    /// missing record either way.
    public var shouldDeleteInaccessibleFaults: Bool {
        get { onQueue { shouldDeleteInaccessibleFaultsStorage } }
        set { onQueue { shouldDeleteInaccessibleFaultsStorage = newValue } }
    }

    /// The undo history: a ``ContextUndoStack`` by default for main-queue contexts, `nil` (no
    /// undo, no recording cost) for private-queue ones. The stack itself is not `Sendable`:
    /// use it on the context's queue.
    public var undoStack: ContextUndoStack? {
        get { onQueue { undoStackStorage } }
        set { onQueue { undoStackStorage = newValue } }
    }

    /// Runs `body` on the context's queue and waits for it: in place when the current thread
    /// may use the context, else as a block of its own. Unlike ``performAndWait(_:)`` it does
    /// not end a block (no pending changes processed, nothing posted): reading or setting a
    /// property is not a unit of work.
    func onQueue<T>(_ body: () throws -> T) rethrows -> T {
        if ownsQueue() { return try body() }
        return try queue.sync { try QueueOwnership.with(link, body) }
    }
}
