import Foundation
import ObjectGraph

/// The compact, versioned encoding of a stored row (the value in a hierarchy's row database):
///
///     u8 format (2) · u16 entity code · u64 version ·
///     u16 n · n × attribute value · u16 m · m × to-one reference
///
/// Format 2 holds the entity's persistent attributes and to-ones only, each in slot order;
/// decoding gives transient slots nil (what a save hands a store for them). Transient
/// properties are not in the model version hash, so a model that adds, removes or moves one
/// opens the store: rows that held every slot by position (format 1) were then read with
/// another slot's value, or refused as damaged (an audit). Format-1 rows, which files written
/// before still hold, are read as they were written: every slot by position — or, when they
/// hold as many values as the entity has persistent attributes, as those (a model without the
/// entity's transients wrote them; the hash pins the persistent ones and their order).
/// An entity without transient properties is read the same in both formats, at the same cost.
///
/// An attribute value is a tag byte and its payload (integer and double as 8 big-endian
/// bytes, strings, data, decimals and URIs as u32 length + bytes, a date as its reference-date
/// seconds as a double, a UUID as 16 bytes). A reference is 0 (none), or 1 · u16 entity code ·
/// i64 key, or 2 · name · i64 key for an entity outside the store.
struct RowCodec {
    let layout: LMDBLayout
    let storeIdentifier: String
    /// The namespace of this store's IDs per entity code, and the code per namespace: rows
    /// become IDs (and IDs codes) without touching entity names.
    let namespaces: [ObjectID.Namespace]
    private let codesByNamespace: [ObjectID.Namespace: UInt16]
    /// Per entity code, how many attribute and to-one slots its records have, and how many of
    /// them are persistent (the values and references a row of format 2 holds): a row claiming
    /// other counts is damaged, and is refused as such instead of being handed up to be indexed
    /// out of range.
    private let shapes: [Shape]
    /// Per entity code, for an entity with transient attributes: each attribute slot's position
    /// among a format-2 row's values, -1 for a transient slot. Empty for the other entities,
    /// whose rows hold every slot. Built once, so no row allocates to be mapped.
    private let attributePositions: [[Int]]
    /// The same for to-one slots, for an entity with transient to-ones.
    private let toOnePositions: [[Int]]
    /// The kind (``Kind``) each attribute slot's value must have, with ``requiredFlag`` where
    /// nil is damage too, for every entity code in turn; entity `code`'s slots start at `kindStarts[code]`. One flat array, so a
    /// row's check is a comparison per value (see ``read(_:kind:)``).
    let kinds: [UInt8]
    private let kindStarts: [Int]
    /// What each to-one slot may point at, for every entity code in turn (entity `code`'s slots
    /// start at `toOneStarts[code]`): the codes below 64 of its destination's hierarchy as bits,
    /// and the destination itself for other codes and for references by name. A reference to
    /// anything else is damage — a typed accessor would stop the process on it, and deleting
    /// the row would unlink it from a relationship its entity does not have (the fuzz test).
    private let targetBits: [UInt64]
    private let targetEntities: [EntityDescription?]
    private let toOneStarts: [Int]

    private struct Shape {
        var attributes: Int
        var toOne: Int
        var storedAttributes: Int
        var storedToOne: Int
    }

