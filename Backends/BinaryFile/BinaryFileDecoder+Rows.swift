import Foundation
import ObjectGraph

/// Row tables, relationship tables and attribute values: each checked against the model.
extension BinaryFileDecoder {
    /// The file's name tables, resolved against the model once.
    struct References {
        let entityNames: [String]
        let entities: [EntityDescription?]
        let storeNames: [String]
        /// Per entity name: the name, when it is a concrete entity of the model. Rows and
        /// references use these plain values, never the entity objects, whose reference
        /// counting would cost more than decoding a row.
        let concreteNames: [String?]
        /// Per entity name: the namespace of this store's IDs (concrete entities only), so a
        /// reference becomes an ID without interning names per row. References to other
        /// stores (rare) intern their names when read.
        let namespaces: [ObjectID.Namespace?]

        init(entityNames: [String], entities: [EntityDescription?], storeNames: [String]) {
            self.entityNames = entityNames
            self.entities = entities
            self.storeNames = storeNames
            let concreteNames = entities.map { entity in entity.flatMap { $0.isAbstract ? nil : $0.name } }
            self.concreteNames = concreteNames
            self.namespaces = concreteNames.map { name in name.map { ObjectID.Namespace(entityName: $0, storeIdentifier: storeNames[0]) } }
        }

        /// An object reference: store (0 for this store), entity and key. `destination`, when
        /// given, holds the names of the entities the reference may name.
        func read(_ reader: inout ByteReader, destination: Set<String>?, _ what: @autoclosure () -> String) throws -> ObjectID {
            let start = reader.offset
            let store = try reader.index("the store of \(what())", below: storeNames.count)
            let entityIndex = try reader.index("the entity of \(what())", below: entityNames.count)
            let pk = try reader.signed("the key of \(what())")
            guard let name = concreteNames[entityIndex] else {
                throw reader.fail("\(what()) names \(entityNames[entityIndex]), which is not a concrete entity of the model", at: start)
            }
            if let destination, !destination.contains(name) {
                throw reader.fail("\(what()) is a \(name), not one of \(destination.sorted().joined(separator: ", "))", at: start)
            }
            if store == 0, let namespace = namespaces[entityIndex] { return namespace.objectID(primaryKey: pk) }
            return ObjectID(entityName: name, storeIdentifier: storeNames[store], primaryKey: pk)
        }
    }

    /// Reads a key: the first in a table as a signed varint, each later one as a positive step
    /// from the one before, so keys are strictly increasing and never repeat.
    private static func key(_ reader: inout ByteReader, after previous: Int64?, _ what: @autoclosure () -> String) throws -> Int64 {
        let start = reader.offset
        guard let previous else { return try reader.signed(what()) }
        let step = Int64(bitPattern: try reader.varint(what()))
        let (pk, overflow) = previous.addingReportingOverflow(step)
        guard step > 0, !overflow else { throw reader.fail("\(what()) does not follow \(previous)", at: start) }
        return pk
    }

