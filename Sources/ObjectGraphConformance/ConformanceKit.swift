import Foundation
import ObjectGraph

/// The conformance kit: every scenario, and the means to run them against a backend.
public enum ConformanceKit {
    /// Every scenario, in a stable order. New scenario groups are added here and then run on
    /// every backend automatically.
    public static let scenarios: [ConformanceScenario] =
        RelationshipScenarios.all + RelationshipScenarios.deletedDestinations + RelationshipScenarios.refreshedPairs + RelationshipScenarios.refreshedOneToMany + RelationshipScenarios.refreshedMoves + DeleteRuleScenarios.all + ContextScenarios.all
        + FaultingScenarios.all + ValidationScenarios.all + PersistenceScenarios.all
        + AttributeScenarios.all + FetchScenarios.all + FetchScenarios.deletedDestinations + ResultScenarios.all + ResultScenarios.groupKeys + ResultScenarios.groupByRelationship + ResultScenarios.unsavedChanges + ResultScenarios.columns
        + PredicateScenarios.all
        + ConflictScenarios.all + ConflictScenarios.faultedOwners + MergeScenarios.all + NestedContextScenarios.all + UndoScenarios.all + UndoScenarios.events + UndoScenarios.saved + UndoScenarios.otherSaves + UndoScenarios.randomWalk + StressScenarios.all
        + ClosedContainerScenarios.all

    /// The scenario named `name`.
    public static func scenario(named name: String) -> ConformanceScenario? {
        scenarios.first { $0.name == name }
    }

    /// Runs one scenario on one backend in a fresh store.
    ///
    /// A scenario whose requirements the store lacks is skipped with the reason; one listed
    /// among the backend's known failures is a ``ScenarioOutcome/knownFailure(_:)`` when it
    /// fails and a failure when it passes (so the list stays true).
    public static func run(_ scenario: ConformanceScenario, on backend: ConformanceBackend) -> ScenarioOutcome {
        let model: ManagedObjectModel
        do { model = try ConformanceModel.make() } catch { return .failed("the conformance model does not build: \(error)") }
        let environment: ScenarioEnvironment
        do { environment = try ScenarioEnvironment(backend: backend, model: model) } catch {
            return .failed("\(backend.name) store did not open: \(error)")
        }
        defer { environment.tearDown() }
        let missing = scenario.requirements.subtracting(environment.capabilities)
        if !missing.isEmpty {
            return .skipped("\(backend.name) lacks capabilities \(describe(missing)) that \(scenario.name) needs")
        }
        let outcome: ScenarioOutcome
        do {
            try scenario.body(environment)
            outcome = .passed
        } catch {
            outcome = .failed("\(error)")
        }
        if let reason = backend.knownFailures[scenario.name] {
            switch outcome {
            case .failed: return .knownFailure(reason)
            default: return .failed("\(scenario.name) is listed as a known failure of \(backend.name) (\(reason)) but passed; remove it from the list")
            }
        }
        return outcome
    }

    /// Whether each scenario will run on `backend` or be skipped, and why: decided before
    /// running from the capabilities the backend's store declares, so test runners can list
    /// skips as skips.
    public static func plan(for backend: ConformanceBackend) throws -> [(scenario: ConformanceScenario, skipReason: String?)] {
        let capabilities = try probeCapabilities(of: backend)
        return scenarios.map { scenario in
            let missing = scenario.requirements.subtracting(capabilities)
            return (scenario, missing.isEmpty ? nil : "\(backend.name) lacks capabilities \(describe(missing)) that \(scenario.name) needs")
        }
    }

    /// Opens a throwaway store of `backend` and reads the capabilities it declares.
    public static func probeCapabilities(of backend: ConformanceBackend) throws -> StoreCapabilities {
        let environment = try ScenarioEnvironment(backend: backend, model: try ConformanceModel.make())
        defer { environment.tearDown() }
        return environment.capabilities
    }

    /// Known-failure entries that name no scenario: a meta-check, so lists cannot name
    /// scenarios that were renamed or removed.
    public static func staleKnownFailures(of backend: ConformanceBackend) -> [String] {
        let names = Set(scenarios.map(\.name))
        return backend.knownFailures.keys.filter { !names.contains($0) }.sorted()
    }

    static func describe(_ capabilities: StoreCapabilities) -> String {
        var names: [String] = []
        if capabilities.contains(.persistent) { names.append("persistent") }
        if capabilities.contains(.concurrentReaders) { names.append("concurrentReaders") }
        if capabilities.contains(.multiProcess) { names.append("multiProcess") }
        if capabilities.contains(.durable) { names.append("durable") }
        return names.joined(separator: ", ")
    }
}
