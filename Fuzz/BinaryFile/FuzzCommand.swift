#if !LIBFUZZER
import Foundation

/// `objectgraph-fuzz-binary`: the binary store reader's fuzz loop (see
/// Backends/BinaryFile/README.md). Without `LIBFUZZER` defined this is a self-contained
/// mutation loop; built with `-sanitize=fuzzer -D LIBFUZZER`, libFuzzer drives
/// ``LLVMFuzzerTestOneInput`` instead.
///
///     objectgraph-fuzz-binary [--seconds S] [--iterations N] [--seed X] [--write-seeds DIR] [FILE…]
///
/// Files given are checked one by one (to replay a crash input libFuzzer saved).
@main
struct FuzzCommand {
    static func main() throws {
        var arguments = Array(CommandLine.arguments.dropFirst())
        func option(_ name: String) -> String? {
            guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
            defer { arguments.removeSubrange(index...index + 1) }
            return arguments[index + 1]
        }
        let seconds = option("--seconds").flatMap(Double.init)
        let iterations = option("--iterations").flatMap(Int.init) ?? (seconds == nil ? 100_000 : .max)
        let seed = option("--seed").flatMap(UInt64.init) ?? UInt64.random(in: 0...UInt64.max)
        let seedDirectory = option("--write-seeds")
        let seeds = try FuzzHarness.seeds()
        if let seedDirectory {
            try FileManager.default.createDirectory(atPath: seedDirectory, withIntermediateDirectories: true)
            for (index, bytes) in seeds.enumerated() {
                try Data(bytes).write(to: URL(fileURLWithPath: seedDirectory).appendingPathComponent("seed-\(index).bin"))
            }
            print("wrote \(seeds.count) seed files to \(seedDirectory)")
            return
        }
        if !arguments.isEmpty {
            for path in arguments {
                print("\(path): \(FuzzInput.check(Array(try Data(contentsOf: URL(fileURLWithPath: path)))))")
            }
            return
        }
        print("fuzzing the binary store reader: seed \(seed), \(seconds.map { "\($0) s" } ?? "\(iterations) inputs")")
        let start = ContinuousClock.now
        let tally = FuzzHarness.run(seeds: seeds, iterations: iterations, seconds: seconds, seed: seed)
        let elapsed = ContinuousClock.now - start
        let total = tally.values.reduce(0, +)
        print("\(total) decodes in \(elapsed), no crash; outcomes:")
        for (outcome, count) in tally.sorted(by: { $0.value > $1.value }) { print("  \(count)\t\(outcome)") }
    }
}
#endif
