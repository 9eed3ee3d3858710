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

    @Test("rows of entities of one width are read into fixed-width runs, of several widths into varying ones, each row with its own values")
    func runWidths() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Shape", abstract: true) { e in e.attribute("name", .string) }
            m.entity("Dot", parent: "Shape") { _ in }
            m.entity("Box", parent: "Shape") { e in
                e.attribute("width", .integer64)
                e.attribute("height", .integer64)
            }
            m.entity("Tag") { e in e.attribute("label", .string) }
        }
        let layout = LMDBLayout(model: model, entities: model.entities, indexEverything: false)
        let codec = RowCodec(layout: layout, storeIdentifier: "S")
        func codes(_ names: [String]) -> EntityCodes { EntityCodes(names.compactMap { layout.codes[$0] }) }
        #expect(codec.attributeWidth(of: codes(["Box"])) == 3)
        #expect(codec.attributeWidth(of: codes(["Dot"])) == 1)
        #expect(codec.attributeWidth(of: codes(["Dot", "Tag"])) == 1)
        #expect(codec.attributeWidth(of: codes(["Dot", "Box"])) == nil)
        #expect(codec.attributeWidth(of: EntityCodes()) == nil)

        let container = try PersistentContainer(model: model, stores: [.lmdb(at: try LMDBFixture.temporaryFile())])
        let context = container.newBackgroundContext()
        let count = RowRun.length + 9
        try context.performAndWait {
            for index in 0..<count {
                let shape = try context.insertObject(entityName: index.isMultiple(of: 3) ? "Dot" : "Box")
                try shape.setValue("shape \(index)", forKey: "name")
                if shape.entity.name == "Box" {
                    try shape.setValue(Int64(index), forKey: "width")
                    try shape.setValue(Int64(index * 10), forKey: "height")
                }
            }
            try context.save()
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Shape")
            request.returnsObjectsAsFaults = false
            let shapes = try reader.fetch(request)
            #expect(shapes.count == count)
            for shape in shapes {
                let name = try #require(try shape.value(forKey: "name") as? String)
                let index = try #require(Int(name.dropFirst("shape ".count)))
                #expect(shape.entity.name == (index.isMultiple(of: 3) ? "Dot" : "Box"))
                if shape.entity.name == "Box" {
                    #expect(try shape.value(forKey: "width") as? Int64 == Int64(index))
                    #expect(try shape.value(forKey: "height") as? Int64 == Int64(index * 10))
                }
            }
            var boxes = FetchRequest<ManagedObject>(entityName: "Box")
            boxes.returnsObjectsAsFaults = false
            let fetched = try reader.fetch(boxes)
            #expect(fetched.count == count - (count + 2) / 3)
            for box in fetched {
                let width = try #require(try box.value(forKey: "width") as? Int64)
                #expect(try box.value(forKey: "name") as? String == "shape \(width)")
                #expect(try box.value(forKey: "height") as? Int64 == width * 10)
            }
        }
        container.close()
    }
}
