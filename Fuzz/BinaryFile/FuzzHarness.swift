import Foundation
import ObjectGraph
import ObjectGraphBinaryFile

/// Seed files and the self-contained fuzz loop for the binary store's reader.
enum FuzzHarness {
    /// Valid store files of fixture graphs of several sizes (one empty), made through real
    /// stores in a temporary folder.
    static func seeds(count: Int = 6, seed: UInt64 = 1) throws -> [[UInt8]] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("og-fuzz-seeds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var files: [[UInt8]] = []
        for index in 0..<count {
            let url = directory.appendingPathComponent("seed-\(index).bin")
            let container = try PersistentContainer(model: FuzzInput.model, stores: [.binaryFile(at: url, options: ["synchronous": "OFF"])])
            let context = container.newBackgroundContext()
            if index > 0 {
                try context.performAndWait { try FixtureGraph.populate(context, seed: seed &+ UInt64(index), people: index * index * 2) }
            }
            container.close()
            files.append(Array(try Data(contentsOf: url)))
        }
        return files
    }

    /// Mutates the seeds `iterations` times (or until `seconds` pass) and checks each input;
    /// returns how often each outcome occurred.
    static func run(seeds: [[UInt8]], iterations: Int, seconds: Double?, seed: UInt64) -> [FuzzInput.Outcome: Int] {
        var mutator = Mutator(random: SeededGenerator(seed: seed))
        var tally: [FuzzInput.Outcome: Int] = [:]
        let deadline = seconds.map { ContinuousClock.now + .milliseconds(Int($0 * 1000)) }
        var corpus = seeds
        for iteration in 0..<iterations {
            if let deadline, iteration % 256 == 0, ContinuousClock.now >= deadline { break }
            let input = mutator.mutate(corpus.randomElement(using: &mutator.random)!, spliceWith: corpus.randomElement(using: &mutator.random)!)
            let outcomes = FuzzInput.check(input)
            for outcome in outcomes { tally[outcome, default: 0] += 1 }
            // Inputs that still decode after repair are kept: they are the interesting ones.
            if outcomes.last == .decoded, corpus.count < 256, let repaired = FuzzInput.repairFrame(input) { corpus.append(repaired) }
        }
        return tally
    }
}
