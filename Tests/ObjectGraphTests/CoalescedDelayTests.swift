@testable import ObjectGraph
import Synchronization
import Testing

/// The delayed action stores use to end what they keep open between uses.
@Suite("Coalesced delay")
struct CoalescedDelayTests {
    final class Counter: Sendable {
        let fired = Atomic<Int>(0)
    }

    /// Waits (polling, up to 20 s, so that only an action that never runs fails) until the
    /// counter reaches `value`.
    static func wait(for value: Int, _ counter: Counter) async throws -> Int {
        for _ in 0..<2000 where counter.fired.load(ordering: .relaxed) < value {
            try await Task.sleep(for: .milliseconds(10))
        }
        return counter.fired.load(ordering: .relaxed)
    }

    @Test("many requests run the action, and a request after it ran runs it again")
    func requestsRunTheAction() async throws {
        let delay = CoalescedDelay(.milliseconds(5))
        let counter = Counter()
        for _ in 0..<100 { delay.request(for: counter) { $0.fired.add(1, ordering: .relaxed) } }
        #expect(try await Self.wait(for: 1, counter) >= 1)
        let afterFirst = counter.fired.load(ordering: .relaxed)
        delay.request(for: counter) { $0.fired.add(1, ordering: .relaxed) }
        #expect(try await Self.wait(for: afterFirst + 1, counter) == afterFirst + 1)
    }
}
