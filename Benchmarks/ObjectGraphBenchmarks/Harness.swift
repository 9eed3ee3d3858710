import Foundation
import ObjectGraph

/// A benchmark that cannot be trusted (the two sides disagree, a count is off): the run stops.
struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// What a side saw: rows touched and a checksum over the values it touched. Both sides of a
/// workload must report the same tally, or the benchmark is broken and the run fails.
struct Tally: Equatable, CustomStringConvertible {
    var rows = 0
    var checksum: UInt64 = 0

    @inline(__always) mutating func add(_ value: UInt64) {
        rows += 1
        checksum = checksum &+ value
    }

    var description: String { "\(rows) rows, checksum \(checksum)" }
}

/// One timed repetition of one side, prepared (untimed) by the workload.
struct Run {
    /// The timed work; returns what it touched.
    var body: () throws -> Tally
    /// Untimed, after the body: what the store holds now (for workloads that write).
    var after: (() throws -> Tally)? = nil
    /// Untimed: closes files and contexts.
    var cleanup: () -> Void = {}
    /// The ObjectGraph side's context, whose statistics the verbose log shows.
    var context: ManagedObjectContext? = nil
}

/// Both sides of a workload: each call prepares a fresh repetition.
struct Sides {
    var objectGraph: () throws -> Run
    var raw: () throws -> Run
    var teardown: () -> Void = {}
    /// What the measured side is, for messages ("GRDB" when the GRDB table swaps it in).
    var subject = "ObjectGraph"
}

/// A named workload.
struct Workload: Sendable {
    let name: String
    let summary: String
    let make: @Sendable (Fixtures) throws -> Sides
}

/// The medians of one workload.
struct Measurement {
    let name: String
    let objectGraph: Double
    let raw: Double
    let runs: (objectGraph: Int, raw: Int)
    var ratio: Double { objectGraph / raw }
}

enum Harness {
    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        try body()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// Runs both sides `repetitions` times, alternating which goes first, and checks that
    /// every repetition of both sides saw the same tally. A side whose single run takes longer
    /// than `budget` seconds is not repeated (its median is then of fewer runs, and the table
    /// says so).
    static func measure(_ workload: Workload, fixtures: Fixtures, repetitions: Int, budget: Double, log: (String) -> Void) throws -> Measurement {
        let sides = try workload.make(fixtures)
        defer { sides.teardown() }
        var times: [Bool: [Double]] = [true: [], false: []]
        var reference: (tally: Tally, state: Tally?, side: String)?
        for repetition in 0..<repetitions {
            let order = repetition % 2 == 0 ? [true, false] : [false, true]
            for isObjectGraph in order {
                let spent = times[isObjectGraph]!.reduce(0, +)
                if !times[isObjectGraph]!.isEmpty && spent / Double(times[isObjectGraph]!.count) > budget { continue }
                let side = isObjectGraph ? sides.subject : "raw"
                let run = try isObjectGraph ? sides.objectGraph() : sides.raw()
                var tally = Tally()
                let elapsed: Double
                do {
                    elapsed = try seconds {
                        tally = try run.body()
                        // The context holds the objects it registered until it lets them go
                        // (a sweep, a reset, its end); letting them go is part of the work, as
                        // releasing its structs is part of the raw side's, so it is timed.
                        if let context = run.context { context.performAndWait { context.reset() } }
                    }
                } catch {
                    run.cleanup()
                    throw BenchmarkFailure("\(workload.name): \(side) failed: \(error)")
                }
                let statistics = run.context.map { context in
                    context.performAndWait {
                        let s = context.statistics
                        return "; \(s.storeRoundTrips) round trips, \(s.faultsFired) faults, \(s.relationshipFaultsFired) to-many faults, \(s.rowCacheHits) row-cache hits"
                    }
                } ?? ""
                let state: Tally?
                do { state = try run.after?() } catch {
                    run.cleanup()
                    throw BenchmarkFailure("\(workload.name): checking what \(side) stored failed: \(error)")
                }
                run.cleanup()
                log("  \(workload.name) #\(repetition + 1) \(side): \(String(format: "%.6f", elapsed)) s (\(tally)\(state.map { "; stored: \($0)" } ?? "")\(statistics))")
                if let reference {
                    guard reference.tally == tally, reference.state == state else {
                        throw BenchmarkFailure(
                            "\(workload.name): \(side) saw \(tally)\(state.map { ", stored \($0)" } ?? "") but \(reference.side) saw \(reference.tally)\(reference.state.map { ", stored \($0)" } ?? "") — the benchmark is not measuring the same work")
                    }
                } else {
                    guard tally.rows > 0 else { throw BenchmarkFailure("\(workload.name): \(side) touched no rows") }
                    reference = (tally, state, side)
                }
                times[isObjectGraph]!.append(elapsed)
            }
        }
        return Measurement(
            name: workload.name, objectGraph: median(times[true]!), raw: median(times[false]!),
            runs: (times[true]!.count, times[false]!.count))
    }

    static func header(subject: String = "objectgraph_s") -> String {
        pad("workload", 18) + lpad(subject, 14) + lpad("raw_s", 11) + lpad("ratio", 9)
    }

    static func row(_ m: Measurement) -> String {
        var line = pad(m.name, 18) + lpad(format(m.objectGraph), 14) + lpad(format(m.raw), 11) + lpad(String(format: "%.2f", m.ratio), 9)
        if m.runs.objectGraph != m.runs.raw { line += "   (medians of \(m.runs.objectGraph) vs \(m.runs.raw) runs)" }
        return line
    }

    static func format(_ seconds: Double) -> String {
        seconds >= 10 ? String(format: "%.2f", seconds) : seconds >= 1 ? String(format: "%.3f", seconds) : seconds >= 0.01 ? String(format: "%.4f", seconds) : String(format: "%.6f", seconds)
    }

    static func pad(_ text: String, _ width: Int) -> String { text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count) }
    static func lpad(_ text: String, _ width: Int) -> String { text.count >= width ? " " + text : String(repeating: " ", count: width - text.count) + text }
}
