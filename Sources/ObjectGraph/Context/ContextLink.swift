import Synchronization

/// What a managed object holds of its context: a strong reference to this small box, which
/// holds the context weakly.
///
/// Each object holding the context itself weakly paid for it twice: forming a weak reference
/// (a compare-and-swap on the context's side table) when it was created or inserted, and
/// destroying it when it was freed — a twentieth of fetching 100,000 objects and letting them
/// go (perf). A strong reference to one shared box is an ordinary retain and release, and the
/// box still lets the context go: it never holds the context strongly, so an object that
/// outlives its context sees `nil`, as with a weak reference.
///
/// **Threading contract.** Created by its context, which sets ``context`` once, in its
/// initializer, before any object can see the box; afterwards the box is only read (a weak
/// load is safe from any thread), so it may be shared by objects used on the context's queue.
final class ContextLink: @unchecked Sendable {
    /// The context; `nil` once it is gone.
    weak var context: ManagedObjectContext?
    /// The context, unretained: for ``ManagedObject/withContext(_:)`` only, which uses it
    /// while the current thread runs one of the context's blocks — the context is alive then
    /// (its own method is running). Lent to the caller without a retain
    /// (`_withUnsafeGuaranteedRef`): the weak reference above gives the context a side table,
    /// so each retain and release of it takes the runtime's slow path (a tenth of faulting
    /// objects one at a time, perf), and a weak load costs two atomic updates more.
    var owner: Unmanaged<ManagedObjectContext>?
    /// The context's token (see ``ManagedObject/contextToken``).
    let token: Int
    /// The thread running one of the context's blocks, 0 for none (see ``QueueOwnership``).
    let heldBy = Atomic<UInt>(0)

    init(token: Int) {
        self.token = token
    }
}
