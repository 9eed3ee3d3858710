import Synchronization

/// A value read on hot paths without a lock and replaced rarely: the coordinator's list of
/// attached stores, which every fault, fetch and count routes through (taking a mutex for
/// each was a fiftieth of faulting objects one at a time, perf).
///
/// **Threading contract.** `Sendable`: any thread may read or update. A read sees the last
/// value published before it began, complete; updates are serialized (each sees the one before
/// and publishes its result). Every published value stays allocated until this object goes (a
/// reader may still be using an older one), which suits values replaced a handful of times in
/// a process, as attached stores and ``PublishedTable``'s entries are.
final class PublishedValue<Value: Sendable>: Sendable {
    private final class Box: Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    /// The current box's address.
    private let current: Atomic<UInt>
    /// Every box published, oldest first (see the threading contract).
    private let boxes: Guarded<[Box]>

    /// Publishes `value` as the first value.
    init(_ value: Value) {
        let box = Box(value)
        boxes = Guarded([box])
        current = Atomic(UInt(bitPattern: Unmanaged.passUnretained(box).toOpaque()))
    }

    /// `body` applied to the current value, lent without a lock or a retain.
    @inline(__always)
    func read<Result>(_ body: (Value) throws -> Result) rethrows -> Result {
        let raw = UnsafeRawPointer(bitPattern: current.load(ordering: .acquiring)).unsafelyUnwrapped
        return try Unmanaged<Box>.fromOpaque(raw)._withUnsafeGuaranteedRef { try body($0.value) }
    }

    /// Changes the current value through `body`, under the lock that serializes updates, and
    /// publishes the result; when `body` throws, nothing is published.
    func update<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try boxes.withLock { boxes in
            var value = boxes[boxes.count - 1].value
            let result = try body(&value)
            let box = Box(value)
            boxes.append(box)
            current.store(UInt(bitPattern: Unmanaged.passUnretained(box).toOpaque()), ordering: .releasing)
            return result
        }
    }
}
