import Foundation
import ObjectGraph
import ObjectGraphInMemory
import OrderedCollections
import Testing

struct Dimensions: Codable, Sendable, Equatable {
    var width: Double
    var height: Double
    var label: String
}

/// Key-value access checked against the model: every attribute type round-trips, and misuse is
/// a thrown error naming the entity and key.
@Suite("Key-value access")
struct KeyValueTests {
    static func build(_ m: ModelBuilder) {
        m.entity("Item") { e in
            e.attribute("i16", .integer16, optional: true)
            e.attribute("i32", .integer32, optional: true)
            e.attribute("i64", .integer64, optional: true)
            e.attribute("dbl", .double, optional: true)
            e.attribute("flt", .float, optional: true)
            e.attribute("dec", .decimal, optional: true)
            e.attribute("str", .string, optional: true)
            e.attribute("flag", .boolean, optional: true)
            e.attribute("when", .date, optional: true)
            e.attribute("blob", .binaryData, optional: true)
            e.attribute("uuid", .uuid, optional: true)
            e.attribute("link", .uri, optional: true)
            e.transformable("size", Dimensions.self)
            e.toOne("folder", "Folder", inverse: "items")
            e.toMany("tags", "Tag", inverse: "items")
        }
        m.entity("Folder") { e in
            e.attribute("name", .string, optional: true)
            e.toMany("items", "Item", inverse: "folder")
            e.toMany("pinned", "Item", ordered: true)
        }
        m.entity("Tag") { e in
            e.attribute("label", .string, optional: true)
            e.toMany("items", "Item", inverse: "tags")
        }
        m.entity("Shape", abstract: true)
        m.entity("Circle", parent: "Shape")
    }

    @Test func everyAttributeTypeRoundTrips() throws {
        let (_, context) = try makeContext(Self.build)
        let when = Date(timeIntervalSince1970: 1_700_000_000.25)
        let uuid = UUID()
        let link = try #require(URL(string: "https://example.com/a?b=c"))
        let size = Dimensions(width: 2.5, height: 4, label: "A4 ✓")
        let values: [(String, Any)] = [
            ("i16", Int16(-12_345)), ("i32", Int32(2_000_000_000)), ("i64", Int64.max),
            ("dbl", 3.141592653589793), ("flt", Float(1.5)), ("dec", Decimal(string: "12345.6789")!),
            ("str", "héllo wörld 🌍"), ("flag", true), ("when", when), ("blob", Data([0, 1, 2, 255])),
            ("uuid", uuid), ("link", link), ("size", size),
        ]
        try context.performAndWait {
            let item = try context.insertObject(entityName: "Item")
            for (key, value) in values {
                #expect(try item.value(forKey: key) == nil, "\(key) starts as nil")
                try item.setValue(value, forKey: key)
            }
            try check(item, when: when, uuid: uuid, link: link, size: size)
            try context.save()
            // A second context reads the stored values back through a fault.
            let other = context.coordinator
            let reader = ManagedObjectContext(coordinator: other)
            let id = item.objectID
            try reader.performAndWait {
                let stored = try reader.existingObject(with: id)
                try check(stored, when: when, uuid: uuid, link: link, size: size)
            }
        }
    }

    private func check(_ item: ManagedObject, when: Date, uuid: UUID, link: URL, size: Dimensions) throws {
        #expect(try item.value(forKey: "i16") as? Int64 == -12_345)
        #expect(try item.value(forKey: "i32") as? Int64 == 2_000_000_000)
        #expect(try item.value(forKey: "i64") as? Int64 == Int64.max)
        #expect(try item.value(forKey: "dbl") as? Double == 3.141592653589793)
        #expect(try item.value(forKey: "flt") as? Double == 1.5)
        #expect(try item.value(forKey: "dec") as? Decimal == Decimal(string: "12345.6789"))
        #expect(try item.value(forKey: "str") as? String == "héllo wörld 🌍")
        #expect(try item.value(forKey: "flag") as? Bool == true)
        #expect(try item.value(forKey: "when") as? Date == when)
        #expect(try item.value(forKey: "blob") as? Data == Data([0, 1, 2, 255]))
        #expect(try item.value(forKey: "uuid") as? UUID == uuid)
        #expect(try item.value(forKey: "link") as? URL == link)
        #expect(try item.value(forKey: "size") as? Dimensions == size)
    }

