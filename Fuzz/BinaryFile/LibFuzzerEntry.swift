#if LIBFUZZER
/// libFuzzer's entry point: every input is checked as ``FuzzInput/check(_:)`` says (as is and
/// with its frame repaired). Built by `make fuzz-binary-libfuzzer`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBinaryStoreReader(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    _ = FuzzInput.check(bytes)
    return 0
}
#endif
