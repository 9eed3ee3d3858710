#if LIBFUZZER
/// libFuzzer's entry point: every input is checked as ``FuzzInput/check(_:)`` says (as is and
/// with its frame repaired). Built by `make fuzz-binary-libfuzzer`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBinaryStoreReader(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    _ = FuzzInput.check(bytes)
    return 0
}

/// libFuzzer's driver (in libclang_rt.fuzzer, linked by `-sanitize=fuzzer`).
@_silgen_name("LLVMFuzzerRunDriver")
func runLibFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// The executable's entry point. SwiftPM links an executable target's `main` to
/// `<module>_main` (so tests can link the module), which would otherwise hide libFuzzer's
/// own `main`; this hands control to libFuzzer's driver instead.
@_cdecl("ObjectGraphBinaryFileFuzz_main")
public func libFuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runLibFuzzerDriver(&count, &arguments) { data, size in fuzzBinaryStoreReader(data, size) }
}
#endif