    init(layout: LMDBLayout, storeIdentifier: String) {
        self.layout = layout
        self.storeIdentifier = storeIdentifier
        let namespaces = layout.entityNames.map { ObjectID.Namespace(entityName: $0, storeIdentifier: storeIdentifier) }
        self.namespaces = namespaces
        var codes: [ObjectID.Namespace: UInt16] = [:]
        for (code, namespace) in namespaces.enumerated() { codes[namespace] = UInt16(code) }
        self.codesByNamespace = codes
        let entities = layout.entityNames.map { layout.model.entity(named: $0) }
        shapes = entities.map { entity in
            guard let entity else { return Shape(attributes: -1, toOne: -1, storedAttributes: -1, storedToOne: -1) }
            return Shape(
                attributes: entity.attributes.count, toOne: entity.toOneRelationships.count,
                storedAttributes: entity.attributes.filter { !$0.isTransient }.count,
                storedToOne: entity.toOneRelationships.filter { !$0.isTransient }.count)
        }
        attributePositions = entities.map { entity in Self.positions(entity?.attributes.map(\.isTransient) ?? []) }
        var kinds: [UInt8] = []
        kindStarts = entities.map { entity in
            defer { kinds += (entity?.attributes ?? []).map { Self.kind(of: $0.type) | ($0.isOptional || $0.isTransient ? 0 : Self.requiredFlag) } }
            return kinds.count
        }
        self.kinds = kinds
        toOnePositions = entities.map { entity in Self.positions(entity?.toOneRelationships.map(\.isTransient) ?? []) }
        var targets: [EntityDescription?] = []
        toOneStarts = entities.map { entity in
            defer { targets += (entity?.toOneRelationships ?? []).map { layout.model.destination(of: $0) } }
            return targets.count
        }
        targetEntities = targets
        let layoutCodes = layout.codes
        targetBits = targets.map { destination in
            (destination?.hierarchyNames ?? []).reduce(0) { bits, name in
                guard let code = layoutCodes[name], code < 64 else { return bits }
                return bits | 1 << UInt64(code)
            }
        }
    }

    /// The index of entity `code`'s to-one `slot` among ``targetBits`` (for ``readReference(_:target:)``).
    @inline(__always)
    func target(_ code: UInt16, slot: Int) -> Int { toOneStarts[Int(code)] + slot }

    /// Each slot's position among the stored ones (-1 for a transient slot); empty when no
    /// slot is transient.
    private static func positions(_ transient: [Bool]) -> [Int] {
        guard transient.contains(true) else { return [] }
        var next = 0
        return transient.map { isTransient in
            if isTransient { return -1 }
            defer { next += 1 }
            return next
        }
    }

    /// The number of attribute values every row of `codes` holds, when it is the same for all
    /// of them (always for one entity): a fetch of those rows reads them into a fixed-width
    /// ``ObjectGraph/RowRun``. A row claiming another number is refused as damaged before
    /// any of its values reach the run.
    func attributeWidth(of codes: EntityCodes) -> Int? {
        var width: Int? = nil
        for (code, shape) in shapes.enumerated() where codes.contains(UInt16(code)) {
            guard shape.attributes >= 0, width == nil || width == shape.attributes else { return nil }
            width = shape.attributes
        }
        return width
    }

    /// The entity code of `id`'s entity (also for another store's ID of an entity this store holds).
    @inline(__always)
    func code(of id: ObjectID) -> UInt16? {
        codesByNamespace[id.namespace] ?? layout.codes[id.entityName]
    }

    /// Whether `id` names a record of this store (its store, and an entity the store holds).
    @inline(__always)
    func owns(_ id: ObjectID) -> Bool { codesByNamespace[id.namespace] != nil }

    /// The namespace of entity `code`; a typed failure for a code this store does not know.
    @inline(__always)
    func namespace(_ code: UInt16) throws -> ObjectID.Namespace {
        guard Int(code) < namespaces.count else { throw ByteReader.Truncated() }
        return namespaces[Int(code)]
    }

    /// The format of the rows this codec writes: persistent values and to-ones only.
    static let format: UInt8 = 2
    /// The format before: every attribute and to-one slot, transient ones as nil, by position.
    static let positionalFormat: UInt8 = 1

    enum Tag: UInt8 {
        case null = 0, integer, double, decimal, string, bool, date, data, uuid, uri
    }

