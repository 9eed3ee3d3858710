import Foundation
import ObjectGraph
import ObjectGraphConformance
import Testing

/// One scenario on one backend: a separate, named test case.
struct MatrixCase: Sendable, CustomTestStringConvertible {
    let scenario: ConformanceScenario
    let backend: ConformanceBackend
    let skipReason: String?

    var testDescription: String { "\(backend.name) · \(scenario.name)" }
}

private let plannedCases: [MatrixCase] = allBackends.flatMap { backend in
    let plan = (try? ConformanceKit.plan(for: backend)) ?? ConformanceKit.scenarios.map { ($0, "\(backend.name) store could not be opened to read its capabilities") }
    return plan.map { MatrixCase(scenario: $0.scenario, backend: backend, skipReason: $0.skipReason) }
}

@Suite("Conformance matrix")
struct ConformanceMatrixTests {
    @Test("scenario × backend", arguments: plannedCases.filter { $0.skipReason == nil })
    func scenario(_ matrixCase: MatrixCase) {
        let outcome = ConformanceKit.run(matrixCase.scenario, on: matrixCase.backend)
        switch outcome {
        case .passed:
            break
        case .failed(let message):
            Issue.record("\(matrixCase.testDescription): \(message)")
        case .knownFailure(let reason):
            withKnownIssue("known failure of \(matrixCase.backend.name): \(reason)") {
                Issue.record("\(matrixCase.testDescription) fails as listed")
            }
        case .skipped(let reason):
            Issue.record("planned to run, but skipped at run time: \(reason)")
        }
    }

    @Test("skipped scenario × backend (reported, with reason)", arguments: plannedCases.filter { $0.skipReason != nil })
    func skipped(_ matrixCase: MatrixCase) {
        let reason = matrixCase.skipReason ?? ""
        #expect(!reason.isEmpty, "a skip must say why")
        withKnownIssue("skipped: \(reason)") {
            Issue.record("\(matrixCase.testDescription) does not apply: \(reason)")
        }
    }

    @Test("every scenario is run or excluded with a reason, on every backend")
    func everyScenarioAccountedFor() throws {
        #expect(ConformanceKit.scenarios.count >= 60, "the kit must hold at least 60 scenarios")
        #expect(Set(ConformanceKit.scenarios.map(\.name)).count == ConformanceKit.scenarios.count, "scenario names are unique")
        for backend in allBackends {
            let plan = try ConformanceKit.plan(for: backend)
            #expect(plan.count == ConformanceKit.scenarios.count)
            let covered = Set(plannedCases.filter { $0.backend.name == backend.name }.map(\.scenario.name))
            for scenario in ConformanceKit.scenarios {
                #expect(covered.contains(scenario.name), "\(scenario.name) is neither run nor excluded on \(backend.name)")
            }
            for (name, reason) in backend.knownFailures {
                #expect(!reason.trimmingCharacters(in: .whitespaces).isEmpty, "known failure \(name) of \(backend.name) needs a reason")
            }
            #expect(ConformanceKit.staleKnownFailures(of: backend).isEmpty, "known failures of \(backend.name) name scenarios that do not exist")
        }
    }
}
