import ArgumentParser
import CLMDB
import CSQLite
import Foundation

/// `objectgraph-bench`: ObjectGraph on SQLite against raw sqlite3, and on LMDB against raw
/// LMDB, each doing the same work in one run, reported as ratios of medians. See
/// Benchmarks/README.md.
@main
struct BenchmarkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "objectgraph-bench",
        abstract: "ObjectGraph's SQLite and LMDB stores against raw sqlite3 and raw LMDB, and its binary store against a hand-written flat file, side by side, as ratios.",
        discussion: "Workloads: \((allWorkloads.map(\.name) + ["memory", "binary-memory", "floor"]).joined(separator: ", ")). Run a release build.")

    static let sqliteWorkloads: [Workload] = ChatWorkloads.all + SchoolWorkloads.all
    static let allWorkloads: [Workload] = sqliteWorkloads + BinaryFileWorkloads.all

    /// Which stores' tables to run.
    enum StoreChoice: String, ExpressibleByArgument, CaseIterable {
        case sqlite, lmdb, binary, grdb, all
    }

    @Option(help: "Which store's table: sqlite, lmdb, binary, grdb (the SQLite table, GRDB's against the same raw side, and the two compared; needs `make bench-grdb`) or all (default; includes grdb when built with it).")
    var store: StoreChoice = .all

    /// Whether this binary was built with the GRDB side (`make bench-grdb`).
    static var hasGRDB: Bool {
        #if GRDB_COMPARISON
        true
        #else
        false
        #endif
    }

    @Argument(help: "Workloads to run (default: all). 'memory' is the batched-iteration memory check.")
    var workloads: [String] = []

    @Flag(help: "Smaller sizes (100 chats, 1,000 students, 100k objects for memory), 3 repetitions.")
    var quick = false

    @Option(help: "Repetitions per side (default 5, or 3 with --quick); the median is reported.")
    var repetitions: Int?

    @Option(help: "A side whose runs average more than this many seconds is not repeated further.")
    var budget: Double = 60

    @Option(help: "Chats (messages per chat stay 100 unless --messages-per-chat).")
    var chats: Int?

    @Option(help: "Messages per chat.")
    var messagesPerChat: Int?

    @Option(help: "Objects for the memory workload.")
    var memoryObjects: Int?

    @Option(help: "Objects for the binary-store workloads (default 100,000).")
    var binaryObjects: Int?

    @Option(help: "For the memory workload: iterate through a coordinator with this row-cache capacity (default: the container's).")
    var memoryRowCache: Int?

    @Option(help: "A directory for the database files, kept afterwards (default: a temporary one, removed).")
    var directory: String?

    @Flag(help: "Print every repetition's time and tally to standard error.")
    var verbose = false

    @Flag(help: "List the workloads and exit.")
    var list = false

    @Flag(help: "Leave glibc's heap trimming at its default (the timed runs turn it off; see Benchmarks/README.md).")
    var trimHeap = false

    @Option(help: .hidden) var memoryChild: String?
    @Option(help: .hidden) var memoryPath: String?
    @Option(help: .hidden) var memoryCount: Int?

    func validate() throws {
        let known = Set(Self.allWorkloads.map(\.name) + ["memory", "binary-memory", "floor"])
        for name in workloads where !known.contains(name) {
            throw ValidationError("unknown workload '\(name)'; known: \(known.sorted().joined(separator: ", "))")
        }
        if let repetitions, repetitions < 1 { throw ValidationError("--repetitions must be at least 1") }
        if store == .grdb && !Self.hasGRDB { throw ValidationError("this build has no GRDB side: run `make bench-grdb`") }
    }

    /// `mallopt(M_TRIM_THRESHOLD, 1 GiB)`, looked up at run time: Glibc's Swift module does not
    /// export `<malloc.h>`.
    private static func turnOffHeapTrimming() throws {
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        let trimThreshold: Int32 = -1  // M_TRIM_THRESHOLD in <malloc.h>
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt"),
              unsafeBitCast(symbol, to: Mallopt.self)(trimThreshold, 1 << 30) == 1 else {
            throw BenchmarkFailure("could not turn glibc's heap trimming off (mallopt); run with --trim-heap")
        }
    }

    func run() throws {
        if let memoryChild {
            if memoryChild.hasPrefix("binary-") {
                try BinaryFileMemory.runChild(mode: memoryChild, path: memoryPath ?? "")
            } else {
                try MemoryWorkload.runChild(mode: memoryChild, path: memoryPath ?? "", count: memoryCount ?? 0, rowCacheCapacity: memoryRowCache)
            }
            return
        }
        if list {
            for workload in Self.allWorkloads { print(Harness.pad(workload.name, 18) + workload.summary) }
            print(Harness.pad("memory", 18) + "insert N small objects in batches, then iterate them with fetchBatched(500): peak RSS")
            print(Harness.pad("binary-memory", 18) + "open a binary store of N items, and read the same records from a flat file: peak RSS against the file size")
            print(Harness.pad("floor", 18) + "raw LMDB's and raw sqlite3's fetch-all with an object per row (three shapes): floors under fetch-all, as # lines in each table")
            return
        }
        // glibc hands the free top of the heap back to the kernel whenever it exceeds 128 KiB,
        // so whether a run's objects are faulted in again by the next run depends on whether
        // any allocation that outlives the run happens to sit above them: a change that
        // allocates nothing per run flipped SQLite fetch-all between the two (15k against 76k
        // page faults, +8%). Both sides run with trimming off, as in a process whose heap is
        // warm; the memory workloads' child processes keep the default.
        if !trimHeap { try Self.turnOffHeapTrimming() }
        var sizes = quick ? Sizes.quick : Sizes.full
        if let chats { sizes.chats = chats }
        if let messagesPerChat { sizes.messagesPerChat = messagesPerChat }
        if let memoryObjects { sizes.memoryObjects = memoryObjects }
        if let binaryObjects { sizes.binaryObjects = binaryObjects }
        let repetitions = self.repetitions ?? (quick ? 3 : 5)
        let selected = workloads.isEmpty ? Self.allWorkloads.map(\.name) + ["memory", "binary-memory", "floor"] : workloads

        let keep = directory != nil
        let root = directory.map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("objectgraph-bench-\(UUID().uuidString)")
        let fixtures = try Fixtures(directory: root, sizes: sizes)
        defer { if !keep { try? FileManager.default.removeItem(at: root) } }

        let verbose = self.verbose
        let log: (String) -> Void = { line in
            if verbose { FileHandle.standardError.write(Data((line + "\n").utf8)) }
        }
        let date = ISO8601DateFormatter().string(from: Date())
        print("# objectgraph-bench \(quick ? "--quick " : "")on \(date): \(ProcessInfo.processInfo.activeProcessorCount) cores, sqlite \(String(cString: sqlite3_libversion())), \(String(cString: mdb_version(nil, nil, nil)))")
        print("# \(sizes.chats) chats × \(sizes.messagesPerChat) messages, \(sizes.students) students × \(sizes.subjectsPerStudent) of \(sizes.subjects) subjects; median of \(repetitions) runs per side; ratio = objectgraph / raw")
        print("# heap: glibc trimming \(trimHeap ? "at its default (--trim-heap)" : "off for both sides (M_TRIM_THRESHOLD 1 GiB; --trim-heap for the default)")")
        let sqlite = store == .all || store == .sqlite || store == .grdb
            ? try runSQLite(selected, fixtures: fixtures, repetitions: repetitions, log: log) : []
        if store == .grdb || (store == .all && Self.hasGRDB) {
            try runGRDB(selected, against: sqlite, fixtures: fixtures, repetitions: repetitions, log: log)
        }
        if store == .all || store == .binary { try runBinary(selected, fixtures: fixtures, repetitions: repetitions, log: log) }
        if store == .all || store == .lmdb {
            let (lmdb, worst) = try table("lmdb", raw: "LMDB", LMDBWorkloads.all, selected, fixtures: fixtures, repetitions: repetitions, log: log)
            if selected.contains("floor") {
                let floor = try ObjectFloor.lmdbWorkloads.map { try Harness.measure($0, fixtures: fixtures, repetitions: repetitions, budget: budget, log: log) }
                for line in ObjectFloor.lines(floor, raw: "LMDB") { print(line) }
            }
            if store == .all { Self.printStoreComparison(lmdb: lmdb, sqlite: sqlite) }
            if let worst { print(worst) }
        }
    }

    /// ObjectGraph on LMDB against ObjectGraph on SQLite, workload by workload: the quotient
    /// of the two stores' medians in this run (and the raw sides' beside it), which shows
    /// where the LMDB store is ObjectGraph's faster one (issue 5: point lookups and
    /// traversals). Printed as `#` lines before the LMDB table's worst ratio, which stays
    /// the last line.
    private static func printStoreComparison(lmdb: [Measurement], sqlite: [Measurement]) {
        let pairs = lmdb.compactMap { l in sqlite.first { $0.name == l.name }.map { (l, $0) } }
        guard !pairs.isEmpty else { return }
        print("# objectgraph on lmdb against objectgraph on sqlite, this run's medians; below 1: faster on lmdb")
        print("# " + Harness.pad("workload", 16) + Harness.lpad("og lmdb/sqlite", 16) + Harness.lpad("raw lmdb/sqlite", 17))
        for (l, s) in pairs {
            print("# " + Harness.pad(l.name, 16) + Harness.lpad(String(format: "%.2f", l.objectGraph / s.objectGraph), 16)
                  + Harness.lpad(String(format: "%.2f", l.raw / s.raw), 17))
        }
    }

    private func runSQLite(_ selected: [String], fixtures: Fixtures, repetitions: Int, log: (String) -> Void) throws -> [Measurement] {
        let (measurements, worst) = try table("sqlite", raw: "sqlite3", Self.sqliteWorkloads, selected, fixtures: fixtures, repetitions: repetitions, log: log)
        if selected.contains("floor") && store != .grdb {
            let floor = try ObjectFloor.sqliteWorkloads.map { try Harness.measure($0, fixtures: fixtures, repetitions: repetitions, budget: budget, log: log) }
            for line in ObjectFloor.lines(floor, raw: "sqlite3") { print(line) }
        }
        if selected.contains("memory") && store != .grdb {
            for line in try MemoryWorkload.run(fixtures, rowCacheCapacity: memoryRowCache, log: log) { print(line) }
        }
        if let worst { print(worst) }
        return measurements
    }

    /// GRDB's table against the same raw side, then each workload's ObjectGraph and GRDB
    /// ratios side by side: both are ratios to raw sqlite3 measured in this run, so their
    /// quotient compares ObjectGraph with GRDB.
    private func runGRDB(_ selected: [String], against sqlite: [Measurement], fixtures: Fixtures, repetitions: Int, log: (String) -> Void) throws {
        #if GRDB_COMPARISON
        let (grdb, _) = try table("grdb", raw: "sqlite3", GRDBWorkloads.all, selected, fixtures: fixtures, repetitions: repetitions, log: log, subject: "GRDB")
        guard !grdb.isEmpty, !sqlite.isEmpty else { return }
        print("## objectgraph against grdb: each a ratio to raw sqlite3 in this run; below 1 is faster than GRDB")
        print(Harness.pad("workload", 18) + Harness.lpad("objectgraph/raw", 16) + Harness.lpad("grdb/raw", 10) + Harness.lpad("og/grdb", 9))
        var slowest: (name: String, ratio: Double)?
        for g in grdb {
            guard let o = sqlite.first(where: { $0.name == g.name }) else { continue }
            let versus = o.ratio / g.ratio
            print(Harness.pad(g.name, 18) + Harness.lpad(String(format: "%.2f", o.ratio), 16) + Harness.lpad(String(format: "%.2f", g.ratio), 10) + Harness.lpad(String(format: "%.2f", versus), 9))
            if versus > slowest?.ratio ?? -1 { slowest = (g.name, versus) }
        }
        if let slowest { print("objectgraph against grdb, worst: \(String(format: "%.2f", slowest.ratio)) (\(slowest.name))") }
        #endif
    }

    private func runBinary(_ selected: [String], fixtures: Fixtures, repetitions: Int, log: (String) -> Void) throws {
        let worst = try table("binary", raw: "flat file", BinaryFileWorkloads.all, selected, fixtures: fixtures, repetitions: repetitions, log: log).worst
        if selected.contains("binary-memory") {
            for line in try BinaryFileMemory.run(fixtures, log: log) { print(line) }
        }
        if let worst { print(worst) }
    }

    /// One store's table: a row per selected workload; returns the measurements and the
    /// store's worst-ratio line.
    private func table(_ name: String, raw: String, _ workloads: [Workload], _ selected: [String], fixtures: Fixtures, repetitions: Int, log: (String) -> Void, subject: String = "ObjectGraph") throws -> (measurements: [Measurement], worst: String?) {
        let chosen = workloads.filter { selected.contains($0.name) }
        guard !chosen.isEmpty else { return ([], nil) }
        print(subject == "ObjectGraph" ? "## \(name): ObjectGraph on \(name) against raw \(raw)" : "## \(name): \(subject) on sqlite against raw \(raw)")
        print(Harness.header(subject: subject.lowercased() + "_s"))
        var measurements: [Measurement] = []
        for workload in chosen {
            log("\(workload.name): \(workload.summary)")
            let measurement = try Harness.measure(workload, fixtures: fixtures, repetitions: repetitions, budget: budget, log: log)
            measurements.append(measurement)
            print(Harness.row(measurement))
            fflush(nil)
        }
        return (measurements, measurements.max(by: { $0.ratio < $1.ratio }).map { "\(name) worst ratio: \(String(format: "%.2f", $0.ratio)) (\($0.name))" })
    }
}