    @Test func integersAreAcceptedForNumbersAndNilClears() throws {
        let (_, context) = try makeContext(Self.build)
        try context.performAndWait {
            let item = try context.insertObject(entityName: "Item")
            try item.setValue(7, forKey: "dbl")
            #expect(try item.value(forKey: "dbl") as? Double == 7)
            try item.setValue(7, forKey: "dec")
            #expect(try item.value(forKey: "dec") as? Decimal == 7)
            try item.setValue(UInt8(200), forKey: "i16")
            #expect(try item.value(forKey: "i16") as? Int64 == 200)
            try item.setValue(AttributeValue.string("wrapped"), forKey: "str")
            #expect(try item.value(forKey: "str") as? String == "wrapped")
            try item.setValue(nil, forKey: "str")
            #expect(try item.value(forKey: "str") == nil)
            try item.setValue(Int16.min, forKey: "i16")
            #expect(try item.value(forKey: "i16") as? Int64 == Int64(Int16.min))
        }
    }

    @Test func unknownKeyNamesEntityAndKey() throws {
        let (_, context) = try makeContext(Self.build)
        try context.performAndWait {
            let item = try context.insertObject(entityName: "Item")
            let read = expectGraphError(.unknownKey, mentioning: ["Item", "colour"]) {
                _ = try item.value(forKey: "colour")
            }
            #expect(read?.key == "colour")
            #expect(read?.objectID == item.objectID)
            expectGraphError(.unknownKey, mentioning: ["Item", "colour"]) {
                try item.setValue("red", forKey: "colour")
            }
            expectGraphError(.unknownKey, mentioning: ["Folder", "colour"]) {
                try context.insertObject(entityName: "Folder").setValue(1, forKey: "colour")
            }
        }
    }

    @Test func wrongValueTypeNamesTheAttribute() throws {
        let (_, context) = try makeContext(Self.build)
        try context.performAndWait {
            let item = try context.insertObject(entityName: "Item")
            let cases: [(String, Any)] = [
                ("i32", "forty-two"), ("str", 42), ("i16", 40_000), ("i16", Int32(-40_000)),
                ("i32", Int64(Int32.max) + 1), ("i64", UInt64.max), ("flag", 1), ("dbl", "1.5"),
                ("when", "2024-01-01"), ("uuid", "not a uuid"), ("link", "https://example.com"),
                ("size", "not dimensions"), ("blob", "bytes"), ("dec", true),
            ]
            for (key, value) in cases {
                let error = expectGraphError(.wrongValueType, mentioning: ["Item.\(key)"]) {
                    try item.setValue(value, forKey: key)
                }
                #expect(error?.key == key)
                #expect(try item.value(forKey: key) == nil, "the refused value for \(key) was not stored")
            }
            expectGraphError(.wrongValueType, mentioning: ["40000"]) { try item.setValue(40_000, forKey: "i16") }
            expectGraphError(.wrongValueType) { try item.setValue(AttributeValue.string("x"), forKey: "i64") }
        }
    }

