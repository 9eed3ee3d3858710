import Foundation

/// Reads the primitive encodings of ``ByteWriter`` from a buffer, never trusting it: every
/// read checks the bytes that remain first, varints longer than 10 bytes or wider than 64 bits
/// are refused, and a count is accepted only if that many elements of their smallest encoded
/// size still fit — so no count from the file can make the reader allocate more than the file
/// could hold.
struct ByteReader {
    let buffer: UnsafeRawBufferPointer
    /// The next byte to read, as an offset from the start of the file.
    private(set) var offset: Int

    init(_ buffer: UnsafeRawBufferPointer, offset: Int = 0) {
        self.buffer = buffer
        self.offset = offset
    }

    var remaining: Int { buffer.count - offset }

    func fail(_ detail: String, at position: Int? = nil) -> BinaryFileFormatError {
        BinaryFileFormatError(.malformed, at: position ?? offset, detail)
    }

    private func need(_ count: Int, _ what: @autoclosure () -> String) throws {
        guard count <= remaining else {
            throw BinaryFileFormatError(.malformed, at: offset, "\(what()) needs \(count) bytes but only \(remaining) remain")
        }
    }

    mutating func byte(_ what: @autoclosure () -> String) throws -> UInt8 {
        try need(1, what())
        defer { offset += 1 }
        return buffer[offset]
    }

    mutating func fixed32(_ what: @autoclosure () -> String) throws -> UInt32 {
        try need(4, what())
        var value: UInt32 = 0
        for index in 0..<4 { value |= UInt32(buffer[offset + index]) << UInt32(8 * index) }
        offset += 4
        return value
    }

    mutating func fixed64(_ what: @autoclosure () -> String) throws -> UInt64 {
        try need(8, what())
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(buffer[offset + index]) << UInt64(8 * index) }
        offset += 8
        return value
    }

    mutating func varint(_ what: @autoclosure () -> String) throws -> UInt64 {
        let start = offset
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < buffer.count else {
                throw BinaryFileFormatError(.malformed, at: start, "\(what()) runs past the end of the content")
            }
            let byte = buffer[offset]
            offset += 1
            if shift == 63 && byte > 1 {
                throw BinaryFileFormatError(.malformed, at: start, "\(what()) does not fit in 64 bits")
            }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }

    mutating func signed(_ what: @autoclosure () -> String) throws -> Int64 {
        let raw = try varint(what())
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    /// A count of elements that take at least `minimumSize` bytes each.
    mutating func count(_ what: @autoclosure () -> String, minimumSize: Int = 1) throws -> Int {
        let start = offset
        let raw = try varint(what())
        guard raw <= UInt64(remaining / max(minimumSize, 1)) else {
            throw BinaryFileFormatError(.malformed, at: start, "\(what()) is \(raw), more than the \(remaining) remaining bytes can hold")
        }
        return Int(raw)
    }

    /// An index below `limit`.
    mutating func index(_ what: @autoclosure () -> String, below limit: Int) throws -> Int {
        let start = offset
        let raw = try varint(what())
        guard raw < UInt64(limit) else {
            throw BinaryFileFormatError(.malformed, at: start, "\(what()) is \(raw), but there are only \(limit)")
        }
        return Int(raw)
    }

    mutating func bytes(_ count: Int, _ what: @autoclosure () -> String) throws -> UnsafeRawBufferPointer {
        try need(count, what())
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count])
    }

    mutating func string(_ what: @autoclosure () -> String) throws -> String {
        let start = offset
        let length = try count("the length of \(what())")
        let utf8 = try bytes(length, what()).bindMemory(to: UInt8.self)
        guard let string = String(validating: utf8, as: UTF8.self) else {
            throw BinaryFileFormatError(.malformed, at: start, "\(what()) is not valid UTF-8")
        }
        return string
    }

    mutating func data(_ what: @autoclosure () -> String) throws -> Data {
        let length = try count("the length of \(what())")
        return Data(try bytes(length, what()))
    }
}
