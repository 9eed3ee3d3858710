import Foundation
import ObjectGraph
import ObjectGraphSQLite
import Synchronization
import Testing

/// Two openers creating one new store at the same moment — two processes of an app on its
/// first launch, here two coordinators of one process, which SQLite locks against each other
/// as it does processes. Both saw the file empty, and the second to take the write lock
/// created the schema again: "table og_metadata already exists" (140 pairs in 200 before the
/// fix). Racing is not deterministic, so the test runs several pairs; what it asserts is: every
/// open succeeds, and both openers of a pair see one store.
@Suite("SQLite first opens at the same moment")
struct SQLiteFirstOpenRaceTests {
    static let pairs = 30

    @Test("two openers creating one new store at once both open it, with one identity")
    func simultaneousFirstOpens() throws {
        for pair in 0..<Self.pairs {
            let url = try SQLiteStoreTests.temporaryFile()
            let model = try SQLiteStoreTests.model()
            let outcomes = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { _ in
                let outcome: String
                do {
                    let container = try PersistentContainer(model: model, stores: [.sqlite(at: url)])
                    outcome = try container.coordinator.persistentStores[0].metadata().storeIdentifier
                    container.close()
                } catch {
                    outcome = "error: \(error)"
                }
                outcomes.withLock { $0.append(outcome) }
            }
            let seen = outcomes.withLock { $0 }
            #expect(!seen.contains { $0.hasPrefix("error") }, "pair \(pair): \(seen)")
            #expect(Set(seen).count == 1, "pair \(pair): both openers see one store: \(seen)")
        }
    }
}