    /// Encodes `row` into `writer`, replacing what it held but keeping its buffer: a bulk
    /// save encodes every row into one buffer instead of allocating one per row.
    ///
    /// The row is read where it lies: handed over as a value, each row of a save was first
    /// copied by the caller (retaining its ID and both value arrays, and releasing them after),
    /// even when borrowed from the change set's own storage (callgrind of a bulk insert).
    func encode(_ row: UnsafePointer<RowSnapshot>, into writer: inout RowBuffer) {
        writer.reset(reserving: Self.encodedSize(row))
        let code = code(of: row.pointee.objectID) ?? UInt16.max
        writer.u8(Self.format)
        writer.u16(code)
        writer.u64(UInt64(bitPattern: row.pointee.version))
        let shape = Int(code) < shapes.count ? shapes[Int(code)] : nil
        let attributeCount = row.pointee.attributes.count
        if let shape, shape.storedAttributes != shape.attributes, attributeCount == shape.attributes {
            writer.u16(UInt16(shape.storedAttributes))
            let positions = attributePositions[Int(code)]
            for slot in 0..<attributeCount where positions[slot] >= 0 { Self.write(row.pointee.attributes[slot], to: &writer) }
        } else {
            writer.u16(UInt16(attributeCount))
            for slot in 0..<attributeCount { Self.write(row.pointee.attributes[slot], to: &writer) }
        }
        let toOneCount = row.pointee.toOne.count
        if let shape, shape.storedToOne != shape.toOne, toOneCount == shape.toOne {
            writer.u16(UInt16(shape.storedToOne))
            let positions = toOnePositions[Int(code)]
            for slot in 0..<toOneCount where positions[slot] >= 0 { writeReference(row.pointee.toOne[slot], to: &writer) }
        } else {
            writer.u16(UInt16(toOneCount))
            for slot in 0..<toOneCount { writeReference(row.pointee.toOne[slot], to: &writer) }
        }
    }

    /// The size of a row's encoding (at most, but for a reference to an entity outside the
    /// store, which also holds its name): the writer is allocated once, where a guess grew
    /// it again for every row holding a longer string.
    private static func encodedSize(_ row: UnsafePointer<RowSnapshot>) -> Int {
        var size = 1 + 2 + 8 + 2 + 2 + row.pointee.toOne.count * 11
        for slot in 0..<row.pointee.attributes.count {
            let value = row.pointee.attributes[slot]
            switch value {
            case .string(let v): size += 5 + v.utf8.count
            case .data(let v): size += 5 + v.count
            case .decimal, .uri: size += 64
            default: size += 17
            }
        }
        return size
    }

    func writeReference(_ id: ObjectID?, to writer: inout RowBuffer) {
        guard let id, let pk = id.primaryKey else { writer.u8(0); return }
        if let code = code(of: id) {
            writer.u8(1)
            writer.u16(code)
        } else {
            writer.u8(2)
            writer.string(id.entityName)
        }
        writer.orderedInt64(pk)
    }

    /// Reads a to-one reference of the slot at `target` (see ``target(_:slot:)``); one naming an
    /// entity outside the slot's destination is damage.
    func readReference(_ reader: inout ByteReader, target: Int) throws -> ObjectID? {
        switch try reader.u8() {
        case 0: return nil
        case 1:
            let code = try reader.u16()
            let namespace = try namespace(code)
            guard code < 64 ? targetBits[target] & 1 << UInt64(code) != 0 : isTarget(layout.entityNames[Int(code)], target) else {
                throw ByteReader.Truncated()
            }
            return namespace.objectID(primaryKey: try reader.orderedInt64())
        case 2:
            let name = try reader.string()
            guard isTarget(name, target) else { throw ByteReader.Truncated() }
            return ObjectID(entityName: name, storeIdentifier: storeIdentifier, primaryKey: try reader.orderedInt64())
        default: throw ByteReader.Truncated()
        }
    }

    /// Whether entity `name` is the destination of the to-one at `target`, or one of its sub-entities.
    @inline(never)
    private func isTarget(_ name: String, _ target: Int) -> Bool {
        targetEntities[target]?.hierarchyNames.contains(name) ?? false
    }

    /// The concrete entity of an encoded row, without decoding the rest.
    func entityCode(of bytes: UnsafeRawBufferPointer) -> UInt16? {
        guard bytes.count >= 3 else { return nil }
        return UInt16(bytes[1]) << 8 | UInt16(bytes[2])
    }

    /// The optimistic-lock version of an encoded row.
    func version(of bytes: UnsafeRawBufferPointer) throws -> Int64 {
        var reader = ByteReader(bytes)
        reader.offset = 3
        return Int64(bitPattern: try reader.u64())
    }

