import Foundation

/// A value behind a lock, for state shared between threads (the row cache, the coordinator's
/// stores, stores' own state).
///
/// Used instead of the standard library's `Mutex` because that one locks with raw futex calls
/// on Linux, which ThreadSanitizer cannot see: every access under it is reported as a race.
/// This one locks a `pthread_mutex_t`, which ThreadSanitizer understands, so a sanitizer run
/// reports only real races. **Threading contract:** `withLock` may be called from any thread;
/// it is not re-entrant.
public final class Guarded<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    // Out of line, so that a zero-sized value (a plain lock, `Guarded<Void>`) never shares an
    // address with the object's other fields in the sanitizer's access tracking.
    private let storage: UnsafeMutablePointer<Value>

    /// Creates a lock protecting `value`.
    public init(_ value: Value) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: value)
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&storage.pointee)
    }
}
