/// CRC-32 as in zlib, PNG and Ethernet (IEEE 802.3: reflected, polynomial `0xEDB88320`,
/// initial value and final XOR `0xFFFFFFFF`; the check value of "123456789" is `0xCBF43926`).
///
/// Written here because zlib is not linked. Slicing-by-8 (eight 256-entry tables) keeps it
/// near memory speed, so checking a whole store at each load and save costs little next to
/// decoding it. A CRC-32 detects every change confined to 32 consecutive bits — in particular
/// every single flipped bit or byte anywhere in the file.
public struct CRC32: Sendable {
    /// The checksum of what was fed so far.
    public private(set) var value: UInt32 = 0

    private var state: UInt32 = 0xFFFF_FFFF

    /// A checksum with nothing fed yet.
    public init() {}

    /// The checksum of `bytes`.
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc = CRC32()
        crc.update(bytes)
        return crc.value
    }

    /// Feeds `bytes`.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var crc = state
        var index = 0
        let count = bytes.count
        Self.table.withUnsafeBufferPointer { t in
            while count - index >= 8 {
                let low = crc ^ (UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16 | UInt32(bytes[index + 3]) << 24)
                let high = UInt32(bytes[index + 4]) | UInt32(bytes[index + 5]) << 8 | UInt32(bytes[index + 6]) << 16 | UInt32(bytes[index + 7]) << 24
                crc = t[7 * 256 + Int(low & 0xFF)] ^ t[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((low >> 16) & 0xFF)] ^ t[4 * 256 + Int(low >> 24)]
                    ^ t[3 * 256 + Int(high & 0xFF)] ^ t[2 * 256 + Int((high >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((high >> 16) & 0xFF)] ^ t[Int(high >> 24)]
                index += 8
            }
            while index < count {
                crc = t[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
        }
        state = crc
        value = crc ^ 0xFFFF_FFFF
    }

    /// Table `k` (at `k * 256`) gives the CRC of a byte followed by `k` zero bytes.
    private static let table: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            table[byte] = crc
        }
        for slice in 1..<8 {
            for byte in 0..<256 {
                let previous = table[(slice - 1) * 256 + byte]
                table[slice * 256 + byte] = table[Int(previous & 0xFF)] ^ (previous >> 8)
            }
        }
        return table
    }()
}
