import Foundation
import ObjectGraph

/// Encodes ``ObjectGraph/AtomicStoreContents`` as a binary store file (see
/// ``BinaryFileFormat``).
///
/// The output is deterministic: tables, rows, counters and user entries are written in sorted
/// order, so equal contents give equal bytes. Entity names and foreign store identifiers are
/// written once, in name tables, and referred to by index.
struct BinaryFileEncoder {
    let model: ManagedObjectModel

    /// Interns strings in first-use order.
    private struct NameTable {
        var names: [String] = []
        var indexes: [String: Int] = [:]

        mutating func index(of name: String) -> Int {
            if let index = indexes[name] { return index }
            indexes[name] = names.count
            names.append(name)
            return names.count - 1
        }
    }

    func encode(_ contents: AtomicStoreContents) throws -> [[UInt8]] {
        var entities = NameTable()
        var stores = NameTable()
        let storeIdentifier = contents.metadata.storeIdentifier
        let rowCount = contents.tables.values.reduce(0) { $0 + $1.count }
        var body = ByteWriter(capacity: 64 + rowCount * 24)

        func reference(_ id: ObjectID, into writer: inout ByteWriter) throws {
            guard let pk = id.primaryKey, let store = id.storeIdentifier else {
                throw StoreError(.backend, "cannot write \(id) to a binary store: it is a temporary ID")
            }
            writer.varint(store == storeIdentifier ? 0 : stores.index(of: store) + 1)
            writer.varint(entities.index(of: id.entityName))
            writer.signed(pk)
        }

        // Row tables: per hierarchy, the layouts of its concrete entities, then rows by key.
        var relationshipTables: [String: [(pk: Int64, members: [[ObjectID]])]] = [:]
        let roots = contents.tables.keys.sorted()
        body.varint(roots.count)
        for root in roots {
            let table = contents.tables[root]!
            body.varint(entities.index(of: root))
            var layouts: [String: Int] = [:]
            var layoutNames: [String] = []
            var layoutSlots: [BinaryFileFormat.PersistentSlots] = []
            for row in table.values where layouts[row.entityName] == nil {
                layouts[row.entityName] = 0
                layoutNames.append(row.entityName)
            }
            layoutNames.sort()
            body.varint(layoutNames.count)
            for (index, name) in layoutNames.enumerated() {
                guard let entity = model.entity(named: name) else {
                    throw StoreError(.backend, "cannot write rows of entity \(name): the model does not have it")
                }
                // Rows hold the persistent slots only (see BinaryFileFormat.PersistentSlots):
                // the counts are theirs.
                let slots = BinaryFileFormat.PersistentSlots(entity)
                layouts[name] = index
                layoutSlots.append(slots)
                body.varint(entities.index(of: name))
                body.varint(slots.attributes.count)
                body.varint(slots.toOne.count)
                body.varint(slots.toManyCount)
            }
            body.varint(table.count)
            var previous: Int64?
            for pk in table.keys.sorted() {
                let row = table[pk]!
                if let previous { body.varint(UInt64(bitPattern: pk &- previous)) } else { body.signed(pk) }
                previous = pk
                let layout = layouts[row.entityName]!
                body.varint(layout)
                body.signed(row.version)
                let slots = layoutSlots[layout]
                guard row.attributes.count == slots.allAttributes, row.toOne.count == slots.allToOne else {
                    throw StoreError(.backend, "cannot write \(row.entityName) row \(pk): it has \(row.attributes.count) attribute and \(row.toOne.count) to-one slots; the model has \(slots.allAttributes) and \(slots.allToOne)")
                }
                if slots.hasTransientAttributes {
                    for slot in slots.attributes { encode(row.attributes[slot], into: &body) }
                } else {
                    for value in row.attributes { encode(value, into: &body) }
                }
                if slots.hasTransientToOne {
                    for slot in slots.toOne {
                        if let destination = row.toOne[slot] { body.byte(1); try reference(destination, into: &body) } else { body.byte(0) }
                    }
                } else {
                    for destination in row.toOne {
                        if let destination { body.byte(1); try reference(destination, into: &body) } else { body.byte(0) }
                    }
                }
                if row.toMany.contains(where: { !$0.isEmpty }) {
                    relationshipTables[row.entityName, default: []].append((pk, row.toMany))
                }
            }
        }

        // Relationship tables: per concrete entity and to-many relationship, the non-empty
        // member lists by source key, members in stored order.
        var relationshipCount = 0
        var relationships = ByteWriter()
        for name in relationshipTables.keys.sorted() {
            let entity = model.entity(named: name)!
            let sources = relationshipTables[name]!
            for relationship in entity.toManyRelationships where !relationship.isTransient {
                let filled = sources.filter { !$0.members[relationship.slot].isEmpty }
                guard !filled.isEmpty else { continue }
                relationshipCount += 1
                relationships.varint(entities.index(of: name))
                relationships.string(relationship.name)
                relationships.varint(filled.count)
                var previous: Int64?
                for source in filled {
                    if let previous { relationships.varint(UInt64(bitPattern: source.pk &- previous)) } else { relationships.signed(source.pk) }
                    previous = source.pk
                    let members = source.members[relationship.slot]
                    relationships.varint(members.count)
                    for member in members { try reference(member, into: &relationships) }
                }
            }
        }

        // The file is returned in pieces, written one after the other: concatenating them
        // would hold the whole file two more times at the peak of every save.
        var head = ByteWriter(capacity: 1024)
        head.raw(BinaryFileFormat.magic)
        head.fixed32(BinaryFileFormat.version)
        head.fixed32(0)
        head.fixed64(0)  // the content length, set below
        head.string(storeIdentifier)
        head.string(contents.metadata.modelVersionHash)
        let user = contents.metadata.userInfo.sorted { $0.key < $1.key }
        head.varint(user.count)
        for (key, value) in user { head.string(key); head.string(value) }
        let counters = contents.nextPrimaryKey.sorted { $0.key < $1.key }
        head.varint(counters.count)
        for (root, next) in counters { head.string(root); head.signed(next) }
        head.varint(entities.names.count)
        for name in entities.names { head.string(name) }
        head.varint(stores.names.count)
        for name in stores.names { head.string(name) }
        var relationshipHead = ByteWriter()
        relationshipHead.varint(relationshipCount)

        var pieces = [head.bytes, body.bytes, relationshipHead.bytes, relationships.bytes]
        let length = UInt64(pieces.reduce(0) { $0 + $1.count } - BinaryFileFormat.headerSize)
        for index in 0..<8 { pieces[0][16 + index] = UInt8(truncatingIfNeeded: length >> UInt64(8 * index)) }
        var crc = CRC32()
        for piece in pieces { piece.withUnsafeBytes { crc.update($0) } }
        var trailer = ByteWriter()
        trailer.fixed32(crc.value)
        pieces.append(trailer.bytes)
        return pieces
    }

