import Foundation
import ObjectGraph

/// The floor under `fetch-all` for any layer that gives each fetched row an object of its own:
/// raw LMDB's own scan and decode (the raw side of `fetch-all`, unchanged), with each row then
/// put into a minimal class instance — the row's values in an attribute array and a to-one
/// array, as a managed object keeps them — read, and freed; once without and once with a
/// uniquing table keyed by ``ObjectGraph/ObjectID`` (the one ObjectGraph uses, with its hash).
///
/// No store, no context, no faulting, no change tracking, no queue checks: whatever ratio this
/// measures, an object graph on the same rows cannot beat. It is measured beside the raw side
/// in the same run, like every workload, and printed as `#` lines under the LMDB table — it is
/// a reference, not a workload of ObjectGraph's, so it counts in no worst ratio.
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

    static let workloads = [objects(uniquing: false), objects(uniquing: true)]

    /// The `#` lines for the measurements of ``workloads``.
    static func lines(_ measurements: [Measurement]) -> [String] {
        measurements.map { m in
            "# \(m.name): raw LMDB's fetch-all with an object per row\(m.name.hasSuffix("uniqued") ? " and a uniquing table" : ""): "
                + "\(String(format: "%.4f", m.objectGraph)) s against \(String(format: "%.4f", m.raw)) s = \(String(format: "%.2f", m.ratio))× (the floor for fetch-all; no store or context work)"
        }
    }

    private static func objects(uniquing: Bool) -> Workload {
        let name = uniquing ? "floor-uniqued" : "floor-objects"
        return Workload(name: name, summary: "raw LMDB's fetch-all, each row put in a minimal object\(uniquing ? " registered in a uniquing table" : ""), read, freed") { fixtures in
            let shared = try LMDBWorkloads.Shared(fixtures)
            let namespace = ObjectID.Namespace(entityName: "Message", storeIdentifier: "floor")
            let chats = ObjectID.Namespace(entityName: "Chat", storeIdentifier: "floor")
            let entity = NSObject()
            return Sides(
                objectGraph: {
                    Run(body: {
                        try shared.raw.read { txn in
                            var registry: [ObjectID: Int] = [:]
                            var registered: [MinimalObject] = []
                            var objects: [MinimalObject] = []
                            try shared.raw.scan(txn, shared.raw.messages) { pk, value in
                                let fields = try RawLMDB.decodeMessage(value)
                                let object = MinimalObject(
                                    objectID: namespace.objectID(primaryKey: pk), entity: entity,
                                    attributes: [.string(fields.text), .date(Date(timeIntervalSinceReferenceDate: fields.sentAt))],
                                    toOne: [chats.objectID(primaryKey: fields.chat)])
                                if uniquing {
                                    registry[object.objectID] = registered.count
                                    registered.append(object)
                                }
                                objects.append(object)
                            }
                            guard !uniquing || registry.count == objects.count else {
                                throw BenchmarkFailure("floor: \(registry.count) registered for \(objects.count) objects")
                            }
                            var tally = Tally()
                            for object in objects {
                                guard case .string(let text) = object.attributes[0], case .date(let sentAt) = object.attributes[1] else {
                                    throw BenchmarkFailure("floor: unexpected values")
                                }
                                tally.add(UInt64(text.utf8.count) &+ sentAt.timeIntervalSinceReferenceDate.bitPattern)
                            }
                            // Freed inside the timed body, as the context's reset is timed.
                            objects = []
                            registered = []
                            registry = [:]
                            return tally
                        }
                    })
                },
                raw: { Run(body: { try LMDBWorkloads.rawFetchAll(shared.raw) }) },
                teardown: { shared.reader.container.close(); fixtures.lmdb.remove(shared.rawURL) })
        }
    }
}
