import Foundation
import ObjectGraph

/// The undo random walk (``UndoWalk``) as a scenario: fixed seeds, so every run walks the
/// same steps; a failure names the seed and the shortest list of steps found that still
/// fails (replayed in fresh stores), ready to be written down as a scenario of its own.
extension UndoScenarios {
    static let randomWalk: [ConformanceScenario] = [
        ConformanceScenario("undo.randomWalk") { env in
            // UNDO_WALK_SEEDS ("1-500") and UNDO_WALK_STEPS walk further, to chase a rare failure.
            let variables = ProcessInfo.processInfo.environment
            var seeds: ClosedRange<UInt64> = 1...12
            if let text = variables["UNDO_WALK_SEEDS"] {
                let bounds = text.split(separator: "-").compactMap { UInt64($0) }
                if let first = bounds.first { seeds = first...(bounds.last ?? first) }
            }
            let steps = variables["UNDO_WALK_STEPS"].flatMap { Int($0) } ?? 150
            try UndoWalk.run(env, seeds: seeds, steps: steps)
        },
    ]
}

extension UndoWalk {
    /// Walks `steps` random steps from each seed, each in a fresh store.
    static func run(_ env: ScenarioEnvironment, seeds: ClosedRange<UInt64>, steps: Int) throws {
        for seed in seeds {
            var random = SeededRandom(seed: seed)
            let taken: [Step]
            do {
                taken = try walk(env, inChildContext: seed % 3 == 0) { walk in
                    for _ in 0..<steps { try walk.apply(walk.randomStep(&random)) }
                    try walk.apply(.check)
                    try walk.apply(.save)
                }
            } catch let failure as WalkFailure {
                let shortest = shrink(failure.steps, env, inChildContext: seed % 3 == 0)
                throw ScenarioFailure(message: "seed \(seed)\(seed % 3 == 0 ? " (in a child context)" : ""), step \(failure.steps.count): \(failure.error)\nshortest failing steps (\(shortest.steps.count)), failing with \(shortest.error):\n  " + shortest.steps.map(\.description).joined(separator: "\n  "), file: #filePath, line: #line)
            }
            _ = taken
        }
    }

    struct WalkFailure: Error {
        let steps: [Step]
        let error: Error
    }

    /// Runs `body` on a walk in a fresh store of `env`'s backend; returns the steps taken, or
    /// throws ``WalkFailure`` with the steps up to the one that failed.
    static func walk(_ env: ScenarioEnvironment, inChildContext: Bool, _ body: (UndoWalk) throws -> Void) throws -> [Step] {
        let fresh = try ScenarioEnvironment(backend: env.backend, model: env.model)
        defer { fresh.tearDown() }
        let walk = UndoWalk(fresh, inChildContext: inChildContext)
        do {
            try walk.context.performAndWait { try body(walk) }
        } catch {
            throw WalkFailure(steps: walk.steps, error: error)
        }
        return walk.steps
    }

    /// The error replaying `steps` (those that still apply) ends with, if any.
    static func replay(_ steps: [Step], _ env: ScenarioEnvironment, inChildContext: Bool) -> Error? {
        do {
            _ = try walk(env, inChildContext: inChildContext) { walk in for step in steps { try walk.apply(step) } }
            return nil
        } catch let failure as WalkFailure {
            return failure.error
        } catch {
            return error
        }
    }

    /// Drops chunks of `steps`, halving the chunk size, while the rest still fails.
    static func shrink(_ steps: [Step], _ env: ScenarioEnvironment, inChildContext: Bool) -> (steps: [Step], error: Error) {
        var current = steps
        var error = replay(current, env, inChildContext: inChildContext) ?? WalkFailure(steps: steps, error: ScenarioFailure(message: "did not fail again", file: #filePath, line: #line))
        var chunk = max(current.count / 2, 1)
        var budget = 600
        while budget > 0 {
            var index = 0
            var dropped = false
            while index < current.count && budget > 0 {
                var candidate = current
                candidate.removeSubrange(index..<min(index + chunk, current.count))
                budget -= 1
                if let again = replay(candidate, env, inChildContext: inChildContext) {
                    current = candidate
                    error = again
                    dropped = true
                } else {
                    index += chunk
                }
            }
            if chunk == 1 && !dropped { break }
            chunk = max(chunk / 2, 1)
        }
        return (current, error)
    }
}
