import Foundation
import ObjectGraph

/// Row tables, relationship tables and attribute values: each checked against the model.
extension BinaryFileDecoder {
    /// The file's name tables, resolved against the model once.
    struct References {
        let entityNames: [String]
        let entities: [EntityDescription?]
        let storeNames: [String]

        /// An object reference: store (0 for this store), entity and key. `destination`, when
        /// given, is the entity the reference must be a kind of.
        func read(_ reader: inout ByteReader, destination: EntityDescription?, _ what: @autoclosure () -> String) throws -> ObjectID {
            let start = reader.offset
            let store = try reader.index("the store of \(what())", below: storeNames.count)
            let entityIndex = try reader.index("the entity of \(what())", below: entityNames.count)
            let pk = try reader.signed("the key of \(what())")
            guard let entity = entities[entityIndex], !entity.isAbstract else {
                throw reader.fail("\(what()) names \(entityNames[entityIndex]), which is not a concrete entity of the model", at: start)
            }
            if let destination, !destination.hierarchyNames.contains(entity.name) {
                throw reader.fail("\(what()) is a \(entity.name), not a \(destination.name)", at: start)
            }
            return ObjectID(entityName: entity.name, storeIdentifier: storeNames[store], primaryKey: pk)
        }
    }

    /// Reads a key: the first in a table as a signed varint, each later one as a positive step
    /// from the one before, so keys are strictly increasing and never repeat.
    private static func key(_ reader: inout ByteReader, after previous: Int64?, _ what: String) throws -> Int64 {
        let start = reader.offset
        guard let previous else { return try reader.signed(what) }
        let step = Int64(bitPattern: try reader.varint(what))
        let (pk, overflow) = previous.addingReportingOverflow(step)
        guard step > 0, !overflow else { throw reader.fail("\(what) does not follow \(previous)", at: start) }
        return pk
    }

    /// One row table: its layouts (concrete entities, with their property counts), then rows.
    func table(of root: EntityDescription, _ reader: inout ByteReader, _ references: References) throws -> [Int64: StoredRow] {
        let layoutCount = try reader.count("the number of entities in the \(root.name) table", minimumSize: 4)
        var layouts: [EntityDescription] = []
        for _ in 0..<layoutCount {
            let start = reader.offset
            let index = try reader.index("an entity of the \(root.name) table", below: references.entityNames.count)
            let counts = (try reader.varint("an attribute count"), try reader.varint("a to-one count"), try reader.varint("a to-many count"))
            guard let entity = references.entities[index], entity.rootName == root.name, !entity.isAbstract else {
                throw reader.fail("the \(root.name) table holds rows of \(references.entityNames[index]), which is not a concrete entity of that hierarchy", at: start)
            }
            guard counts == (UInt64(entity.attributes.count), UInt64(entity.toOneRelationships.count), UInt64(entity.toManyRelationships.count)) else {
                throw reader.fail("\(entity.name) rows have \(counts.0) attributes, \(counts.1) to-one and \(counts.2) to-many relationships; the model has \(entity.attributes.count), \(entity.toOneRelationships.count), \(entity.toManyRelationships.count)", at: start)
            }
            guard !layouts.contains(where: { $0 === entity }) else { throw reader.fail("\(entity.name) is listed twice in the \(root.name) table", at: start) }
            layouts.append(entity)
        }
        let destinations = layouts.map { entity in entity.toOneRelationships.map { model.entity(named: $0.destinationName) } }
        let rowCount = try reader.count("the number of \(root.name) rows", minimumSize: 3)
        var rows: [Int64: StoredRow] = [:]
        rows.reserveCapacity(rowCount)
        var previous: Int64?
        for _ in 0..<rowCount {
            let pk = try Self.key(&reader, after: previous, "the key of a \(root.name) row")
            previous = pk
            let layout = try reader.index("the entity of \(root.name) row \(pk)", below: layouts.count)
            let entity = layouts[layout]
            let version = try reader.signed("the version of \(entity.name) row \(pk)")
            var attributes: [AttributeValue] = []
            attributes.reserveCapacity(entity.attributes.count)
            for attribute in entity.attributes { attributes.append(try value(of: attribute, &reader, row: pk)) }
            var toOne: [ObjectID?] = []
            toOne.reserveCapacity(entity.toOneRelationships.count)
            for relationship in entity.toOneRelationships {
                let start = reader.offset
                switch try reader.byte("the presence of \(entity.name).\(relationship.name)") {
                case 0: toOne.append(nil)
                case 1: toOne.append(try references.read(&reader, destination: destinations[layout][relationship.slot], "\(entity.name).\(relationship.name) of row \(pk)"))
                case let other: throw reader.fail("\(entity.name).\(relationship.name) of row \(pk) has presence byte \(other), not 0 or 1", at: start)
                }
            }
            rows[pk] = StoredRow(entityName: entity.name, version: version, attributes: attributes, toOne: toOne,
                                 toMany: Array(repeating: [], count: entity.toManyRelationships.count))
        }
        return rows
    }

