import Foundation

/// Which contexts' queues the current thread is running a block for.
///
/// `DispatchQueue.getSpecific` only sees the innermost queue, so a context's block that calls
/// another context's `performAndWait` would look like it left its own queue. A per-thread stack
/// of context tokens, pushed for the duration of each block, answers "is this thread inside a
/// block of context X" exactly, and costs one thread-local read.
enum QueueOwnership {
    final class Stack {
        var tokens: [Int] = []
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { raw in
            if let raw { Unmanaged<Stack>.fromOpaque(raw).release() }
        }
        precondition(status == 0, "pthread_key_create failed: \(status)")
        return key
    }()

    private static var stack: Stack {
        if let raw = pthread_getspecific(key) {
            return Unmanaged<Stack>.fromOpaque(raw).takeUnretainedValue()
        }
        let stack = Stack()
        pthread_setspecific(key, Unmanaged.passRetained(stack).toOpaque())
        return stack
    }

    /// Whether the current thread is inside a block of the context with `token`.
    static func holds(_ token: Int) -> Bool {
        guard let raw = pthread_getspecific(key) else { return false }
        // Called on every typed read: no retain of the stack, and the innermost block (the
        // usual answer) is looked at first.
        return Unmanaged<Stack>.fromOpaque(raw)._withUnsafeGuaranteedRef { stack in
            stack.tokens.last == token || stack.tokens.contains(token)
        }
    }

    /// Runs `body` with `token` marked as held by this thread.
    static func with<T>(_ token: Int, _ body: () throws -> T) rethrows -> T {
        let stack = self.stack
        stack.tokens.append(token)
        defer { stack.tokens.removeLast() }
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
