import ArgumentParser
import Foundation
import ObjectGraph
import ObjectGraphConformance

/// `objectgraph conformance`: runs the conformance kit against the built-in stores.
struct ConformanceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conformance",
        abstract: "Run every conformance scenario on every built-in store and print the matrix.")

    @Option(help: "Run only this store (default: all).")
    var store: BuiltInStore?

    @Flag(help: "Print only failures and the summary lines.")
    var quiet = false

    @Option(help: "Run only the scenarios whose name contains this text (default: all).")
    var scenario: String?

    @Option(name: .customLong("repeat"), help: "Run the selection this many times, stopping at the first failure.")
    var rounds: Int = 1

    /// Bad option values are usage errors of this subcommand (checked before `run`, so the
    /// usage printed is `objectgraph conformance`'s, not the root command's).
    func validate() throws {
        guard rounds >= 1 else { throw ValidationError("--repeat must be at least 1") }
        guard ConformanceKit.scenarios.contains(where: { scenario.map($0.name.contains) ?? true }) else {
            throw ValidationError("no scenario's name contains '\(scenario ?? "")'")
        }
    }

    func run() throws {
        let stores = store.map { [$0] } ?? BuiltInStore.allCases
        let backends = stores.map(\.conformanceBackend)
        let scenarios = ConformanceKit.scenarios.filter { scenario.map($0.name.contains) ?? true }
        var outcomes: [[ScenarioOutcome]] = []
        for round in 1...rounds {
            outcomes = Array(repeating: [], count: scenarios.count)
            for backend in backends {
                for (index, scenario) in scenarios.enumerated() {
                    outcomes[index].append(ConformanceKit.run(scenario, on: backend))
                }
            }
            // A repeated run reports the first round that failed, or the last one.
            if outcomes.joined().contains(where: \.isFailure) {
                if rounds > 1 { print("round \(round) of \(rounds) failed") }
                break
            }
        }
        let width = max(40, scenarios.map(\.name.count).max() ?? 0)
        if !quiet {
            print("scenario".padding(toLength: width, withPad: " ", startingAt: 0) + "  " + backends.map(\.name).joined(separator: "  "))
        }
        var notes: [String] = []
        for (index, scenario) in scenarios.enumerated() {
            let cells = zip(backends, outcomes[index]).map { backend, outcome -> String in
                let mark: String
                switch outcome {
                case .passed: mark = "pass"
                case .failed(let message): mark = "FAIL"; notes.append("\(backend.name) · \(scenario.name): \(message)")
                case .skipped(let reason): mark = "skip"; notes.append("\(backend.name) · \(scenario.name) skipped: \(reason)")
                case .knownFailure(let reason): mark = "known"; notes.append("\(backend.name) · \(scenario.name) known failure: \(reason)")
                }
                return mark.padding(toLength: max(backend.name.count, 5), withPad: " ", startingAt: 0)
            }
            if !quiet || cells.contains(where: { $0.hasPrefix("FAIL") }) {
                print(scenario.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + cells.joined(separator: "  "))
            }
        }
        for note in notes { print(note) }
        var total = (passed: 0, failed: 0, skipped: 0)
        for (column, backend) in backends.enumerated() {
            let column = outcomes.map { $0[column] }
            let passed = column.filter { $0 == .passed }.count
            let failed = column.filter(\.isFailure).count
            let skipped = column.count - passed - failed
            total.passed += passed; total.failed += failed; total.skipped += skipped
            print("\(backend.name): \(passed) passed, \(failed) failed, \(skipped) skipped")
        }
        print("conformance: \(total.passed) passed, \(total.failed) failed, \(total.skipped) skipped")
        if total.failed > 0 { throw ExitCode.failure }
    }
}
