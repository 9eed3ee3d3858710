import ObjectGraph

/// The binary store's file layout, version 1 (README.md in this folder describes it in full).
///
/// ```
/// offset  size  field
///      0     8  magic: 89 4F 47 42 0D 0A 1A 0A   ("\x89OGB\r\n\x1A\n", as PNG's)
///      8     4  format version, UInt32 little-endian (1)
///     12     4  flags, UInt32, must be 0
///     16     8  content length N, UInt64 little-endian
///     24     N  content (metadata, key counters, name tables, row tables, relationship tables)
///   24+N     4  CRC-32 of bytes 0 ..< 24+N
/// ```
///
/// The magic's high byte and CR LF / LF catch a file mangled by a text-mode transfer; the
/// checksum covers the header and the content, so any changed byte is found before the
/// content is decoded.
enum BinaryFileFormat {
    static let magic: [UInt8] = [0x89, 0x4F, 0x47, 0x42, 0x0D, 0x0A, 0x1A, 0x0A]
    static let version: UInt32 = 1
    static let headerSize = 24
    static let trailerSize = 4
    /// The smallest possible file: header, an empty content, checksum.
    static var minimumSize: Int { headerSize + trailerSize }

    /// Tags of encoded attribute values.
    enum Tag: UInt8 {
        case null = 0
        case integer = 1
        case double = 2
        case decimal = 3
        case string = 4
        case boolFalse = 5
        case boolTrue = 6
        case date = 7
        case data = 8
        case uuid = 9
        case uri = 10
        case relativeURI = 11
    }

    /// The content of a decimal that is not a number (its description, "NaN", does not parse).
    static let decimalNaN = "NaN"

    /// The slots of an entity that its rows in a file hold: the persistent (non-transient)
    /// attributes and to-ones, each in slot order, and the persistent to-manys (whose members
    /// are in relationship tables, by name).
    ///
    /// Transient properties are not in the model version hash, so a model that only adds,
    /// removes or moves one opens the file: rows that held every slot by position (as files
    /// written before did, transient slots as nil) were then read with another slot's value,
    /// or refused as damaged. Rows that hold only the persistent slots do not depend on where
    /// the transients are (the hash pins the persistent ones and their order).
    struct PersistentSlots {
        /// Slots of the persistent attributes, in order.
        let attributes: [Int]
        /// Slots of the persistent to-ones, in order.
        let toOne: [Int]
        /// How many to-many relationships are persistent.
        let toManyCount: Int
        /// How many attribute, to-one and to-many slots the entity has, transient ones included.
        let allAttributes: Int
        let allToOne: Int
        let allToMany: Int

        init(_ entity: EntityDescription) {
            attributes = entity.attributes.indices.filter { !entity.attributes[$0].isTransient }
            toOne = entity.toOneRelationships.indices.filter { !entity.toOneRelationships[$0].isTransient }
            toManyCount = entity.toManyRelationships.filter { !$0.isTransient }.count
            allAttributes = entity.attributes.count
            allToOne = entity.toOneRelationships.count
            allToMany = entity.toManyRelationships.count
        }

        /// Whether some attribute slot is transient (so rows hold fewer values than slots).
        var hasTransientAttributes: Bool { attributes.count != allAttributes }
        /// Whether some to-one slot is transient.
        var hasTransientToOne: Bool { toOne.count != allToOne }
    }
}
