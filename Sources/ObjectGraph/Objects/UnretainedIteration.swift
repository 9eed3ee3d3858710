/// Iterating arrays of objects without reference counting each element.
///
/// `for object in objects` retains and releases every element around the loop body whenever
/// the compiler cannot prove the body leaves the array alone — and a body that calls a method
/// or sets a property of the object never can. Each of those is an atomic read-modify-write,
/// and on a save or cascade over 10,000 objects they were most of the time spent outside the
/// store (perf: `swift_retain`/`swift_release` were 40% of a cascade's samples). The value the
/// helper runs on holds every element for the whole call — if the variable it was read from
/// changes meanwhile, copy-on-write gives that variable a new buffer and leaves this one as it
/// was — so lending the elements unretained is safe. A body that keeps an element (stores it,
/// appends it) retains it as usual.
extension RandomAccessCollection where Element: AnyObject {
    /// Calls `body` with each element in order, lent without retaining it (arrays and slices;
    /// a collection without contiguous storage is iterated as usual).
    @inline(__always)
    func forEachUnretained(_ body: (Element) throws -> Void) rethrows {
        let done: Void? = try withContiguousStorageIfAvailable { buffer in
            try buffer.withMemoryRebound(to: Unmanaged<Element>.self) { elements in
                for element in elements { try element._withUnsafeGuaranteedRef(body) }
            }
        }
        if done == nil { for element in self { try body(element) } }
    }
}

extension Array where Element: AnyObject {
    /// The element at `index`, unretained: for a loop whose body appends to the array (so no
    /// buffer can be held across it) while something else keeps each element alive.
    @inline(__always)
    func unretained(at index: Int) -> Unmanaged<Element> {
        withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: Unmanaged<Element>.self) { $0[index] }
        }
    }
}
