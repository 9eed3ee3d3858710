import Foundation
import ObjectGraph
@testable import ObjectGraphConformance
import Testing

/// The kit's stress scenarios on every backend, under a name of their own so that CI can run
/// just them under ThreadSanitizer: `swift test --sanitize=thread --filter StressTests`.
@Suite("Stress")
struct StressTests {
    @Test("several contexts on several threads leave a whole graph", arguments: allBackends)
    func concurrentContexts(_ backend: ConformanceBackend) {
        for scenario in ConformanceKit.scenarios where scenario.name.hasPrefix("stress.") {
            switch ConformanceKit.run(scenario, on: backend) {
            case .passed: break
            case .skipped(let reason): withKnownIssue("skipped: \(reason)") { Issue.record("\(scenario.name) skipped") }
            case .failed(let message): Issue.record("\(backend.name) · \(scenario.name): \(message)")
            case .knownFailure(let reason): withKnownIssue("known failure: \(reason)") { Issue.record("\(scenario.name) fails as listed") }
            }
        }
    }
}

/// The bounded waits of the kit's threaded scenarios: a thread that never finishes fails its
/// scenario with the name of what is stuck, instead of hanging the whole run.
@Suite("Stuck threads")
struct StuckThreadTests {
    @Test("a group that never finishes fails the wait, naming what is stuck")
    func stuckGroup() throws {
        let group = DispatchGroup()
        group.enter()  // Never left: the stuck thread.
        let failure = try #require(throws: ScenarioFailure.self) {
            try waitForThreads(group, limit: 0.05) { "the stuck worker" }
        }
        #expect(failure.message.hasPrefix("the stuck worker still running after 0.05 s"))
        group.leave()
    }

    @Test("a semaphore never signalled fails the wait, naming what is stuck")
    func stuckSemaphore() throws {
        let failure = try #require(throws: ScenarioFailure.self) {
            try waitForSignal(DispatchSemaphore(value: 0), limit: 0.05) { "a worker's insert" }
        }
        #expect(failure.message.hasPrefix("a worker's insert not signalled after 0.05 s"))
    }

    @Test("threads that finish in time pass the wait")
    func finishedThreads() throws {
        let ran = SharedCounter()
        try runOnThreads(4) { _ in ran.increment() }
        #expect(ran.value == 4)
    }
}

/// A counter threads add to.
private final class SharedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}
