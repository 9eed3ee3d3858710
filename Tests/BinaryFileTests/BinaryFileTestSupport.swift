import Foundation
import ObjectGraph
@testable import ObjectGraphBinaryFile
@testable import ObjectGraphBinaryFileFuzz

/// Folders, containers and an exact comparison of stored contents for the binary store tests.
enum BinaryFileTestSupport {
    static func temporaryStore(_ name: String = "store.bin") throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("og-binary-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent(name)
    }

    static func remove(_ url: URL) { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }

    static func container(_ url: URL, model: ManagedObjectModel = FuzzInput.model, options: [String: String] = [:]) throws -> PersistentContainer {
        try PersistentContainer(model: model, stores: [.binaryFile(at: url, options: options)])
    }

    /// What the container's binary store holds now.
    static func contents(_ container: PersistentContainer) throws -> AtomicStoreContents {
        guard let store = container.coordinator.persistentStores.first as? BinaryFileStore else {
            throw StoreError(.backend, "the container has no binary store")
        }
        return try store.currentContents()
    }

    /// Contents in a form whose equality is exact: doubles by bit pattern (so NaN equals the
    /// same NaN and −0 differs from 0), decimals by description, URLs by relative string and base.
    static func exact(_ contents: AtomicStoreContents) -> ExactContents {
        var rows: [String: [Int64: ExactRow]] = [:]
        for (root, table) in contents.tables {
            for (pk, row) in table {
                rows[root, default: [:]][pk] = ExactRow(
                    entityName: row.entityName, version: row.version, attributes: row.attributes.map(exact),
                    toOne: row.toOne, toMany: row.toMany)
            }
        }
        return ExactContents(metadata: contents.metadata, nextPrimaryKey: contents.nextPrimaryKey, rows: rows)
    }

    static func exact(_ value: AttributeValue) -> ExactValue {
        switch value {
        case .double(let v): return .bits(v.bitPattern)
        case .decimal(let v): return .text("decimal " + v.description)
        case .date(let v): return .bits(v.timeIntervalSinceReferenceDate.bitPattern)
        case .uri(let v): return .text("uri \(v.relativeString) base \(v.baseURL?.absoluteString ?? "-")")
        case .string(let v): return .bytes(Array(v.utf8))
        default: return .other(value)
        }
    }

    enum ExactValue: Hashable {
        case bits(UInt64)
        case text(String)
        case bytes([UInt8])
        case other(AttributeValue)
    }

    struct ExactRow: Hashable {
        var entityName: String
        var version: Int64
        var attributes: [ExactValue]
        var toOne: [ObjectID?]
        var toMany: [[ObjectID]]
    }

    struct ExactContents: Hashable {
        var metadata: StoreMetadata
        var nextPrimaryKey: [String: Int64]
        var rows: [String: [Int64: ExactRow]]
    }
}