    /// Decodes a row, its values in an array of its own. Without `checkingVersion` a version
    /// outside 1..<Int64.max is handed on as it is: deleting a row needs its values for its
    /// index entries, not a version (nor does the SQLite store's, which deletes such a row).
    func decode(_ bytes: UnsafeRawBufferPointer, primaryKey: Int64, checkingVersion: Bool = true) throws -> RowSnapshot {
        var attributes: [AttributeValue] = []
        let row = try decodeRow(bytes, primaryKey: primaryKey, checkingVersion: checkingVersion) { reader, count, kinds in
            attributes.reserveCapacity(count)
            for offset in 0..<count { attributes.append(try Self.read(&reader, kind: kinds[offset])) }
        }
        return RowSnapshot(objectID: row.objectID, version: row.version, attributes: attributes, toOne: row.toOne)
    }

    /// Decodes a row into `run` (see ``ObjectGraph/RowRun``), which hands it to `rows` with
    /// its run. A damaged row throws midway, leaving part of it in `run`: the caller's whole
    /// answer is then abandoned.
    func decode(_ bytes: UnsafeRawBufferPointer, primaryKey: Int64, into run: inout RowRun, _ rows: inout [RowSnapshot]) throws {
        let row = try decodeRow(bytes, primaryKey: primaryKey) { reader, count, kinds in
            for offset in 0..<count { run.appendValue(try Self.read(&reader, kind: kinds[offset])) }
        }
        run.endRow(objectID: row.objectID, version: row.version, toOne: row.toOne, into: &rows)
    }

    /// A row's header and to-ones, its attribute values read by `values` (given the reader at
    /// the first value, their count, which the entity's shape has checked, and their kinds
    /// from ``kinds``, lent: a closure naming the property captured the whole codec, copied
    /// and released per row, 40% of a 100,000-row fetch's instructions). The rows of an
    /// entity without transient properties take the first branches, as every row did before
    /// format 2; the others are mapped to their slots out of line.
    @inline(__always)
    private func decodeRow(
        _ bytes: UnsafeRawBufferPointer, primaryKey: Int64, checkingVersion: Bool = true,
        values: (inout ByteReader, Int, UnsafeBufferPointer<UInt8>) throws -> Void
    ) throws -> (objectID: ObjectID, version: Int64, toOne: ToOneValues) {
        var reader = ByteReader(bytes)
        let format = try reader.u8()
        guard format == Self.format || format == Self.positionalFormat else { throw ByteReader.Truncated() }
        let code = try reader.u16()
        let namespace = try namespace(code)
        let shape = shapes[Int(code)]
        let version = Int64(bitPattern: try reader.u64())
        guard !checkingVersion || RowSnapshot.isStoredVersion(version) else { throw ByteReader.Truncated() }
        let attributeCount = Int(try reader.u16())
        if attributeCount == shape.attributes && attributeCount == shape.storedAttributes {
            let start = kindStarts[Int(code)]
            try kinds.withUnsafeBufferPointer { kinds in
                try values(&reader, attributeCount, UnsafeBufferPointer(rebasing: kinds[start..<(start + attributeCount)]))
            }
        } else {
            try readMappedAttributes(&reader, attributeCount, format: format, code: code, shape: shape, values)
        }
        let toOneCount = Int(try reader.u16())
        if toOneCount == 1 && shape.toOne == 1 && shape.storedToOne == 1 {
            return (namespace.objectID(primaryKey: primaryKey), version, ToOneValues(single: try readReference(&reader, target: target(code, slot: 0))))
        }
        return (namespace.objectID(primaryKey: primaryKey), version, try readToOne(&reader, toOneCount, format: format, code: code, shape: shape))
    }

    /// Reads the attribute values of a row whose entity has transient attributes (or a damaged
    /// row, which throws) with `values`, slot by slot: a stored value from `reader`, a transient
    /// slot's nil from a reader of one nil tag, so `values` fills every slot in order.
    @inline(never)
    private func readMappedAttributes(
        _ reader: inout ByteReader, _ count: Int, format: UInt8, code: UInt16, shape: Shape,
        _ values: (inout ByteReader, Int, UnsafeBufferPointer<UInt8>) throws -> Void
    ) throws {
        let start = kindStarts[Int(code)]
        try kinds.withUnsafeBufferPointer { kinds in
            // Every slot of the entity, whose kinds start at `start` (a row of another count
            // was refused by mappedSlots).
            let slots = UnsafeBufferPointer(rebasing: kinds[start..<(start + shape.attributes)])
            guard let positions = try mappedSlots(count, format: format, all: shape.attributes, stored: shape.storedAttributes, positions: attributePositions, code: code) else {
                try values(&reader, count, slots)
                return
            }
            for (slot, position) in positions.enumerated() {
                let kind = UnsafeBufferPointer(rebasing: slots[slot..<(slot + 1)])
                if position < 0 {
                    var null = ByteReader(Self.nullTag)
                    try values(&null, 1, kind)
                } else {
                    try values(&reader, 1, kind)
                }
            }
        }
    }

