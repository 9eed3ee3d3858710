import ObjectGraph
import ObjectGraphConformance
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
