import Foundation
import ObjectGraph

/// A small graph of every entity of ``ConformanceModel``, and a battery of reads and writes to
/// run on a store whose file was damaged after it was saved.
///
/// A store's fuzz test (beside that store's own tests, since how a file is damaged is the
/// store's business) seeds a file with ``seed(_:)``, changes a byte or a cell of a copy, opens
/// it and runs ``exercise(_:)``. Every step must end in values or in one of the library's typed
/// errors: damage is user input, and user input never stops the process.
///
/// Threading: ``seed(_:)`` and ``exercise(_:)`` run on the calling thread, each inside
/// `performAndWait` of a context of its own.
public enum StoreDamageProbe {
    /// Entities the seed leaves out: their count rules (Roster, Crew, Player) and whole-object
    /// hooks (Booking, Probe) would refuse or record a graph built without regard to them, and
    /// their rows are read through the same code as every other entity's.
    static let unseeded: Set<String> = ["Roster", "Crew", "Player", "Booking", "Probe"]

    /// Inserts `count` objects of every seeded entity with every attribute but transformables
    /// set and every relationship given members, and saves.
    public static func seed(_ container: PersistentContainer, count: Int = 3) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            try insertGraph(count: count, variant: 0, into: context)
            try context.save()
        }
    }

    /// Inserts `count` objects of every seeded entity into `context`: every attribute set
    /// (from `variant` on, see ``sample(_:_:)``) and every relationship given members — one side
    /// of each pair, the context setting the inverse.
    static func insertGraph(count: Int, variant: Int, into context: ManagedObjectContext) throws {
        let model = context.model
        let entities = model.entities.filter { !$0.isAbstract && !unseeded.contains($0.name) }
        var objects: [String: [ManagedObject]] = [:]
        for entity in entities {
            objects[entity.name] = try (0..<count).map { index in
                let object = try context.insertObject(entityName: entity.name)
                for attribute in entity.attributes where !attribute.isTransient {
                    if let value = sample(attribute.type, variant + index) { try object.setValue(value, forKey: attribute.name) }
                }
                return object
            }
        }
        func destinations(_ relationship: RelationshipDescription) -> [ManagedObject] {
            guard let destination = model.destination(of: relationship) else { return [] }
            return model.entities.filter { $0.isKind(of: destination) }.flatMap { objects[$0.name] ?? [] }
        }
        for entity in entities {
            for (index, object) in (objects[entity.name] ?? []).enumerated() {
                for relationship in entity.relationships {
                    let candidates = destinations(relationship)
                    guard !candidates.isEmpty else { continue }
                    let inverse = model.inverse(of: relationship)
                    if relationship.isToMany {
                        // A to-many whose inverse is a to-one is given by the to-one's side; a
                        // many-to-many by one of its two.
                        if let inverse, !inverse.isToMany || relationship.name > inverse.name { continue }
                        let members = [candidates[index % candidates.count], candidates[(index + 1) % candidates.count]]
                        try object.setValue(members.filter { $0 !== object }, forKey: relationship.name)
                    } else if let inverse, !inverse.isToMany, inverse.name < relationship.name {
                        continue  // a one-to-one is set from one side
                    } else {
                        let destination = candidates[(index + 1) % candidates.count]
                        if destination !== object { try object.setValue(destination, forKey: relationship.name) }
                    }
                }
            }
        }
    }

    /// A value of `type` valid under every rule of the model (lower-case names of 3 to 12
    /// characters, small positive numbers, dates in this century); `nil` for transformables.
    static func sample(_ type: AttributeType, _ index: Int) -> Any? {
        switch type {
        case .integer16: return Int16(index + 1)
        case .integer32: return Int32(index * 1000 + 7)
        case .integer64: return Int64(index) << 40 | 5
        case .double: return Double(index) + 0.25
        case .float: return Double(Float(index) + 0.5)
        case .decimal: return Decimal(string: "12.\(index)5")!
        case .string: return "name_\(index)"
        case .boolean: return index % 2 == 0
        case .date: return Date(timeIntervalSince1970: 1_600_000_000 + Double(index) * 3600)
        case .binaryData: return Data([UInt8(index), 0, 0xFF, 0x27])
        case .uuid: return UUID(uuidString: "00000000-0000-4000-8000-00000000000\(index % 10)")!
        case .uri: return URL(string: "https://example.com/\(index)?q='x'")!
        case .transformable: return nil
        }
    }

    /// Whether `error` is one the library throws by type (anything else from a damaged store
    /// is a defect: an error a caller cannot catch by type or read a reason from).
    public static func isTyped(_ error: Error) -> Bool {
        error is StoreError || error is ObjectGraphError || error is ValidationError || error is MergeConflictError
            || error is ModelError || error is PredicateParseError
    }

    /// Reads everything the container's store holds, every way a caller can (fetches with and
    /// without faults, faults by ID, counts, sorts, predicates through to-ones and to-manys,
    /// grouped dictionaries), then deletes everything it can and saves, then inserts and saves:
    /// returns the errors thrown that are not typed (see ``isTyped(_:)``), each with the step.
    public static func exercise(_ container: PersistentContainer) -> [String] {
        var untyped: [String] = []
        func attempt(_ step: @autoclosure () -> String, _ body: () throws -> Void) {
            do { try body() } catch where !isTyped(error) { untyped.append("\(step()): \(type(of: error)): \(error)") } catch {}
        }
        let reader = container.newBackgroundContext()
        let model = reader.performAndWait { reader.model }
        reader.performAndWait {
            for entity in model.entities {
                attempt("fetch \(entity.name)") {
                    var request = FetchRequest<ManagedObject>(entityName: entity.name)
                    request.returnsObjectsAsFaults = false
                    for object in try reader.fetch(request) { try touch(object, model) }
                }
                attempt("fault \(entity.name) by ID") {
                    for id in try reader.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: entity.name)) {
                        try touch(try reader.existingObject(with: id), model)
                    }
                }
                attempt("count \(entity.name)") { _ = try reader.count(for: FetchRequest<ManagedObject>(entityName: entity.name)) }
                for attribute in entity.attributes where !attribute.isTransient && attribute.type != .transformable {
                    attempt("sort and filter \(entity.name).\(attribute.name)") {
                        let present = try FetchPredicate(format: "%K != nil", attribute.name)
                        for object in try reader.fetch(FetchRequest<ManagedObject>(entityName: entity.name, predicate: present, sortKeys: [SortKey(attribute.name)])) {
                            try touch(object, model)
                        }
                        var grouped = FetchRequest<ManagedObject>(entityName: entity.name)
                        grouped.propertiesToFetch = [.key(attribute.name, as: "key"), .count(as: "count")]
                        grouped.propertiesToGroupBy = [attribute.name]
                        _ = try reader.fetchDictionaries(grouped)
                    }
                }
                for relationship in entity.relationships {
                    attempt("filter \(entity.name) by \(relationship.name)") {
                        let predicate = try FetchPredicate(format: relationship.isToMany ? "%K.@count > 0" : "%K != nil", relationship.name)
                        _ = try reader.count(for: FetchRequest<ManagedObject>(entityName: entity.name, predicate: predicate))
                        var prefetching = FetchRequest<ManagedObject>(entityName: entity.name)
                        prefetching.relationshipKeyPathsForPrefetching = [relationship.name]
                        for object in try reader.fetch(prefetching) { try touch(object, model) }
                    }
                }
            }
        }
        // Deletes run every delete rule over whatever the damage left.
        let writer = container.newBackgroundContext()
        writer.performAndWait {
            for entity in model.entities where entity.parentName == nil {
                attempt("delete every \(entity.name)") {
                    for object in try writer.fetch(FetchRequest<ManagedObject>(entityName: entity.name)) { writer.delete(object) }
                }
            }
            attempt("save the deletes") { try writer.save() }
            writer.rollback()
            attempt("insert a graph") { try insertGraph(count: 2, variant: 7, into: writer) }
            var saved: [(ObjectID, StoredValues)] = []
            attempt("save the inserts") {
                let inserted = Array(writer.insertedObjects)
                try writer.save()
                saved = try inserted.map { ($0.objectID, try storedValues(of: $0)) }
            }
            // A save that said it landed did: every object it inserted reads back from the store
            // (not from the coordinator's row cache, which holds what the save sent) as it was
            // saved, and any error doing so is a defect.
            container.coordinator.rowCache.removeAll()
            let checker = container.newBackgroundContext()
            checker.performAndWait {
                for (id, values) in saved {
                    do {
                        let stored = try storedValues(of: try checker.existingObject(with: id))
                        if !stored.holds(values) { untyped.append("\(id) was saved with \(values) but reads back \(stored)") }
                    } catch {
                        untyped.append("\(id) was saved but does not read back: \(error)")
                    }
                }
            }
        }
        return untyped
    }

    /// What a read back is compared by: every persistent attribute of an object, as text, and
    /// the IDs of its to-many members.
    struct StoredValues: CustomStringConvertible {
        let attributes: [String]
        let members: [String: Set<ObjectID>]

        /// Whether these values, read back, hold `saved`: the same attributes, and every member
        /// saved (damage elsewhere may add one: an old row whose foreign key was changed to the
        /// key the save handed out).
        func holds(_ saved: StoredValues) -> Bool {
            attributes == saved.attributes && saved.members.allSatisfy { name, ids in ids.isSubset(of: members[name] ?? []) }
        }

        var description: String { "\(attributes) \(members.mapValues(\.count))" }
    }

    /// The values of `object` a read back is compared by.
    static func storedValues(of object: ManagedObject) throws -> StoredValues {
        var attributes: [String] = []
        for attribute in object.entity.attributes where !attribute.isTransient {
            attributes.append("\(attribute.name)=\(try object.value(forKey: attribute.name) ?? "nil")")
        }
        var members: [String: Set<ObjectID>] = [:]
        for relationship in object.entity.toManyRelationships where !relationship.isTransient {
            let value = try object.value(forKey: relationship.name) as? any Sequence
            members[relationship.name] = Set(value.map { $0.compactMap { ($0 as? ManagedObject)?.objectID } } ?? [])
        }
        return StoredValues(attributes: attributes, members: members)
    }

    /// Reads every attribute of `object` and every member of its relationships, with the first
    /// attribute of each; a member outside the relationship's destination entity is thrown as
    /// ``MisplacedMember`` (a typed accessor would stop the process on it).
    static func touch(_ object: ManagedObject, _ model: ManagedObjectModel) throws {
        for attribute in object.entity.attributes { _ = try object.value(forKey: attribute.name) }
        for relationship in object.entity.relationships {
            let value = try object.value(forKey: relationship.name)
            let members: [ManagedObject]
            if relationship.isToMany {
                guard let sequence = value as? any Sequence else { throw MisplacedMember(object: object.objectID, relationship: relationship.name, found: "\(type(of: value))") }
                members = sequence.compactMap { $0 as? ManagedObject }
            } else {
                members = (value as? ManagedObject).map { [$0] } ?? []
            }
            for member in members {
                guard let destination = model.destination(of: relationship), member.entity.isKind(of: destination) else {
                    throw MisplacedMember(object: object.objectID, relationship: relationship.name, found: member.entity.name)
                }
                if let first = member.entity.attributes.first { _ = try member.value(forKey: first.name) }
            }
        }
    }

    /// A relationship that handed back something its destination entity cannot be.
    struct MisplacedMember: Error, CustomStringConvertible {
        let object: ObjectID
        let relationship: String
        let found: String
        var description: String { "\(object).\(relationship) holds a \(found), outside its destination entity" }
    }
}