    /// One row table: its layouts (concrete entities, with their property counts), then rows.
    ///
    /// A layout's counts say which slots its rows hold: the persistent ones (as this code
    /// writes them), read into their slots with transient slots nil (what a save hands the
    /// store for them); or every slot, transient ones included, read by position (as files
    /// written before did). They differ only for an entity with transient properties; any
    /// other counts are refused.
    func table(of root: EntityDescription, _ reader: inout ByteReader, _ references: References) throws -> [Int64: StoredRow] {
        let layoutCount = try reader.count("the number of entities in the \(root.name) table", minimumSize: 4)
        var layouts: [EntityDescription] = []
        // Per layout: the slots its rows hold values for, in order, when not every slot.
        var attributeSlots: [[Int]?] = []
        var toOneSlots: [[Int]?] = []
        for _ in 0..<layoutCount {
            let start = reader.offset
            let index = try reader.index("an entity of the \(root.name) table", below: references.entityNames.count)
            let counts = (try reader.varint("an attribute count"), try reader.varint("a to-one count"), try reader.varint("a to-many count"))
            guard let entity = references.entities[index], entity.rootName == root.name, !entity.isAbstract else {
                throw reader.fail("the \(root.name) table holds rows of \(references.entityNames[index]), which is not a concrete entity of that hierarchy", at: start)
            }
            let slots = BinaryFileFormat.PersistentSlots(entity)
            if counts == (UInt64(slots.attributes.count), UInt64(slots.toOne.count), UInt64(slots.toManyCount)) {
                attributeSlots.append(slots.hasTransientAttributes ? slots.attributes : nil)
                toOneSlots.append(slots.hasTransientToOne ? slots.toOne : nil)
            } else if counts == (UInt64(slots.allAttributes), UInt64(slots.allToOne), UInt64(slots.allToMany)) {
                attributeSlots.append(nil)
                toOneSlots.append(nil)
            } else {
                let persistent = slots.hasTransientAttributes || slots.hasTransientToOne || slots.toManyCount != slots.allToMany
                    ? " (\(slots.attributes.count), \(slots.toOne.count), \(slots.toManyCount) of them persistent)" : ""
                throw reader.fail("\(entity.name) rows have \(counts.0) attributes, \(counts.1) to-one and \(counts.2) to-many relationships; the model has \(slots.allAttributes), \(slots.allToOne), \(slots.allToMany)\(persistent)", at: start)
            }
            guard !layouts.contains(where: { $0 === entity }) else { throw reader.fail("\(entity.name) is listed twice in the \(root.name) table", at: start) }
            layouts.append(entity)
        }
        // Plain values per layout, read in the row loop (see References.concreteNames).
        let names = layouts.map(\.name)
        let attributeTypes = layouts.map { $0.attributes.map(\.type) }
        // Where nil is damage: no save stores it in a required attribute (validation refuses
        // it), and read as nil it reached a non-optional typed accessor, which stops the process.
        let required = layouts.map { $0.attributes.map { !$0.isOptional && !$0.isTransient } }
        let destinations = layouts.map { entity in entity.toOneRelationships.map { model.entity(named: $0.destinationName)?.hierarchyNames ?? [] } }
        let toManyCounts = layouts.map(\.toManyRelationships.count)
        let rowCount = try reader.count("the number of \(root.name) rows", minimumSize: 3)
        var rows: [Int64: StoredRow] = [:]
        rows.reserveCapacity(rowCount)
        var previous: Int64?
        for _ in 0..<rowCount {
            let pk = try Self.key(&reader, after: previous, "the key of a \(root.name) row")
            previous = pk
            let layout = try reader.index("the entity of \(root.name) row \(pk)", below: layouts.count)
            let versionStart = reader.offset
            let version = try reader.signed("the version of \(names[layout]) row \(pk)")
            guard RowSnapshot.isStoredVersion(version) else {
                throw reader.fail("the version of \(names[layout]) row \(pk) is \(version), outside 1..<\(Int64.max)", at: versionStart)
            }
            var attributes: [AttributeValue]
            if let slots = attributeSlots[layout] {
                // The persistent values only: transient slots stay nil.
                attributes = Array(repeating: .null, count: attributeTypes[layout].count)
                for slot in slots {
                    attributes[slot] = try value(attributeTypes[layout][slot], required: required[layout][slot], &reader) { "\(names[layout]).\(layouts[layout].attributes[slot].name) of row \(pk)" }
                }
            } else {
                attributes = []
                attributes.reserveCapacity(attributeTypes[layout].count)
                for (slot, type) in attributeTypes[layout].enumerated() {
                    attributes.append(try value(type, required: required[layout][slot], &reader) { "\(names[layout]).\(layouts[layout].attributes[slot].name) of row \(pk)" })
                }
            }
            var toOne: [ObjectID?]
            if let slots = toOneSlots[layout] {
                toOne = Array(repeating: nil, count: destinations[layout].count)
                for slot in slots { toOne[slot] = try toOneValue(&reader, references, destinations[layout][slot]) { "\(names[layout]).\(layouts[layout].toOneRelationships[slot].name) of row \(pk)" } }
            } else {
                toOne = []
                toOne.reserveCapacity(destinations[layout].count)
                for (slot, destination) in destinations[layout].enumerated() {
                    toOne.append(try toOneValue(&reader, references, destination) { "\(names[layout]).\(layouts[layout].toOneRelationships[slot].name) of row \(pk)" })
                }
            }
            rows[pk] = StoredRow(entityName: names[layout], version: version, attributes: attributes, toOne: toOne,
                                 toMany: Array(repeating: [], count: toManyCounts[layout]))
        }
        return rows
    }

    /// One to-one slot of a row: a presence byte, then (if 1) a reference to one of the
    /// entities `destination` names.
    @inline(__always)
    private func toOneValue(_ reader: inout ByteReader, _ references: References, _ destination: Set<String>, _ what: () -> String) throws -> ObjectID? {
        let start = reader.offset
        switch try reader.byte("the presence of \(what())") {
        case 0: return nil
        case 1: return try references.read(&reader, destination: destination, what())
        case let other: throw reader.fail("\(what()) has presence byte \(other), not 0 or 1", at: start)
        }
    }

