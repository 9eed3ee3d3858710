import Foundation
import ObjectGraph
import ObjectGraphBinaryFile

/// Issue 6: the binary store's load and save of N small objects (100k by default), against
/// a hand-written flat file of the same records — the raw floor for an atomic file store.
///
/// The flat file is what an application would write without a framework: a count, then per
/// record its number (8 bytes), label length (4 bytes) and label bytes, then a CRC-32 (the
/// same integrity check the store has), saved the same crash-safe way (temporary file, fsync,
/// rename, fsync of the folder). Loading it reads the file, checks the CRC and builds an array
/// of `(number, label)` structs.
enum BinaryFileWorkloads {
    static let all: [Workload] = [insertSave, save, persist, load]

    struct Record {
        var number: Int64
        var label: String
    }

    /// The binary store with items 1…N, made once per run through a context (untimed).
    static func template(_ fixtures: Fixtures) throws -> URL {
        let url = fixtures.directory.appendingPathComponent("binary-template.bin")
        if FileManager.default.fileExists(atPath: url.path) { return url }
        let container = try PersistentContainer(model: fixtures.model, stores: [.binaryFile(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for number in 1...fixtures.sizes.binaryObjects {
                let item = Item(context: context)
                item.number = Int64(number)
                item.label = BenchmarkData.itemLabel(number)
            }
            try context.save()
        }
        return url
    }

    static func copy(_ fixtures: Fixtures, _ template: URL, _ stem: String) throws -> URL {
        let url = fixtures.directory.appendingPathComponent("\(stem)-\(UUID().uuidString).bin")
        try FileManager.default.copyItem(at: template, to: url)
        return url
    }

    /// Rows and a checksum over every item the store holds.
    static func storedTally(_ container: PersistentContainer) throws -> Tally {
        guard let store = container.coordinator.persistentStores.first as? BinaryFileStore else { throw BenchmarkFailure("no binary store") }
        return try tally(try store.currentContents())
    }

    static func tally(_ contents: AtomicStoreContents) throws -> Tally {
        var tally = Tally()
        for row in contents.tables["Item"]?.values ?? [:].values {
            guard case .integer(let number) = row.attributes[0], case .string(let label) = row.attributes[1] else { throw BenchmarkFailure("an item without number or label") }
            tally.add(UInt64(bitPattern: number) &* 31 &+ UInt64(label.utf8.count))
        }
        return tally
    }

    static func recordsTally(_ records: [Record]) -> Tally {
        var tally = Tally()
        for record in records { tally.add(UInt64(bitPattern: record.number) &* 31 &+ UInt64(record.label.utf8.count)) }
        return tally
    }

    // MARK: Workloads

    static let insertSave = Workload(
        name: "binary-insert",
        summary: "insert N items in a context and save them to a new binary store; raw: build N structs, encode, write a new flat file"
    ) { fixtures in
        let count = fixtures.sizes.binaryObjects
        // Made before the runs, so neither side's timed insert builds the strings it writes.
        let labels = (1...count).map(BenchmarkData.itemLabel)
        var files: [URL] = []
        return Sides(
            objectGraph: {
                let url = fixtures.directory.appendingPathComponent("binary-insert-\(UUID().uuidString).bin")
                files.append(url)
                let container = try PersistentContainer(model: fixtures.model, stores: [.binaryFile(at: url)])
                let context = container.newBackgroundContext()
                return Run(body: {
                    try context.performAndWait {
                        for number in 1...count {
                            let item = Item(context: context)
                            item.number = Int64(number)
                            item.label = labels[number - 1]
                        }
                        try context.save()
                    }
                    return Tally(rows: count, checksum: UInt64(count))
                }, after: { try storedTally(container) }, cleanup: { container.close() }, context: context)
            },
            raw: {
                let url = fixtures.directory.appendingPathComponent("raw-insert-\(UUID().uuidString).flat")
                files.append(url)
                return Run(body: {
                    var records: [Record] = []
                    records.reserveCapacity(count)
                    for number in 1...count { records.append(Record(number: Int64(number), label: labels[number - 1])) }
                    try FlatFile.save(records, to: url)
                    return Tally(rows: records.count, checksum: UInt64(records.count))
                }, after: { recordsTally(try FlatFile.load(url)) })
            },
            teardown: { for url in files { try? FileManager.default.removeItem(at: url) } }
        )
    }

    static let save = Workload(
        name: "binary-save",
        summary: "change one of N loaded items and save: the binary store rewrites the whole file; raw: re-encode and rewrite the flat file"
    ) { fixtures in
        let template = try template(fixtures)
        let flatTemplate = fixtures.directory.appendingPathComponent("binary-template.flat")
        try FlatFile.save(try loadItems(template, fixtures), to: flatTemplate)
        var files: [URL] = []
        return Sides(
            objectGraph: {
                let url = try copy(fixtures, template, "binary-save")
                files.append(url)
                let container = try PersistentContainer(model: fixtures.model, stores: [.binaryFile(at: url)])
                let context = container.newBackgroundContext()
                let item = try context.performAndWait {
                    var request = FetchRequest<Item>(predicate: try FetchPredicate(format: "number == 1"))
                    request.returnsObjectsAsFaults = false
                    return try context.fetch(request)[0]
                }
                return Run(body: {
                    try context.performAndWait {
                        item.label = "changed"
                        try context.save()
                        return Tally(rows: 1, checksum: UInt64(item.number))
                    }
                }, after: { try storedTally(container) }, cleanup: { container.close() }, context: context)
            },
            raw: {
                let url = fixtures.directory.appendingPathComponent("raw-save-\(UUID().uuidString).flat")
                files.append(url)
                try FileManager.default.copyItem(at: flatTemplate, to: url)
                var records = try FlatFile.load(url)
                return Run(body: {
                    records[0].label = "changed"
                    try FlatFile.save(records, to: url)
                    return Tally(rows: 1, checksum: UInt64(records[0].number))
                }, after: { recordsTally(try FlatFile.load(url)) })
            },
            teardown: { for url in files + [flatTemplate] { try? FileManager.default.removeItem(at: url) } }
        )
    }

    static let persist = Workload(
        name: "binary-persist",
        summary: "the store alone: BinaryFileStore.persist of N loaded items (encode, CRC, write, fsync, rename); raw: FlatFile.save of the same records"
    ) { fixtures in
        let template = try template(fixtures)
        let records = try loadItems(template, fixtures)
        var files: [URL] = []
        return Sides(
            objectGraph: {
                let url = try copy(fixtures, template, "binary-persist")
                files.append(url)
                let container = try PersistentContainer(model: fixtures.model, stores: [.binaryFile(at: url)])
                guard let store = container.coordinator.persistentStores.first as? BinaryFileStore else { throw BenchmarkFailure("no binary store") }
                let contents = try store.currentContents()
                return Run(body: {
                    try store.persist(contents)
                    return Tally(rows: contents.tables["Item"]?.count ?? 0, checksum: 1)
                }, after: {
                    // The file as written, decoded without opening it (the store holds the lock).
                    try tally(try BinaryFileStore.contents(ofFile: Array(try Data(contentsOf: url)), model: fixtures.model))
                }, cleanup: { container.close() })
            },
            raw: {
                let url = fixtures.directory.appendingPathComponent("raw-persist-\(UUID().uuidString).flat")
                files.append(url)
                return Run(body: {
                    try FlatFile.save(records, to: url)
                    return Tally(rows: records.count, checksum: 1)
                }, after: { recordsTally(try FlatFile.load(url)) })
            },
            teardown: { for url in files { try? FileManager.default.removeItem(at: url) } }
        )
    }

    static let load = Workload(
        name: "binary-load",
        summary: "open a binary store of N items in a new container (read, check, decode every row); raw: read and parse the flat file"
    ) { fixtures in
        let template = try template(fixtures)
        let flat = fixtures.directory.appendingPathComponent("binary-load.flat")
        try FlatFile.save(try loadItems(template, fixtures), to: flat)
        return Sides(
            objectGraph: {
                var container: PersistentContainer?
                return Run(body: {
                    container = try PersistentContainer(model: fixtures.model, stores: [.binaryFile(at: template)])
                    return try storedTally(container!)
                }, cleanup: { container?.close() })
            },
            raw: { Run(body: { recordsTally(try FlatFile.load(flat)) }) },
            teardown: { try? FileManager.default.removeItem(at: flat) }
        )
    }

    /// The template's items as records, read through the store (untimed setup).
    static func loadItems(_ url: URL, _ fixtures: Fixtures) throws -> [Record] {
        let container = try PersistentContainer(model: fixtures.model, stores: [.binaryFile(at: url)])
        defer { container.close() }
        guard let store = container.coordinator.persistentStores.first as? BinaryFileStore else { throw BenchmarkFailure("no binary store") }
        let rows = try store.currentContents().tables["Item"] ?? [:]
        return rows.keys.sorted().map { pk in
            let row = rows[pk]!
            guard case .integer(let number) = row.attributes[0], case .string(let label) = row.attributes[1] else { return Record(number: 0, label: "") }
            return Record(number: number, label: label)
        }
    }
}
