import Foundation

/// A readers–writer lock (pthread, writer-preferring) guarding the LMDB environment's map:
/// every transaction holds it shared, and a map resize — which LMDB allows only while no
/// transaction of the process is active — holds it exclusively. Writer preference keeps a
/// steady stream of readers from starving a resize; shared holders must therefore never
/// take it again recursively.
final class ReadWriteLock: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    init() {
        lock = .allocate(capacity: 1)
        var attributes = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attributes)
        pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        pthread_rwlock_init(lock, &attributes)
        pthread_rwlockattr_destroy(&attributes)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// Runs `body` holding the lock shared.
    func shared<T>(_ body: () throws -> T) rethrows -> T {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    /// Takes the lock shared, for a holder that cannot wrap its hold in a closure (see
    /// ``LMDBEnvironment/read(_:)``); every call is paired with ``unlockShared()``.
    func lockShared() { pthread_rwlock_rdlock(lock) }

    /// Releases a hold taken by ``lockShared()``.
    func unlockShared() { pthread_rwlock_unlock(lock) }

    /// Runs `body` holding the lock exclusively.
    func exclusive<T>(_ body: () throws -> T) rethrows -> T {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}