    @Test func toManyTakesArraysAndSetsAndMaintainsInverses() throws {
        let (_, context) = try makeContext(Self.build)
        try context.performAndWait {
            let folder = try context.insertObject(entityName: "Folder")
            let a = try context.insertObject(entityName: "Item")
            let b = try context.insertObject(entityName: "Item")
            let c = try context.insertObject(entityName: "Item")
            try folder.setValue([a, b], forKey: "items")
            #expect(try folder.value(forKey: "items") as? Set<ManagedObject> == [a, b])
            #expect(try a.value(forKey: "folder") as? ManagedObject === folder)
            try folder.setValue(Set([b, c]), forKey: "items")
            #expect(try folder.value(forKey: "items") as? Set<ManagedObject> == [b, c])
            #expect(try a.value(forKey: "folder") == nil)
            #expect(try c.value(forKey: "folder") as? ManagedObject === folder)
            try folder.setValue([c, a, b], forKey: "pinned")
            let pinned = try #require(try folder.value(forKey: "pinned") as? OrderedSet<ManagedObject>)
            #expect(Array(pinned) == [c, a, b])
            try folder.setValue(nil, forKey: "items")
            #expect(try folder.value(forKey: "items") as? Set<ManagedObject> == [])
            #expect(try b.value(forKey: "folder") == nil)
            expectGraphError(.wrongValueType, mentioning: ["Folder.items"]) {
                try folder.setValue([a, "b"] as [Any], forKey: "items")
            }
            expectGraphError(.wrongValueType, mentioning: ["Folder.items"]) {
                try folder.setValue(a, forKey: "items")
            }
        }
    }

    @Test func toOneRefusesANonObject() throws {
        let (_, context) = try makeContext(Self.build)
        try context.performAndWait {
            let item = try context.insertObject(entityName: "Item")
            let folder = try context.insertObject(entityName: "Folder")
            let error = expectGraphError(.wrongValueType, mentioning: ["Item.folder", "String"]) {
                try item.setValue("Inbox", forKey: "folder")
            }
            #expect(error?.key == "folder")
            expectGraphError(.wrongValueType, mentioning: ["Item.folder"]) {
                try item.setValue([folder], forKey: "folder")
            }
            try item.setValue(folder, forKey: "folder")
            #expect(try folder.value(forKey: "items") as? Set<ManagedObject> == [item])
            try item.setValue(nil, forKey: "folder")
            #expect(try folder.value(forKey: "items") as? Set<ManagedObject> == [])
        }
    }

    @Test func objectsOfTwoContextsCannotBeRelated() throws {
        let (container, first) = try makeContext(Self.build)
        let second = container.newBackgroundContext()
        try first.performAndWait {
            let folder = try first.insertObject(entityName: "Folder")
            try second.performAndWait {
                let item = try second.insertObject(entityName: "Item")
                expectGraphError(.wrongContext, mentioning: ["folder"]) { try item.setValue(folder, forKey: "folder") }
                expectGraphError(.wrongContext) { try folder.setValue([item], forKey: "items") }
                expectGraphError(.wrongContext) { try folder.add(item, to: "items") }
                expectGraphError(.wrongContext) { try second.insert(folder) }
                #expect(try item.value(forKey: "folder") == nil)
            }
            #expect(try folder.value(forKey: "items") as? Set<ManagedObject> == [])
        }
    }

    @Test func objectOfTheWrongEntityInARelationship() throws {
        let (_, context) = try makeContext(Self.build)
        try context.performAndWait {
            let item = try context.insertObject(entityName: "Item")
            let tag = try context.insertObject(entityName: "Tag")
            let other = try context.insertObject(entityName: "Item")
            let error = expectGraphError(.wrongDestination, mentioning: ["Item.folder", "Folder", "Tag"]) {
                try item.setValue(tag, forKey: "folder")
            }
            #expect(error?.key == "folder")
            expectGraphError(.wrongDestination, mentioning: ["Item.tags", "Tag"]) {
                try item.setValue([other], forKey: "tags")
            }
            expectGraphError(.wrongDestination) { try item.add(other, to: "tags") }
            #expect(try item.value(forKey: "folder") == nil)
            #expect(try item.value(forKey: "tags") as? Set<ManagedObject> == [])
        }
    }

    @Test func insertingAnUnknownOrAbstractEntity() throws {
        let (_, context) = try makeContext(Self.build)
        try context.performAndWait {
            expectGraphError(.unknownEntity, mentioning: ["Gadget"]) { _ = try context.insertObject(entityName: "Gadget") }
            expectGraphError(.abstractEntity, mentioning: ["Shape", "Circle"]) { _ = try context.insertObject(entityName: "Shape") }
            let circle = try context.insertObject(entityName: "Circle")
            #expect(circle.entity.name == "Circle")
            #expect(context.insertedObjects == [circle])
        }
    }
}