    /// One relationship table: the members of one to-many relationship of one concrete entity.
    func relationshipTable(_ reader: inout ByteReader, _ references: References, into tables: inout [String: [Int64: StoredRow]]) throws {
        let start = reader.offset
        let index = try reader.index("a relationship table's entity", below: references.entityNames.count)
        let name = try reader.string("a relationship table's relationship")
        guard let entity = references.entities[index], !entity.isAbstract,
              let relationship = entity.relationship(named: name), relationship.isToMany, !relationship.isTransient else {
            throw reader.fail("a relationship table for \(references.entityNames[index]).\(name), which is not a persistent to-many relationship of a concrete entity of the model", at: start)
        }
        let destination = model.entity(named: relationship.destinationName)?.hierarchyNames ?? []
        let what = "\(entity.name).\(name)"
        let count = try reader.count("the number of sources in the \(what) table", minimumSize: 2)
        var previous: Int64?
        for _ in 0..<count {
            let sourceStart = reader.offset
            let pk = try Self.key(&reader, after: previous, "a source key of \(what)")
            previous = pk
            guard let row = tables[entity.rootName]?[pk], row.entityName == entity.name else {
                throw reader.fail("\(what) lists members of row \(pk), which is not a \(entity.name) row of the file", at: sourceStart)
            }
            guard row.toMany[relationship.slot].isEmpty else {
                throw reader.fail("\(what) lists the members of row \(pk) twice", at: sourceStart)
            }
            let memberCount = try reader.count("the number of \(what) members of row \(pk)", minimumSize: 3)
            var members: [ObjectID] = []
            members.reserveCapacity(memberCount)
            var seen = Set<ObjectID>(minimumCapacity: memberCount)
            for position in 0..<memberCount {
                let memberStart = reader.offset
                let member = try references.read(&reader, destination: destination, "member \(position) of \(what) of row \(pk)")
                guard seen.insert(member).inserted else { throw reader.fail("\(member) appears twice in \(what) of row \(pk)", at: memberStart) }
                members.append(member)
            }
            tables[entity.rootName]![pk]!.toMany[relationship.slot] = members
        }
    }

    /// One attribute value, which must be of the kind `type` stores (or nil, unless
    /// `required`); `what` describes it for an error.
    func value(_ type: AttributeType, required: Bool, _ reader: inout ByteReader, _ what: () -> String) throws -> AttributeValue {
        typealias Tag = BinaryFileFormat.Tag
        let start = reader.offset
        let raw = try reader.byte(what())
        guard let tag = Tag(rawValue: raw) else { throw reader.fail("\(what()) has an unknown value tag \(raw)", at: start) }
        let value: AttributeValue
        switch tag {
        case .null:
            guard !required else { throw reader.fail("\(what()) is a required attribute but holds no value", at: start) }
            return .null
        case .integer: value = .integer(try reader.signed(what()))
        case .double: value = .double(Double(bitPattern: try reader.fixed64(what())))
        case .decimal:
            let text = try reader.string(what())
            if text == BinaryFileFormat.decimalNaN {
                value = .decimal(.nan)
            } else {
                guard text.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                      let decimal = Decimal(string: text, locale: Self.posix) else {
                    throw reader.fail("\(what()) is not a decimal number", at: start)
                }
                value = .decimal(decimal)
            }
        case .string: value = .string(try reader.string(what()))
        case .boolFalse: value = .bool(false)
        case .boolTrue: value = .bool(true)
        case .date: value = .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.fixed64(what()))))
        case .data: value = .data(try reader.data(what()))
        case .uuid:
            let bytes = try reader.bytes(16, what())
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: bytes) }
            value = .uuid(UUID(uuid: uuid))
        case .uri, .relativeURI:
            let text = try reader.string(what())
            let base = tag == .relativeURI ? try reader.string("the base URL of \(what())") : nil
            let baseURL = base.flatMap { URL(string: $0) }
            guard base == nil || baseURL != nil, let url = URL(string: text, relativeTo: baseURL) else {
                throw reader.fail("\(what()) is not a URL", at: start)
            }
            value = .uri(url)
        }
        guard Self.accepts(type, value) else {
            throw reader.fail("\(what()) is a \(type.rawValue) attribute but holds a \(value.kindName) value", at: start)
        }
        return value
    }

    /// Decimal descriptions always use "." (made once: creating a locale is not cheap).
    private static let posix = Locale(identifier: "en_US_POSIX")

    private static func accepts(_ type: AttributeType, _ value: AttributeValue) -> Bool {
        switch (type, value) {
        case (.integer16, .integer(let v)): return Int64(Int16.min)...Int64(Int16.max) ~= v
        case (.integer32, .integer(let v)): return Int64(Int32.min)...Int64(Int32.max) ~= v
        case (.integer64, .integer), (.double, .double), (.float, .double), (.decimal, .decimal), (.string, .string),
            (.boolean, .bool), (.date, .date), (.binaryData, .data), (.transformable, .data), (.uuid, .uuid), (.uri, .uri):
            return true
        default: return false
        }
    }
}