    /// One nil tag: what a transient slot, which a format-2 row does not hold, reads as.
    nonisolated(unsafe) private static let nullTag: UnsafeRawBufferPointer = {
        let byte = UnsafeMutableRawBufferPointer.allocate(byteCount: 1, alignment: 1)
        byte[0] = Tag.null.rawValue
        return UnsafeRawBufferPointer(byte)
    }()

    /// How a row's `count` values (attribute values or to-one references) fill its entity's
    /// slots, when they are not exactly its slots, all persistent: `nil` for every slot in
    /// order (a format-1 row holding every slot, transient ones as nil), or each slot's position
    /// among them, -1 for a transient slot (from `positions`). A count that is neither is damage.
    @inline(never)
    private func mappedSlots(_ count: Int, format: UInt8, all: Int, stored: Int, positions: [[Int]], code: UInt16) throws -> [Int]? {
        if format == Self.positionalFormat && count == all { return nil }
        guard count == stored, stored >= 0, stored != all else { throw ByteReader.Truncated() }
        return positions[Int(code)]
    }

    /// A row's `count` to-one references, by slot (transient slots nil).
    @inline(__always)
    private func readToOne(_ reader: inout ByteReader, _ count: Int, format: UInt8, code: UInt16, shape: Shape) throws -> ToOneValues {
        guard count == shape.toOne && count == shape.storedToOne else {
            return try readMappedToOne(&reader, count, format: format, code: code, shape: shape)
        }
        var toOne = ToOneValues()
        toOne.reserveCapacity(count)
        let first = target(code, slot: 0)
        for slot in 0..<count { toOne.append(try readReference(&reader, target: first + slot)) }
        return toOne
    }

    /// The to-one references of a row whose entity has transient to-ones (or a damaged row,
    /// which throws), by slot.
    @inline(never)
    private func readMappedToOne(_ reader: inout ByteReader, _ count: Int, format: UInt8, code: UInt16, shape: Shape) throws -> ToOneValues {
        let positions = try mappedSlots(count, format: format, all: shape.toOne, stored: shape.storedToOne, positions: toOnePositions, code: code)
        var toOne = ToOneValues()
        toOne.reserveCapacity(shape.toOne)
        let first = target(code, slot: 0)
        if let positions {
            for (slot, position) in positions.enumerated() { toOne.append(position < 0 ? nil : try readReference(&reader, target: first + slot)) }
        } else {
            for slot in 0..<count { toOne.append(try readReference(&reader, target: first + slot)) }
        }
        return toOne
    }

    /// The entity code and one attribute of a row, the values before it skipped, not decoded:
    /// grouping by an owner's attribute reads one value of each owner row.
    func decodeAttribute(_ bytes: UnsafeRawBufferPointer, slot: (ObjectID.Namespace) throws -> Int) throws -> AttributeValue {
        var reader = ByteReader(bytes)
        let format = try reader.u8()
        guard format == Self.format || format == Self.positionalFormat else { throw ByteReader.Truncated() }
        let code = try reader.u16()
        let wanted = try slot(try namespace(code))
        let shape = shapes[Int(code)]
        _ = try reader.u64()
        let attributeCount = Int(try reader.u16())
        var position = wanted
        if attributeCount != shape.attributes || attributeCount != shape.storedAttributes,
           let positions = try mappedSlots(attributeCount, format: format, all: shape.attributes, stored: shape.storedAttributes, positions: attributePositions, code: code) {
            guard wanted >= 0, wanted < positions.count else { throw ByteReader.Truncated() }
            position = positions[wanted]
            if position < 0 { return .null }
        }
        guard position >= 0, position < attributeCount else { throw ByteReader.Truncated() }
        for _ in 0..<position { try Self.skip(&reader) }
        return try Self.read(&reader)
    }