    private func encode(_ value: AttributeValue, into writer: inout ByteWriter) {
        typealias Tag = BinaryFileFormat.Tag
        switch value {
        case .null: writer.byte(Tag.null.rawValue)
        case .integer(let v): writer.byte(Tag.integer.rawValue); writer.signed(v)
        case .double(let v): writer.byte(Tag.double.rawValue); writer.fixed64(v.bitPattern)
        case .decimal(let v):
            // The description of a finite Decimal parses back to the same value and the same
            // description (checked over random values); NaN is spelled out.
            writer.byte(Tag.decimal.rawValue)
            writer.string(v.isNaN ? BinaryFileFormat.decimalNaN : v.description)
        case .string(let v): writer.byte(Tag.string.rawValue); writer.string(v)
        case .bool(let v): writer.byte(v ? Tag.boolTrue.rawValue : Tag.boolFalse.rawValue)
        case .date(let v): writer.byte(Tag.date.rawValue); writer.fixed64(v.timeIntervalSinceReferenceDate.bitPattern)
        case .data(let v): writer.byte(Tag.data.rawValue); writer.data(v)
        case .uuid(let v):
            writer.byte(Tag.uuid.rawValue)
            withUnsafeBytes(of: v.uuid) { writer.bytes.append(contentsOf: $0) }
        case .uri(let v):
            // A relative URL keeps its base, so it compares equal after a round trip.
            if let base = v.baseURL {
                writer.byte(Tag.relativeURI.rawValue)
                writer.string(v.relativeString)
                writer.string(base.absoluteString)
            } else {
                writer.byte(Tag.uri.rawValue)
                writer.string(v.absoluteString)
            }
        }
    }
}
