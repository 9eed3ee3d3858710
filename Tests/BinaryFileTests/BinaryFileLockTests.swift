import Foundation
import ObjectGraph
import ObjectGraphBinaryFile
@testable import ObjectGraphBinaryFileFuzz
import Testing

/// One opener at a time, across coordinators and processes.
@Suite("Binary store lock")
struct BinaryFileLockTests {
    typealias Support = BinaryFileTestSupport

    static func sharedStore(processID: Int32) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("og-binary-lock-\(processID)/store.bin")
    }

    @Test("a second coordinator on an open store gets a busy error naming the lock; after close it opens")
    func secondCoordinator() throws {
        let url = try Support.temporaryStore()
        defer { Support.remove(url) }
        let first = try Support.container(url)
        let error = #expect(throws: StoreError.self) { _ = try Support.container(url) }
        #expect(error?.code == .busy)
        #expect(error?.message.contains("store.bin.lock") == true)
        #expect(error?.message.contains("process \(getpid())") == true, "\(String(describing: error))")
        first.close()
        let second = try Support.container(url)
        second.close()
    }

    @Test("another process cannot open a store this one holds, and can once it is closed")
    func secondProcess() async throws {
        let url = Self.sharedStore(processID: getpid())
        try? FileManager.default.removeItem(at: url.deletingLastPathComponent())
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let container = try Support.container(url)
        await #expect(processExitsWith: .success) {
            let url = BinaryFileLockTests.sharedStore(processID: getppid())
            do {
                _ = try PersistentContainer(model: FuzzInput.model, stores: [.binaryFile(at: url)])
                exit(3)
            } catch let error as StoreError where error.code == .busy && error.message.contains("process \(getppid())") {
                exit(0)
            }
        }
        container.close()
        await #expect(processExitsWith: .success) {
            let url = BinaryFileLockTests.sharedStore(processID: getppid())
            let container = try PersistentContainer(model: FuzzInput.model, stores: [.binaryFile(at: url)])
            container.close()
        }
    }
}
