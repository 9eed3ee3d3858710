import Foundation
import ObjectGraph
import ObjectGraphBinaryFile

/// Issue 6: the binary store's peak memory. An atomic store holds every row in memory, so its
/// resident size grows with the data; this measures by how much, each phase in its own child
/// process (as ``MemoryWorkload``), so each peak (`VmHWM`) is the phase's own:
///
/// - `binary-load`: open a store of N items in a container (read, check, decode);
/// - `binary-save`: the same, then change one item and save (the whole file is encoded again);
/// - `binary-flat`: read the same records from the flat file (``FlatFile``): the floor of
///   holding N `(number, label)` structs in Swift.
enum BinaryFileMemory {
    static func runChild(mode: String, path: String) throws {
        let model = try BenchmarkModel.make()
        let start = MemoryWorkload.status()
        let began = ContinuousClock.now
        var results: [String: String] = ["start_rss_kib": "\(start.current)"]
        switch mode {
        case "binary-load", "binary-save":
            let container = try PersistentContainer(model: model, stores: [.binaryFile(at: URL(fileURLWithPath: path))])
            results["open_peak_kib"] = "\(MemoryWorkload.status().peak)"
            let tally = try BinaryFileWorkloads.storedTally(container)
            results["rows"] = "\(tally.rows)"
            if mode == "binary-save" {
                let context = container.newBackgroundContext()
                try context.performAndWait {
                    var request = FetchRequest<Item>(predicate: try FetchPredicate(format: "number == 1"))
                    request.returnsObjectsAsFaults = false
                    try context.fetch(request)[0].label = "changed"
                    try context.save()
                }
            }
            container.close()
        case "binary-flat":
            results["rows"] = "\(BinaryFileWorkloads.recordsTally(try FlatFile.load(URL(fileURLWithPath: path))).rows)"
        default:
            throw BenchmarkFailure("unknown binary memory phase \(mode)")
        }
        let elapsed = ContinuousClock.now - began
        let end = MemoryWorkload.status()
        results["seconds"] = "\(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)"
        results["peak_kib"] = "\(end.peak)"
        print(results.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
    }

    static func run(_ fixtures: Fixtures, log: (String) -> Void) throws -> [String] {
        let count = fixtures.sizes.binaryObjects
        let template = try BinaryFileWorkloads.template(fixtures)
        let store = try BinaryFileWorkloads.copy(fixtures, template, "binary-memory")
        let flat = fixtures.directory.appendingPathComponent("binary-memory.flat")
        try FlatFile.save(try BinaryFileWorkloads.loadItems(template, fixtures), to: flat)
        defer { for url in [store, flat] { try? FileManager.default.removeItem(at: url) } }
        func size(_ url: URL) -> Int { ((try? FileManager.default.attributesOfItem(atPath: url.path)[.size]) as? Int) ?? 0 }
        let storeBytes = size(store)
        let flatBytes = size(flat)
        var phases: [String: [String: String]] = [:]
        for (mode, url) in [("binary-load", store), ("binary-save", store), ("binary-flat", flat)] {
            log("  binary-memory: \(mode)…")
            let phase = try MemoryWorkload.spawn(mode: mode, path: url.path, count: count)
            guard phase["rows"] == "\(count)" else { throw BenchmarkFailure("\(mode) saw \(phase["rows"] ?? "?") rows, expected \(count)") }
            phases[mode] = phase
        }
        func kib(_ mode: String, _ key: String) -> Int { Int(phases[mode]?[key] ?? "") ?? 0 }
        func growth(_ mode: String) -> Int { kib(mode, "peak_kib") - kib(mode, "start_rss_kib") }
        func perFile(_ mode: String, _ bytes: Int) -> String { String(format: "%.1f", Double(growth(mode) * 1024) / Double(max(bytes, 1))) }
        let label = MemoryWorkload.label(count)
        return [
            "# binary-memory: \(label) items; store file \(MemoryWorkload.mib(storeBytes / 1024)) MiB, flat file \(MemoryWorkload.mib(flatBytes / 1024)) MiB; process RSS at start \(MemoryWorkload.mib(kib("binary-load", "start_rss_kib"))) MiB",
            "binary store open of \(label): peak RSS \(MemoryWorkload.mib(kib("binary-load", "peak_kib"))) MiB, +\(MemoryWorkload.mib(growth("binary-load"))) MiB over start = \(perFile("binary-load", storeBytes))× the file",
            "binary store open + save of \(label): peak RSS \(MemoryWorkload.mib(kib("binary-save", "peak_kib"))) MiB, +\(MemoryWorkload.mib(growth("binary-save"))) MiB = \(perFile("binary-save", storeBytes))× the file",
            "flat file read of \(label) (raw floor): peak RSS \(MemoryWorkload.mib(kib("binary-flat", "peak_kib"))) MiB, +\(MemoryWorkload.mib(growth("binary-flat"))) MiB = \(perFile("binary-flat", flatBytes))× its file",
        ]
    }
}
