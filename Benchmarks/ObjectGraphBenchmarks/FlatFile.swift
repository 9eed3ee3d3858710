import Foundation
import ObjectGraphBinaryFile

/// The raw side of the binary-store workloads: `(number, label)` records in a flat file,
/// written and read with plain POSIX calls — the least an application could do to keep the
/// same data in a file as safely (CRC-32, temporary file, fsync, rename, fsync of the folder).
enum FlatFile {
    static func save(_ records: [BinaryFileWorkloads.Record], to url: URL) throws {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(8 + records.count * 24)
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        append(UInt64(records.count))
        for record in records {
            append(record.number)
            var label = record.label
            label.withUTF8 { utf8 in
                append(UInt32(utf8.count))
                bytes.append(contentsOf: utf8)
            }
        }
        append(bytes.withUnsafeBytes { CRC32.checksum($0) })
        let temporary = url.path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw BenchmarkFailure("cannot create \(temporary)") }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            guard count > 0 else { close(fd); throw BenchmarkFailure("cannot write \(temporary)") }
            written += count
        }
        guard fsync(fd) == 0, close(fd) == 0, rename(temporary, url.path) == 0 else { throw BenchmarkFailure("cannot save \(url.path)") }
        let directory = open(url.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY)
        defer { close(directory) }
        guard directory >= 0, fsync(directory) == 0 else { throw BenchmarkFailure("cannot flush the folder of \(url.path)") }
    }

    static func load(_ url: URL) throws -> [BinaryFileWorkloads.Record] {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BenchmarkFailure("cannot open \(url.path)") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw BenchmarkFailure("cannot stat \(url.path)") }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            guard count > 0 else { throw BenchmarkFailure("cannot read \(url.path)") }
            filled += count
        }
        return try bytes.withUnsafeBytes { buffer in
            guard buffer.count >= 12 else { throw BenchmarkFailure("\(url.path) is too short") }
            let stored = buffer.loadUnaligned(fromByteOffset: buffer.count - 4, as: UInt32.self)
            guard CRC32.checksum(UnsafeRawBufferPointer(rebasing: buffer[0..<(buffer.count - 4)])) == UInt32(littleEndian: stored) else {
                throw BenchmarkFailure("\(url.path): checksum mismatch")
            }
            let count = Int(UInt64(littleEndian: buffer.loadUnaligned(as: UInt64.self)))
            var offset = 8
            var records: [BinaryFileWorkloads.Record] = []
            records.reserveCapacity(min(count, buffer.count / 12))
            for _ in 0..<count {
                guard offset + 12 <= buffer.count - 4 else { throw BenchmarkFailure("\(url.path) is truncated") }
                let number = Int64(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: Int64.self))
                let length = Int(UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)))
                offset += 12
                guard offset + length <= buffer.count - 4 else { throw BenchmarkFailure("\(url.path) is truncated") }
                let label = String(decoding: UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + length]), as: UTF8.self)
                offset += length
                records.append(BinaryFileWorkloads.Record(number: number, label: label))
            }
            return records
        }
    }
}
