import ArgumentParser
import Foundation
@testable import objectgraph
import Testing

/// `objectgraph demo` with no options: the SQLite store, in a temporary folder that is removed
/// afterwards (README's first command, which must leave nothing behind).
@Suite("demo defaults")
struct DemoDefaultsTests {
    /// A new, empty folder for the demo to make its temporary folder in.
    static func emptyFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("demo-root-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test("without options the demo uses the SQLite store")
    func defaultStoreIsSQLite() throws {
        let command = try DemoCommand.parse([])
        #expect(command.store == .sqlite)
        #expect(command.path == nil)
        let folder = URL(fileURLWithPath: "/demo-folder", isDirectory: true)
        let description = command.store.description(in: folder)
        #expect(description.type == "sqlite")
        #expect(description.url == folder.appendingPathComponent("store.sqlite"))
    }

    @Test("without --path the demo runs to the end in a temporary folder, and removes it")
    func runsInATemporaryFolder() throws {
        let root = try Self.emptyFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        try DemoCommand.parse([]).run(temporaryRoot: root)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path) == [], "the demo's folder is removed")
        // The folder is made where the root says: under a file it cannot be, and the run fails
        // (else the empty root above would prove nothing).
        let file = root.appendingPathComponent("a-file")
        try Data().write(to: file)
        #expect(throws: (any Error).self) { try DemoCommand.parse([]).run(temporaryRoot: file) }
    }
}
