import Foundation
import ObjectGraph

/// Issue 3: iterating a million objects with `fetchBatched` must run in bounded memory.
///
/// Each phase runs in its own child process (this executable, with `--memory-child`), so a
/// phase's peak resident size (`VmHWM`) is its own and not the benchmark run's:
///
/// 1. `insert`: N small `Item`s through a context, saved in batches of 10,000 with
///    `context.reset()` after each save;
/// 2. `iterate`: a new container on that file, `context.fetchBatched` with batch size 500,
///    reading `number` of every object;
/// 3. `raw`: the same iteration through raw sqlite3, the floor (Swift runtime, Foundation,
///    libsqlite3 and its page cache).
enum MemoryWorkload {
    static let insertBatch = 10_000
    static let fetchBatchSize = 500

    /// `VmHWM` and `VmRSS` of this process, in KiB.
    static func status() -> (peak: Int, current: Int) {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return (0, 0) }
        func value(_ key: String) -> Int {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(key + ":") }) else { return 0 }
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0
        }
        return (value("VmHWM"), value("VmRSS"))
    }

    /// Resets `VmHWM` to the current size (Linux: `echo 5 > /proc/self/clear_refs`), so the
    /// next reading is the peak of what follows. Returns false where that is not allowed.
    @discardableResult
    static func resetPeak() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        do { try handle.write(contentsOf: Data("5".utf8)) } catch { return false }
        return true
    }

    static func mib(_ kib: Int) -> String { String(format: "%.1f", Double(kib) / 1024) }

    static func label(_ count: Int) -> String {
        count % 1_000_000 == 0 ? "\(count / 1_000_000)M" : count % 1_000 == 0 ? "\(count / 1_000)k" : "\(count)"
    }

    // MARK: Child processes

    /// Runs one phase in this process and prints `key=value` pairs for the parent.
    /// `rowCacheCapacity` (iterate only): a coordinator with that row-cache capacity instead
    /// of the container's default, to measure what the cache costs.
    static func runChild(mode: String, path: String, count: Int, rowCacheCapacity: Int? = nil) throws {
        let model = try BenchmarkModel.make()
        let url = URL(fileURLWithPath: path)
        let start = status()
        var results: [String: String] = ["start_rss_kib": "\(start.current)"]
        let began = ContinuousClock.now
        switch mode {
        case "insert":
            let container = try PersistentContainer(model: model, stores: [.sqlite(at: url)])
            let context = container.newBackgroundContext()
            var next = 1
            while next <= count {
                try context.performAndWait {
                    for number in next..<min(count + 1, next + insertBatch) {
                        let item = Item(context: context)
                        item.number = Int64(number)
                        item.label = BenchmarkData.itemLabel(number)
                    }
                    try context.save()
                    context.reset()
                }
                next += insertBatch
            }
            container.close()
            results["rows"] = "\(count)"
        case "iterate":
            let coordinator: PersistentStoreCoordinator
            if let rowCacheCapacity {
                coordinator = PersistentStoreCoordinator(model: model, rowCacheCapacity: rowCacheCapacity)
                try coordinator.addPersistentStore(.sqlite(at: url))
            } else {
                coordinator = try PersistentContainer(model: model, stores: [.sqlite(at: url)]).coordinator
            }
            let context = ManagedObjectContext(coordinator: coordinator)
            results["open_rss_kib"] = "\(status().current)"
            results["row_cache_capacity"] = "\(coordinator.rowCache.capacity)"
            results["object_id_stride"] = "\(MemoryLayout<ObjectID>.stride)"
            results["snapshot_stride"] = "\(MemoryLayout<RowSnapshot>.stride)"
            try context.performAndWait {
                var request = FetchRequest<Item>()
                request.fetchBatchSize = fetchBatchSize
                let items = try context.fetchBatched(request)
                let afterFetch = status()
                results["fetch_peak_kib"] = "\(afterFetch.peak)"
                results["fetch_rss_kib"] = "\(afterFetch.current)"
                results["peak_reset"] = resetPeak() ? "yes" : "no"
                var rows = 0
                var sum: Int64 = 0
                for item in items {
                    sum &+= item.number
                    rows += 1
                }
                let afterLoop = status()
                results["loop_peak_kib"] = "\(afterLoop.peak)"
                results["rows"] = "\(rows)"
                results["sum"] = "\(sum)"
                results["row_cache"] = "\(coordinator.rowCache.count)"
                results["registered"] = "\(context.registeredObjects.count)"
            }
            for store in coordinator.persistentStores { coordinator.removePersistentStore(store) }
        case "raw":
            let db = try RawDB(path: path)
            let statement = try db.prepare("SELECT \(BenchmarkModel.itemNumber) FROM \(BenchmarkModel.itemTable) ORDER BY pk")
            var rows = 0
            var sum: Int64 = 0
            while try statement.step() {
                sum &+= statement.int64(0)
                rows += 1
            }
            results["rows"] = "\(rows)"
            results["sum"] = "\(sum)"
        default:
            throw BenchmarkFailure("unknown memory phase \(mode)")
        }
        let elapsed = ContinuousClock.now - began
        let end = status()
        results["seconds"] = "\(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)"
        results["peak_kib"] = "\(end.peak)"
        results["end_rss_kib"] = "\(end.current)"
        print(results.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
    }

    static func spawn(mode: String, path: String, count: Int, rowCacheCapacity: Int? = nil) throws -> [String: String] {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--memory-child", mode, "--memory-path", path, "--memory-count", "\(count)"]
            + (rowCacheCapacity.map { ["--memory-row-cache", "\($0)"] } ?? [])
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchmarkFailure("memory phase '\(mode)' exited with status \(process.terminationStatus)")
        }
        var values: [String: String] = [:]
        for pair in String(decoding: data, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
        }
        return values
    }

    // MARK: The workload

    /// Runs the three phases and returns the lines to print, the headline last.
    static func run(_ fixtures: Fixtures, rowCacheCapacity: Int? = nil, log: (String) -> Void) throws -> [String] {
        let count = fixtures.sizes.memoryObjects
        let url = try fixtures.copy(try fixtures.emptyStore(), as: "memory")
        defer { fixtures.remove(url) }
        log("  memory: inserting \(count) items in batches of \(insertBatch)…")
        let insert = try spawn(mode: "insert", path: url.path, count: count)
        log("  memory: iterating with fetchBatched (batch size \(fetchBatchSize))…")
        let iterate = try spawn(mode: "iterate", path: url.path, count: count, rowCacheCapacity: rowCacheCapacity)
        let raw = try spawn(mode: "raw", path: url.path, count: count)
        let expectedSum = Int64(count) * Int64(count + 1) / 2
        for (name, phase) in [("ObjectGraph", iterate), ("raw sqlite3", raw)] {
            guard phase["rows"] == "\(count)", phase["sum"] == "\(expectedSum)" else {
                throw BenchmarkFailure("memory: \(name) iterated \(phase["rows"] ?? "?") items summing to \(phase["sum"] ?? "?"), expected \(count) summing to \(expectedSum)")
            }
        }
        func kib(_ phase: [String: String], _ key: String) -> Int { Int(phase[key] ?? "") ?? 0 }
        // VmHWM is the largest of the readings: the kernel updates it lazily.
        let peak = max(kib(iterate, "peak_kib"), kib(iterate, "fetch_peak_kib"), kib(iterate, "loop_peak_kib"))
        var lines: [String] = []
        lines.append("# memory: insert of \(label(count)) in saves of \(insertBatch) with reset: peak RSS \(mib(kib(insert, "peak_kib"))) MiB, \(String(format: "%.1f", Double(insert["seconds"] ?? "") ?? 0)) s")
        lines.append("# memory: ObjectID stride \(iterate["object_id_stride"] ?? "?") bytes, RowSnapshot stride \(iterate["snapshot_stride"] ?? "?") bytes (plus its arrays); row cache capacity \(iterate["row_cache_capacity"] ?? "?") rows")
        lines.append("# memory: fetchBatched: RSS \(mib(kib(iterate, "start_rss_kib"))) MiB at start, \(mib(kib(iterate, "open_rss_kib"))) MiB with the container open, peak \(mib(kib(iterate, "fetch_peak_kib"))) MiB while fetching the \(label(count)) IDs (\(mib(kib(iterate, "fetch_rss_kib"))) MiB after)")
        let loopPeak = iterate["peak_reset"] == "yes" ? "peak \(mib(kib(iterate, "loop_peak_kib"))) MiB while iterating (peak reset after the ID fetch)" : "peak \(mib(kib(iterate, "loop_peak_kib"))) MiB at the end of iterating"
        lines.append("# memory: fetchBatched: \(loopPeak); RSS \(mib(kib(iterate, "end_rss_kib"))) MiB at exit; row cache \(iterate["row_cache"] ?? "?") rows, \(iterate["registered"] ?? "?") objects registered at the end")
        lines.append("# memory: raw sqlite3 iteration of the same rows: peak RSS \(mib(kib(raw, "peak_kib"))) MiB (the process floor)")
        lines.append("batched iteration of \(label(count)): peak RSS \(mib(peak)) MiB (current VmRSS \(mib(kib(iterate, "end_rss_kib"))) MiB; goal < 100 MiB)")
        return lines
    }
}
