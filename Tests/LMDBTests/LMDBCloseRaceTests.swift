import Foundation
import ObjectGraph
import ObjectGraphLMDB
import Testing

/// Closing a container while other threads still fetch and save through it: a read that passed
/// the store's open check just before the close began a transaction on the closed environment
/// and crashed in `mdb_txn_begin` (an audit). It throws ``StoreError`` `.closed` now.
@Suite("LMDB close racing reads and saves")
struct LMDBCloseRaceTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Item") { e in e.attribute("name", .string, optional: true) }
        }
    }

    @Test("closing a container while other threads read and save through it gives typed errors, never a crash")
    func closeWhileWorking() throws {
        for _ in 0..<300 {
            let url = try LMDBFixture.temporaryFile()
            let container = try PersistentContainer(model: try Self.model(), stores: [.lmdb(at: url)])
            let seed = container.newBackgroundContext()
            try seed.performAndWait {
                for i in 0..<20 { try seed.insertObject(entityName: "Item").setValue("n\(i)", forKey: "name") }
                try seed.save()
            }
            let done = DispatchGroup()
            let started = DispatchSemaphore(value: 0)
            for worker in 0..<3 {
                done.enter()
                Thread.detachNewThread {
                    defer { done.leave() }
                    let context = container.newBackgroundContext()
                    started.signal()
                    for round in 0..<200 {
                        do {
                            try context.performAndWait {
                                if worker == 0 {
                                    try context.insertObject(entityName: "Item").setValue("w\(round)", forKey: "name")
                                    try context.save()
                                } else {
                                    _ = try context.count(for: FetchRequest<ManagedObject>(entityName: "Item"))
                                    context.reset()
                                }
                            }
                        } catch {
                            #expect(error is StoreError || error is ObjectGraphError, "\(type(of: error)): \(error)")
                            break
                        }
                    }
                }
            }
            for _ in 0..<3 { started.wait() }
            container.close()
            done.wait()
        }
    }
}
