/// The buffer a save encodes each row into, in turn, before handing it to LMDB: memory of its
/// own that grows and is reused, written through a pointer.
///
/// ``ByteWriter`` appends to an array, whose `append(contentsOf:)` of an integer's eight bytes
/// took about a hundred instructions (the generic copy of a sequence, its capacity and
/// uniqueness checks): a tenth of encoding a message row, 5% of a bulk insert (callgrind). Here
/// each row reserves its whole size once and every write is a store at an offset.
///
/// Not copyable: it owns its memory, freed when it goes.
struct RowBuffer: ~Copyable {
    private var base: UnsafeMutableRawPointer
    private var capacity: Int
    /// The bytes written since the last ``reset(reserving:)``.
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        self.base = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 8)
    }

    deinit { base.deallocate() }

    /// The bytes written, valid until the next write.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    /// Empties the buffer for a row of at most `size` bytes (a larger one still fits: every
    /// write checks).
    mutating func reset(reserving size: Int) {
        count = 0
        if size > capacity { grow(to: size) }
    }

    @inline(__always)
    private mutating func ensure(_ extra: Int) {
        if _slowPath(count + extra > capacity) { grow(to: count + extra) }
    }

    private mutating func grow(to needed: Int) {
        let newCapacity = max(needed, capacity * 2)
        let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
        newBase.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always)
    private mutating func store<T: FixedWidthInteger>(_ value: T) {
        ensure(MemoryLayout<T>.size)
        // storeBytes(of:toByteOffset:as:) allows unaligned offsets.
        base.storeBytes(of: value.bigEndian, toByteOffset: count, as: T.self)
        count += MemoryLayout<T>.size
    }

    mutating func u8(_ value: UInt8) { store(value) }

    mutating func u16(_ value: UInt16) { store(value) }

    mutating func u32(_ value: UInt32) { store(value) }

    mutating func u64(_ value: UInt64) { store(value) }

    /// A signed integer whose big-endian bytes sort like the numbers (sign bit flipped), as
    /// ``ByteWriter/orderedInt64(_:)`` writes it.
    mutating func orderedInt64(_ value: Int64) { u64(UInt64(bitPattern: value) ^ (1 << 63)) }

    /// Raw bytes, with no length.
    mutating func raw(_ source: UnsafeRawBufferPointer) {
        guard let start = source.baseAddress, !source.isEmpty else { return }
        ensure(source.count)
        (base + count).copyMemory(from: start, byteCount: source.count)
        count += source.count
    }

    /// Length-prefixed bytes, as ``ByteWriter/blob(_:)`` writes them.
    mutating func blob(_ source: UnsafeRawBufferPointer) {
        u32(UInt32(source.count))
        raw(source)
    }

    /// A string as a blob of its UTF-8 bytes, copied from the string's own storage.
    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { blob(UnsafeRawBufferPointer($0)) }
    }
}
