import Synchronization

/// What a managed object holds of its context: a strong reference to this small box, which
/// does not keep the context alive.
///
/// Each object holding the context itself weakly paid for it twice: forming a weak reference
/// (a compare-and-swap on the context's side table) when it was created or inserted, and
/// destroying it when it was freed — a twentieth of fetching 100,000 objects and letting them
/// go (perf). A strong reference to one shared box is an ordinary retain and release.
///
/// The box holds the context `unowned`, not `weak`: a single weak reference gives an object a
/// side table for good, and every retain and release of the context then takes the runtime's
/// slow path — the retain and release around each `Message(context:)` were a twentieth of
/// inserting 100,000 objects (perf). The context marks the box dead first thing in its
/// `deinit`, so an object that outlives its context sees `nil`, as with a weak reference.
/// (An unowned reference keeps the dead context's memory, not the context, until the box
/// goes. Only a racing use from another thread, already a misuse that stops the process,
/// could find the context dying between the mark and the load: the runtime then stops the
/// process instead of answering `nil`.)
///
/// **Threading contract.** Created by its context, which attaches itself once, in its
/// initializer, before any object can see the box, and marks it dead in its `deinit`;
/// otherwise the box is only read (but for ``isAskingWholeObjects`` and
/// ``violationsFoundBySave``, which its save sets on its queue), so it may be shared by
/// objects used on the context's queue.
final class ContextLink: @unchecked Sendable {
    /// The context, while ``isAlive``.
    private unowned(safe) var target: ManagedObjectContext?
    /// Whether the context has not begun to go away.
    private let isAlive = Atomic<Bool>(false)

    /// The context; `nil` once it is gone (or going).
    var context: ManagedObjectContext? {
        guard isAlive.load(ordering: .acquiring) else { return nil }
        return target
    }

    /// Makes `context` the box's context (its initializer, once).
    func attach(_ context: ManagedObjectContext) {
        target = context
        owner = Unmanaged.passUnretained(context)
        isAlive.store(true, ordering: .releasing)
    }

    /// Marks the context gone (its `deinit`, first).
    func detach() {
        isAlive.store(false, ordering: .releasing)
        owner = nil
    }

    /// The context, unretained: for ``ManagedObject/withContext(_:)`` only, which uses it
    /// while the current thread runs one of the context's blocks — the context is alive then
    /// (its own method is running). Lent to the caller without a retain
    /// (`_withUnsafeGuaranteedRef`): a retain and release per use were two atomic updates
    /// (with the weak reference the box held before, slow-path ones: a tenth of faulting
    /// objects one at a time, perf).
    var owner: Unmanaged<ManagedObjectContext>?
    /// The context's token (see ``ManagedObject/contextToken``).
    let token: Int
    /// The thread running one of the context's blocks, 0 for none (see ``QueueOwnership``).
    let heldBy = Atomic<UInt>(0)
    /// Whether the context's save is asking classes to check whole objects
    /// (``ManagedObject/validateForInsert()`` and its companions), whose `super` then throws
    /// only ``violationsFoundBySave``. Set and read only on the context's queue, by its save
    /// (kept here, where an object finds it without its context).
    var isAskingWholeObjects = false
    /// Meanwhile, the violations the save's own checks found, by object (empty otherwise).
    var violationsFoundBySave: [ObjectID: [ValidationError.Violation]] = [:]

    init(token: Int) {
        self.token = token
    }
}