    /// One relationship table: the members of one to-many relationship of one concrete entity.
    func relationshipTable(_ reader: inout ByteReader, _ references: References, into tables: inout [String: [Int64: StoredRow]]) throws {
        let start = reader.offset
        let index = try reader.index("a relationship table's entity", below: references.entityNames.count)
        let name = try reader.string("a relationship table's relationship")
        guard let entity = references.entities[index], !entity.isAbstract,
              let relationship = entity.relationship(named: name), relationship.isToMany else {
            throw reader.fail("a relationship table for \(references.entityNames[index]).\(name), which is not a to-many relationship of a concrete entity of the model", at: start)
        }
        let destination = model.entity(named: relationship.destinationName)
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

    /// One attribute value, which must be of the kind the attribute stores (or nil).
    func value(of attribute: AttributeDescription, _ reader: inout ByteReader, row pk: Int64) throws -> AttributeValue {
        typealias Tag = BinaryFileFormat.Tag
        let start = reader.offset
        let what = "\(attribute.entityName).\(attribute.name) of row \(pk)"
        let raw = try reader.byte(what)
        guard let tag = Tag(rawValue: raw) else { throw reader.fail("\(what) has an unknown value tag \(raw)", at: start) }
        let value: AttributeValue
        switch tag {
        case .null: return .null
        case .integer: value = .integer(try reader.signed(what))
        case .double: value = .double(Double(bitPattern: try reader.fixed64(what)))
        case .decimal:
            let text = try reader.string(what)
            if text == BinaryFileFormat.decimalNaN {
                value = .decimal(.nan)
            } else {
                guard text.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                      let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                    throw reader.fail("\(what) is not a decimal number", at: start)
                }
                value = .decimal(decimal)
            }
        case .string: value = .string(try reader.string(what))
        case .boolFalse: value = .bool(false)
        case .boolTrue: value = .bool(true)
        case .date: value = .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.fixed64(what))))
        case .data: value = .data(try reader.data(what))
        case .uuid:
            let bytes = try reader.bytes(16, what)
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: bytes) }
            value = .uuid(UUID(uuid: uuid))
        case .uri, .relativeURI:
            let text = try reader.string(what)
            let base = tag == .relativeURI ? try reader.string("the base URL of \(what)") : nil
            let baseURL = base.flatMap { URL(string: $0) }
            guard base == nil || baseURL != nil, let url = URL(string: text, relativeTo: baseURL) else {
                throw reader.fail("\(what) is not a URL", at: start)
            }
            value = .uri(url)
        }
        guard Self.accepts(attribute.type, value) else {
            throw reader.fail("\(what) is a \(attribute.type.rawValue) attribute but holds a \(value.kindName) value", at: start)
        }
        return value
    }

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
