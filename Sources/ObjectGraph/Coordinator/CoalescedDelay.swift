import Dispatch
import Synchronization

/// Runs an action once, a fixed delay after it is first requested, however many requests come
/// in before it runs: for a store that must undo something soon after its last use (a read
/// transaction kept open between reads) without a timer per use.
///
/// **Threading contract.** `Sendable`: ``request(for:_:)`` may be called from any thread; the
/// action runs on a global queue, only while its target is still alive.
public final class CoalescedDelay: Sendable {
    private let delay: DispatchTimeInterval
    private let scheduled = Atomic<Bool>(false)

    /// A delay of `delay` between the first request and the action.
    public init(_ delay: DispatchTimeInterval) {
        self.delay = delay
    }

    /// Schedules `action` on `target` unless an action is already scheduled. The target is
    /// held weakly; a request made once the action has started schedules the next one.
    public func request<Target: AnyObject & Sendable>(for target: Target, _ action: @escaping @Sendable (Target) -> Void) {
        guard !scheduled.load(ordering: .relaxed),
              scheduled.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + delay) { [weak target] in
            self.scheduled.store(false, ordering: .relaxed)
            if let target { action(target) }
        }
    }
}
