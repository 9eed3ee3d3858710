/// Byte-level mutations of seed files for the self-contained fuzz loop: the kinds libFuzzer
/// uses (bit flips, byte sets, interesting values, inserted, erased and copied ranges,
/// truncation, splicing), plus overlong varints, which a LEB128 reader must refuse.
struct Mutator {
    var random: SeededGenerator

    mutating func mutate(_ input: [UInt8], spliceWith other: [UInt8]) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &random) { mutateOnce(&bytes, other) }
        return bytes
    }

    private mutating func position(in bytes: [UInt8]) -> Int { bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random) }

    private mutating func mutateOnce(_ bytes: inout [UInt8], _ other: [UInt8]) {
        let at = position(in: bytes)
        switch Int.random(in: 0..<9, using: &random) {
        case 0 where !bytes.isEmpty: bytes[at] ^= 1 << UInt8.random(in: 0..<8, using: &random)
        case 1 where !bytes.isEmpty: bytes[at] = UInt8.random(in: 0...255, using: &random)
        case 2 where !bytes.isEmpty: bytes[at] = [0x00, 0x01, 0x7F, 0x80, 0xFF].randomElement(using: &random)!
        case 3: bytes.insert(contentsOf: (0..<Int.random(in: 1...8, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }, at: at)
        case 4 where !bytes.isEmpty: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...16, using: &random)))
        case 5 where !bytes.isEmpty:
            let length = Int.random(in: 1...32, using: &random)
            let source = Array(bytes[at..<min(bytes.count, at + length)])
            bytes.insert(contentsOf: source, at: position(in: bytes))
        case 6: bytes.removeLast(Int.random(in: 0...min(bytes.count, 64), using: &random))
        case 7 where !other.isEmpty:
            let from = position(in: other)
            let length = Int.random(in: 1...64, using: &random)
            bytes.replaceSubrange(at..<min(bytes.count, at + length), with: other[from..<min(other.count, from + length)])
        case 8: bytes.insert(contentsOf: [UInt8](repeating: 0xFF, count: Int.random(in: 9...12, using: &random)) + [0x01], at: at)
        default: break
        }
    }
}
