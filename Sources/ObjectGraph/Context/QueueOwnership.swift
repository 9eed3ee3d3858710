import Foundation

/// Which contexts' queues the current thread is running a block for.
///
/// `DispatchQueue.getSpecific` only sees the innermost queue, so a context's block that calls
/// another context's `performAndWait` would look like it left its own queue. A per-thread stack
/// of context tokens, pushed for the duration of each block, answers "is this thread inside a
/// block of context X" exactly, and costs one thread-local read.
enum QueueOwnership {
    /// One thread's tokens, innermost last, in memory of its own: read on every typed property
    /// access, so neither a reference count nor an exclusivity check is paid to look.
    struct Stack {
        var count = 0
        var capacity = 0
        var tokens: UnsafeMutablePointer<Int>? = nil
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { raw in
            guard let raw else { return }
            let stack = raw.assumingMemoryBound(to: Stack.self)
            stack.pointee.tokens?.deallocate()
            stack.deinitialize(count: 1)
            stack.deallocate()
        }
        precondition(status == 0, "pthread_key_create failed: \(status)")
        return key
    }()

    /// This thread's stack, created on first use.
    private static var stack: UnsafeMutablePointer<Stack> {
        if let raw = pthread_getspecific(key) { return raw.assumingMemoryBound(to: Stack.self) }
        let stack = UnsafeMutablePointer<Stack>.allocate(capacity: 1)
        stack.initialize(to: Stack())
        pthread_setspecific(key, stack)
        return stack
    }

    /// Whether the current thread is inside a block of the context with `token`.
    static func holds(_ token: Int) -> Bool {
        guard let raw = pthread_getspecific(key) else { return false }
        let stack = raw.assumingMemoryBound(to: Stack.self).pointee
        guard let tokens = stack.tokens, stack.count > 0 else { return false }
        // The innermost block (the usual answer) is looked at first.
        if tokens[stack.count - 1] == token { return true }
        for index in 0..<stack.count where tokens[index] == token { return true }
        return false
    }

    /// Runs `body` with `token` marked as held by this thread.
    static func with<T>(_ token: Int, _ body: () throws -> T) rethrows -> T {
        let stack = self.stack
        if stack.pointee.count == stack.pointee.capacity {
            let capacity = max(8, stack.pointee.capacity * 2)
            let grown = UnsafeMutablePointer<Int>.allocate(capacity: capacity)
            if let old = stack.pointee.tokens {
                grown.moveInitialize(from: old, count: stack.pointee.count)
                old.deallocate()
            }
            stack.pointee.tokens = grown
            stack.pointee.capacity = capacity
        }
        stack.pointee.tokens.unsafelyUnwrapped[stack.pointee.count] = token
        stack.pointee.count += 1
        defer { stack.pointee.count -= 1 }
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
