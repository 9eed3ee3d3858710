import Foundation
import ObjectGraph
import ObjectGraphLMDB
import Testing

@Suite("LMDB model limits")
struct LMDBModelLimitTests {
    @Test("an entity with more attributes than a row's 16-bit count is refused when the store opens")
    func tooManyAttributes() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Wide") { e in for index in 0...Int(UInt16.max) { e.attribute("a\(index)", .integer64, optional: true) } }
        }
        let url = try LMDBFixture.temporaryFile()
        do {
            _ = try PersistentContainer(model: model, stores: [.lmdb(at: url)])
            Issue.record("a row of 65,536 attributes was accepted")
        } catch let error as StoreError {
            #expect(error.code == .incompatibleModel)
            #expect(error.message.contains("Wide") && error.message.contains(url.path))
        }
    }
}
