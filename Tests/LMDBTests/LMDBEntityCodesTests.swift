import Foundation
import ObjectGraph
@testable import ObjectGraphLMDB
import Testing

/// Which rows a request reads is a set of entity codes, a bit set below code 64 and a `Set`
/// above: both halves must answer as a plain set would, and a store whose hierarchy has codes
/// on both sides of 64 must fetch and count each entity's rows exactly.
@Suite("LMDB entity codes")
struct LMDBEntityCodesTests {
    @Test("membership and subsets agree with Set<UInt16>, below and above code 64")
    func agreesWithSet() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<100 {
            let a = Set((0..<Int.random(in: 0..<8, using: &generator)).map { _ in UInt16.random(in: 0..<130, using: &generator) })
            let b = a.union((0..<Int.random(in: 0..<4, using: &generator)).map { _ in UInt16.random(in: 0..<130, using: &generator) })
            let codesA = EntityCodes(a), codesB = EntityCodes(b)
            for code in UInt16(0)..<140 { #expect(codesA.contains(code) == a.contains(code)) }
            #expect(codesA.isSubset(of: codesB))
            #expect(codesB.isSubset(of: codesA) == b.isSubset(of: a))
            #expect(EntityCodes().isSubset(of: codesA))
        }
    }

    @Test("a hierarchy of 70 entities in one table: fetches and counts see exactly each entity's rows")
    func wideHierarchy() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Thing", abstract: true) { e in e.attribute("n", .integer64) }
            for index in 0..<70 { m.entity("T\(index)", parent: "Thing") { _ in } }
        }
        let container = try PersistentContainer(model: model, stores: [.lmdb(at: try LMDBFixture.temporaryFile())])
        let context = container.newBackgroundContext()
        let made = [0, 1, 63, 64, 65, 69, 69]
        try context.performAndWait {
            for (position, index) in made.enumerated() {
                try context.insertObject(entityName: "T\(index)").setValue(Int64(position), forKey: "n")
            }
            try context.save()
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            for index in [0, 1, 2, 63, 64, 65, 68, 69] {
                let expected = made.enumerated().filter { $0.element == index }.map { Int64($0.offset) }
                let request = FetchRequest<ManagedObject>(entityName: "T\(index)")
                let found = try reader.fetch(request).map { try $0.value(forKey: "n") as? Int64 }
                #expect(found.compactMap { $0 }.sorted() == expected, "T\(index)")
                #expect(try reader.count(for: request) == expected.count, "T\(index)")
            }
            let all = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Thing"))
            #expect(all.count == made.count)
        }
        container.close()
    }
}