    /// A row's to-one destinations by slot, its attribute values skipped, not decoded: deleting
    /// a row of an entity without indexes needs only these.
    func decodeToOne(_ bytes: UnsafeRawBufferPointer) throws -> ToOneValues {
        var reader = ByteReader(bytes)
        let format = try reader.u8()
        guard format == Self.format || format == Self.positionalFormat else { throw ByteReader.Truncated() }
        let code = try reader.u16()
        _ = try namespace(code)
        let shape = shapes[Int(code)]
        _ = try reader.u64()
        let attributeCount = Int(try reader.u16())
        if attributeCount != shape.attributes || attributeCount != shape.storedAttributes {
            _ = try mappedSlots(attributeCount, format: format, all: shape.attributes, stored: shape.storedAttributes, positions: attributePositions, code: code)
        }
        for _ in 0..<attributeCount { try Self.skip(&reader) }
        return try readToOne(&reader, Int(try reader.u16()), format: format, code: code, shape: shape)
    }

    private static func skip(_ reader: inout ByteReader) throws {
        guard let tag = Tag(rawValue: try reader.u8()) else { throw ByteReader.Truncated() }
        switch tag {
        case .null: break
        case .integer, .double, .date: _ = try reader.u64()
        case .bool: _ = try reader.u8()
        case .decimal, .string, .data, .uri: _ = try reader.blob()
        case .uuid: for _ in 0..<16 { _ = try reader.u8() }
        }
    }

    private static func write(_ value: AttributeValue, to writer: inout RowBuffer) {
        switch value {
        case .null: writer.u8(Tag.null.rawValue)
        case .integer(let v): writer.u8(Tag.integer.rawValue); writer.u64(UInt64(bitPattern: v))
        case .double(let v): writer.u8(Tag.double.rawValue); writer.u64(v.bitPattern)
        case .decimal(let v): writer.u8(Tag.decimal.rawValue); writer.string(v.description)
        case .string(let v): writer.u8(Tag.string.rawValue); writer.string(v)
        case .bool(let v): writer.u8(Tag.bool.rawValue); writer.u8(v ? 1 : 0)
        case .date(let v): writer.u8(Tag.date.rawValue); writer.u64(v.timeIntervalSinceReferenceDate.bitPattern)
        case .data(let v): writer.u8(Tag.data.rawValue); v.withUnsafeBytes { writer.blob($0) }
        case .uuid(let v):
            writer.u8(Tag.uuid.rawValue)
            withUnsafeBytes(of: v.uuid) { writer.raw($0) }
        case .uri(let v): writer.u8(Tag.uri.rawValue); writer.string(v.absoluteString)
        }
    }

    private static let posix = Locale(identifier: "en_US_POSIX")

    static func read(_ reader: inout ByteReader) throws -> AttributeValue {
        guard let tag = Tag(rawValue: try reader.u8()) else { throw ByteReader.Truncated() }
        switch tag {
        case .null: return .null
        case .integer: return .integer(Int64(bitPattern: try reader.u64()))
        case .double: return .double(Double(bitPattern: try reader.u64()))
        case .decimal:
            // A NaN is written as its description, "NaN", which `Decimal(string:)` does not
            // read: the row holding one was refused as damaged.
            let text = try reader.string()
            if text == "NaN" { return .decimal(.nan) }
            guard let value = Decimal(string: text, locale: posix) else { throw ByteReader.Truncated() }
            return .decimal(value)
        case .string: return .string(try reader.string())
        case .bool: return .bool(try reader.u8() != 0)
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.u64())))
        case .data: return .data(Data(try reader.blob()))
        case .uuid:
            var bytes: [UInt8] = []
            for _ in 0..<16 { bytes.append(try reader.u8()) }
            let uuid = bytes.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }
            return .uuid(UUID(uuid: uuid))
        case .uri:
            guard let url = URL(string: try reader.string()) else { throw ByteReader.Truncated() }
            return .uri(url)
        }
    }
}
