import Foundation
import ObjectGraph
import ObjectGraphBinaryFile

/// What the binary store's reader must do with any input: decode it, or refuse it with a
/// `StoreError` of code `corrupt` (or `incompatibleModel`) — never crash, hang or allocate
/// without bound. A different error is a finding and stops the process, as a crash would.
enum FuzzInput {
    /// The fixture model the inputs are decoded against.
    static let model: ManagedObjectModel = {
        do { return try FixtureModel.make() } catch { fatalError("the fixture model does not build: \(error)") }
    }()

    /// How the decoding of one input ended.
    enum Outcome: Hashable {
        case decoded
        case refused(BinaryFileFormatError.Problem)
        case incompatibleModel
    }

    /// Decodes `bytes` as they are, then — when they are long enough to have a frame — with
    /// the frame repaired (length and CRC-32 recomputed), so that mutations reach the content
    /// decoder instead of stopping at the checksum.
    static func check(_ bytes: [UInt8]) -> [Outcome] {
        var outcomes = [decode(bytes)]
        if let repaired = repairFrame(bytes) { outcomes.append(decode(repaired)) }
        return outcomes
    }

    static func decode(_ bytes: [UInt8]) -> Outcome {
        do {
            _ = try BinaryFileStore.contents(ofFile: bytes, model: model)
            return .decoded
        } catch let error as StoreError where error.code == .corrupt {
            guard let problem = error.underlying as? BinaryFileFormatError else {
                fatalError("a corrupt-file error without a BinaryFileFormatError: \(error)")
            }
            return .refused(problem.problem)
        } catch let error as StoreError where error.code == .incompatibleModel {
            return .incompatibleModel
        } catch {
            fatalError("the reader threw an untyped error: \(error)")
        }
    }

    /// The bytes with the header's magic, version and length and the trailing CRC-32 made
    /// consistent with the rest; nil when there is no room for a frame.
    static func repairFrame(_ bytes: [UInt8]) -> [UInt8]? {
        guard bytes.count >= 28 else { return nil }
        var fixed = bytes
        let length = UInt64(bytes.count - 28)
        for index in 0..<8 { fixed[16 + index] = UInt8(truncatingIfNeeded: length >> UInt64(8 * index)) }
        let crc = fixed.withUnsafeBytes { CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<(fixed.count - 4)])) }
        for index in 0..<4 { fixed[fixed.count - 4 + index] = UInt8(truncatingIfNeeded: crc >> UInt32(8 * index)) }
        return fixed
    }
}
