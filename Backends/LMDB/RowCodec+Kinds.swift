import ObjectGraph

/// The check that a decoded value is of its attribute's kind. A row's tags say what each
/// value is, and a damaged one (a flipped byte, another tool's write) could say an integer
/// where the attribute is a string: the value was handed up as it was, so `value(forKey:)`
/// answered an `Int` for a string attribute and a typed accessor (`@Attribute var title:
/// String`) stopped the process. The binary store refuses such values; now this one does too.
extension RowCodec {
    /// What a value of an attribute of `type` is stored as: its tag, or for the narrow integer
    /// types a kind of their own (an integer tag whose value must fit their width).
    static func kind(of type: AttributeType) -> UInt8 {
        switch type {
        case .integer16: return Self.integer16Kind
        case .integer32: return Self.integer32Kind
        case .integer64: return Tag.integer.rawValue
        case .double, .float: return Tag.double.rawValue
        case .decimal: return Tag.decimal.rawValue
        case .string: return Tag.string.rawValue
        case .boolean: return Tag.bool.rawValue
        case .date: return Tag.date.rawValue
        case .binaryData, .transformable: return Tag.data.rawValue
        case .uuid: return Tag.uuid.rawValue
        case .uri: return Tag.uri.rawValue
        }
    }

    static let integer16Kind: UInt8 = 0x81
    static let integer32Kind: UInt8 = 0x82

    /// Marks the kind of a required attribute's slot, where nil is damage as well: no save
    /// stores nil there (validation refuses it), and read as nil it reached the typed accessor
    /// of a non-optional property, which stopped the process. (Tags and the narrow kinds
    /// leave this bit clear.)
    static let requiredFlag: UInt8 = 0x40

    /// The next value, which must be of `kind` (or nil, unless the kind is required): one
    /// comparison of its tag, nil and the narrow integers checked out of line.
    @inline(__always)
    static func read(_ reader: inout ByteReader, kind: UInt8) throws -> AttributeValue {
        guard reader.offset < reader.buffer.count else { throw ByteReader.Truncated() }
        let tag = reader.buffer[reader.offset]
        guard tag == kind & ~requiredFlag || (tag == Tag.null.rawValue && kind & requiredFlag == 0) else {
            return try readNarrowInteger(&reader, kind: kind & ~requiredFlag)
        }
        return try read(&reader)
    }

    /// An integer of a narrow kind, refused unless it fits the width (a typed accessor of an
    /// `Int16` could not hold it either); any other mismatch is damage.
    @inline(never)
    private static func readNarrowInteger(_ reader: inout ByteReader, kind: UInt8) throws -> AttributeValue {
        let value = try read(&reader)
        guard case .integer(let integer) = value else { throw ByteReader.Truncated() }
        switch kind {
        case integer16Kind where Int16(exactly: integer) != nil, integer32Kind where Int32(exactly: integer) != nil: return value
        default: throw ByteReader.Truncated()
        }
    }
}
