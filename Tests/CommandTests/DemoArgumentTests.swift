import ArgumentParser
import Foundation
@testable import objectgraph
import Testing

/// `objectgraph demo` refuses a `--path` it cannot use before touching the file system.
@Suite("demo --path")
struct DemoArgumentTests {
    static func message(_ arguments: [String]) -> String? {
        do {
            _ = try DemoCommand.parse(arguments)
            return nil
        } catch {
            return DemoCommand.message(for: error)
        }
    }

    // An empty path used to mean the current folder: the demo wrote store.sqlite there and
    // kept it. A path naming a file failed later with Foundation's "A file with the same name
    // already exists" (NSCocoaErrorDomain 516) instead of a usage error.
    @Test("an empty --path or one naming a file is a usage error naming the option")
    func unusablePathsAreRefused() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("demo-path-\(UUID().uuidString)")
        try Data("not a folder".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let empty = Self.message(["--path", ""])
        #expect(empty?.contains("--path") == true, "\(String(describing: empty))")
        let named = Self.message(["--path", file.path])
        #expect(named?.contains(file.path) == true && named?.contains("not a folder") == true, "\(String(describing: named))")
    }

    @Test("a folder, existing or not, and no --path at all are accepted")
    func usablePathsAreAccepted() {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("demo-path-\(UUID().uuidString)")
        #expect(Self.message(["--path", folder.path]) == nil)
        #expect(Self.message(["--path", FileManager.default.temporaryDirectory.path]) == nil)
        #expect(Self.message([]) == nil)
    }
}
