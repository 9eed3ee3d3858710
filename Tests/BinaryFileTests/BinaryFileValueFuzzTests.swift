import Foundation
import ObjectGraph
import ObjectGraphBinaryFile
@testable import ObjectGraphBinaryFileFuzz
import ObjectGraphConformance
import Testing

/// Damage behind a sound checksum that the decoder lets through — another valid string, key,
/// count or entity code — and the store then read and written every way the probe knows
/// (``StoreDamageProbe``): each run ends in values or typed errors, never a crash. (The
/// decoder's own fuzz runs, `FuzzHarness`, stop at decoding.)
@Suite("Binary store: damaged values, fuzzed")
struct BinaryFileValueFuzzTests {
    typealias Support = BinaryFileTestSupport

    /// A store seeded with every entity of the conformance model, as bytes.
    static let seeded: Result<[UInt8], Error> = Result {
        let url = try Support.temporaryStore()
        defer { Support.remove(url) }
        let container = try Support.container(url, model: try ConformanceModel.make(), options: ["synchronous": "OFF"])
        try StoreDamageProbe.seed(container)
        container.close()
        return Array(try Data(contentsOf: url))
    }

    @Test("a byte of the content changed behind a repaired checksum, and the store read and written every way: values or typed errors, never a crash")
    func damagedContent() throws {
        let pristine = try Self.seeded.get()
        let iterations = ProcessInfo.processInfo.environment["BINARY_FUZZ_ITERATIONS"].flatMap { Int($0) } ?? 300
        let firstSeed = ProcessInfo.processInfo.environment["BINARY_FUZZ_SEED"].flatMap { UInt64($0) } ?? 1
        let model = try ConformanceModel.make()
        var opened = 0
        for seed in firstSeed..<firstSeed + UInt64(iterations) {
            var random = SeededRandom(seed: seed)
            var bytes = pristine
            // Past the 24-byte header, before the checksum: small values (counts, codes, keys'
            // low bytes) as often as any, since those are what decode into something else.
            let position = 24 + random.next(bytes.count - 28)
            let candidates: [UInt8] = [0, 1, 2, 3, 0x7F, 0x80, 0xFF, UInt8(random.next(256))]
            bytes[position] = candidates[random.next(candidates.count)]
            guard bytes != pristine, let framed = FuzzInput.repairFrame(bytes) else { continue }
            let what = "seed \(seed): byte \(position) = \(bytes[position])"
            if ProcessInfo.processInfo.environment["BINARY_FUZZ_TRACE"] != nil { print(what) }
            let url = try Support.temporaryStore()
            defer { Support.remove(url) }
            try Data(framed).write(to: url)
            let container: PersistentContainer
            do {
                container = try Support.container(url, model: model, options: ["synchronous": "OFF"])
            } catch {
                #expect(StoreDamageProbe.isTyped(error), "\(what): opening threw \(type(of: error)): \(error)")
                continue
            }
            opened += 1
            let untyped = StoreDamageProbe.exercise(container)
            #expect(untyped.isEmpty, "\(what):\n\(untyped.joined(separator: "\n"))")
            container.close()
        }
        if ProcessInfo.processInfo.environment["BINARY_FUZZ_TRACE"] != nil { print("\(opened) of \(iterations) opened") }
        if ProcessInfo.processInfo.environment["BINARY_FUZZ_SEED"] == nil {
            #expect(opened > iterations / 20, "some damage decodes, and reaches the context (\(opened) of \(iterations) opened)")
        }
    }
}
