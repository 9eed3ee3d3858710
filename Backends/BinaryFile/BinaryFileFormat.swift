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
}
