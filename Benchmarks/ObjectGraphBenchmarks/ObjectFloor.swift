import Foundation
import ObjectGraph

/// The floor under `fetch-all` for any layer that gives each fetched row an object of its own:
/// the raw side's own scan and decode (the raw side of `fetch-all`, unchanged), with each row
/// then put into a minimal class instance, read, and freed. Three shapes:
/// - `floor-objects`: the row's values in an attribute array and a to-one array, as a managed
///   object keeps them (three allocations per row besides the text);
/// - `floor-uniqued`: the same, each object also entered in a uniquing table keyed by
///   ``ObjectGraph/ObjectID`` (the one ObjectGraph uses, with its hash);
/// - `floor-inline`: the values in the object's own stored properties — one allocation per row
///   besides the text, the least any object per row can cost.
///
/// No store, no context, no faulting, no change tracking, no queue checks: whatever ratio this
/// measures, an object graph on the same rows cannot beat. It is measured beside the raw side
/// in the same run, like every workload, and printed as `#` lines under the store's table — it
/// is a reference, not a workload of ObjectGraph's, so it counts in no worst ratio.
enum ObjectFloor {
    /// The least a managed object holds: its ID, its entity and its two value arrays.
    final class MinimalObject {
        let objectID: ObjectID
        let entity: AnyObject
        var attributes: [AttributeValue]
        var toOne: [ObjectID?]

        init(objectID: ObjectID, entity: AnyObject, attributes: [AttributeValue], toOne: [ObjectID?]) {
            self.objectID = objectID
            self.entity = entity
            self.attributes = attributes
            self.toOne = toOne
        }
    }

    /// A row's object with its values inline: no arrays, no enum boxing.
    final class InlineObject {
        let objectID: ObjectID
        var text: String
        var sentAt: Date
        var chat: ObjectID?

        init(objectID: ObjectID, text: String, sentAt: Date, chat: ObjectID?) {
            self.objectID = objectID
            self.text = text
            self.sentAt = sentAt
            self.chat = chat
        }
    }

    /// The object shapes a floor measures.
    enum Shape: CaseIterable {
        case arrays, uniqued, inline

        var name: String {
            switch self {
            case .arrays: return "floor-objects"
            case .uniqued: return "floor-uniqued"
            case .inline: return "floor-inline"
            }
        }

        var what: String {
            switch self {
            case .arrays: return "an object per row (values in arrays)"
            case .uniqued: return "an object per row (values in arrays) and a uniquing table"
            case .inline: return "an object per row (values inline, one allocation)"
            }
        }
    }

    /// One decoded message row, as the raw sides decode it.
    typealias Row = (pk: Int64, text: String, sentAt: Double, chat: Int64)

    /// The floor workloads over raw LMDB's `fetch-all`.
    static let lmdbWorkloads: [Workload] = Shape.allCases.map { shape in
        Workload(name: shape.name, summary: "raw LMDB's fetch-all, each row put in \(shape.what), read, freed") { fixtures in
            let shared = try LMDBWorkloads.Shared(fixtures)
            return Sides(
                objectGraph: {
                    Run(body: {
                        try shared.raw.read { txn in
                            try objects(shape) { row in
                                try shared.raw.scan(txn, shared.raw.messages) { pk, value in
                                    let fields = try RawLMDB.decodeMessage(value)
                                    try row((pk, fields.text, fields.sentAt, fields.chat))
                                }
                            }
                        }
                    })
                },
                raw: { Run(body: { try LMDBWorkloads.rawFetchAll(shared.raw) }) },
                teardown: { shared.reader.container.close(); fixtures.lmdb.remove(shared.rawURL) })
        }
    }

    /// The floor workloads over raw sqlite3's `fetch-all`.
    static let sqliteWorkloads: [Workload] = Shape.allCases.map { shape in
        Workload(name: shape.name, summary: "raw sqlite3's fetch-all, each row put in \(shape.what), read, freed") { fixtures in
            let url = try fixtures.chatTemplate()
            let db = try RawDB(path: url.path)
            return Sides(
                objectGraph: {
                    Run(body: {
                        try objects(shape) { row in
                            let statement = try db.prepare(ChatWorkloads.rawFetchAllSQL)
                            while try statement.step() {
                                try row((statement.int64(0), statement.text(1), statement.double(2), statement.int64(3)))
                            }
                        }
                    })
                },
                raw: { Run(body: { try ChatWorkloads.rawFetchAll(db) }) })
        }
    }

    /// The `#` lines for the measurements of a floor's workloads.
    static func lines(_ measurements: [Measurement], raw: String) -> [String] {
        measurements.map { m in
            let what = Shape.allCases.first { $0.name == m.name }?.what ?? "an object per row"
            return "# \(m.name): raw \(raw)'s fetch-all with \(what): "
                + "\(String(format: "%.4f", m.objectGraph)) s against \(String(format: "%.4f", m.raw)) s = \(String(format: "%.2f", m.ratio))× (a floor for fetch-all; no store or context work)"
        }
    }

    /// Every row `scan` gives, put into an object of `shape`, then read and freed, with the
    /// raw side's tally.
    private static func objects(_ shape: Shape, scan: ((Row) throws -> Void) throws -> Void) throws -> Tally {
        let namespace = ObjectID.Namespace(entityName: "Message", storeIdentifier: "floor")
        let chats = ObjectID.Namespace(entityName: "Chat", storeIdentifier: "floor")
        var tally = Tally()
        switch shape {
        case .inline:
            var objects: [InlineObject] = []
            try scan { row in
                objects.append(InlineObject(
                    objectID: namespace.objectID(primaryKey: row.pk), text: row.text,
                    sentAt: Date(timeIntervalSinceReferenceDate: row.sentAt), chat: chats.objectID(primaryKey: row.chat)))
            }
            for object in objects {
                tally.add(UInt64(object.text.utf8.count) &+ object.sentAt.timeIntervalSinceReferenceDate.bitPattern)
            }
            // Freed inside the timed body, as the context's reset is timed.
            objects = []
        case .arrays, .uniqued:
            let entity = NSObject()
            var registry: [ObjectID: Int] = [:]
            var registered: [MinimalObject] = []
            var objects: [MinimalObject] = []
            try scan { row in
                let object = MinimalObject(
                    objectID: namespace.objectID(primaryKey: row.pk), entity: entity,
                    attributes: [.string(row.text), .date(Date(timeIntervalSinceReferenceDate: row.sentAt))],
                    toOne: [chats.objectID(primaryKey: row.chat)])
                if shape == .uniqued {
                    registry[object.objectID] = registered.count
                    registered.append(object)
                }
                objects.append(object)
            }
            guard shape != .uniqued || registry.count == objects.count else {
                throw BenchmarkFailure("floor: \(registry.count) registered for \(objects.count) objects")
            }
            for object in objects {
                guard case .string(let text) = object.attributes[0], case .date(let sentAt) = object.attributes[1] else {
                    throw BenchmarkFailure("floor: unexpected values")
                }
                tally.add(UInt64(text.utf8.count) &+ sentAt.timeIntervalSinceReferenceDate.bitPattern)
            }
            objects = []
            registered = []
            registry = [:]
        }
        return tally
    }
}
