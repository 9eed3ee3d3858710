import Foundation

/// Which contexts' queues the current thread is running a block for.
///
/// `DispatchQueue.getSpecific` only sees the innermost queue, so a context's block that calls
/// another context's `performAndWait` would look like it left its own queue. Instead each
/// context's ``ContextLink`` records the thread running one of its blocks (a context runs one
/// block at a time: its queue is serial), set when a block starts and put back when it ends,
/// so nested blocks of several contexts on one thread are each seen. Checking is one relaxed
/// atomic load compared with the current thread: a thread only ever finds its own identity
/// there when it wrote it itself, and its own writes are always visible to it. (A per-thread
/// stack of context tokens behind a `pthread_getspecific` cost three times as much, on every
/// typed property access.)
enum QueueOwnership {
    /// The current thread's identity (never 0, which stands for "no thread").
    @inline(__always)
    static var currentThread: UInt {
        #if canImport(Glibc) || canImport(Musl)
        UInt(pthread_self())
        #else
        UInt(bitPattern: pthread_self())
        #endif
    }

    /// Whether the current thread is inside a block of the context `link` belongs to.
    @inline(__always)
    static func holds(_ link: ContextLink) -> Bool {
        link.heldBy.load(ordering: .relaxed) == currentThread
    }

    /// Runs `body` with the context of `link` marked as held by this thread.
    static func with<T>(_ link: ContextLink, _ body: () throws -> T) rethrows -> T {
        let previous = link.heldBy.exchange(currentThread, ordering: .relaxed)
        defer { link.heldBy.store(previous, ordering: .relaxed) }
        return try body()
    }

    /// Whether the current code runs on the main queue.
    ///
    /// `Thread.isMainThread` is not enough on Linux: a program with an async `main` (any
    /// program using `@MainActor`, and every Swift Testing run) calls `dispatch_main`, after
    /// which the main queue is drained by a worker thread. A queue-specific key set on the main
    /// queue identifies it on every platform.
    static var isOnMainQueue: Bool {
        Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) != nil
    }

    /// Set on the main queue once, before its first use.
    private static let mainQueueKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// A short description of the current thread, for violation messages.
    static var currentThreadName: String {
        if Thread.isMainThread { return "the main thread" }
        if let name = Thread.current.name, !name.isEmpty { return "thread '\(name)'" }
        return "thread \(pthread_self())"
    }
}
