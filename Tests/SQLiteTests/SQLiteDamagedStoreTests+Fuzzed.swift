import Foundation
import ObjectGraph
import ObjectGraphConformance
import ObjectGraphSQLite
import Testing

/// The damage the fuzz test (``SQLiteValueFuzzTests``) found stopping the process, each
/// written down: now a typed error naming the file.
extension SQLiteDamagedStoreTests {
    @Test("a to-one's entity column naming an entity outside its destination is damage: reading, clearing or deleting through it stopped the process at the inverse's slot")
    func toOneOutsideItsDestination() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Vehicle", abstract: true) { e in
                e.attribute("name", .string)
                e.toOne("spot", "Spot", inverse: "vehicle")
            }
            m.entity("Car", parent: "Vehicle") { _ in }
            m.entity("Truck", parent: "Vehicle") { _ in }
            m.entity("Spot") { e in e.toOne("vehicle", "Vehicle", inverse: "spot") }
            m.entity("Other") { e in e.attribute("name", .string) }
        }
        let url = try SQLiteStoreTests.temporaryFile()
        let container = try PersistentContainer(model: model, stores: [.sqlite(at: url)])
        let seeding = container.newBackgroundContext()
        try seeding.performAndWait {
            let car = try seeding.insertObject(entityName: "Car")
            try car.setValue("car", forKey: "name")
            try seeding.insertObject(entityName: "Spot").setValue(car, forKey: "vehicle")
            try seeding.insertObject(entityName: "Other").setValue("other", forKey: "name")
            try seeding.save()
        }
        container.close()
        // A Truck is a Vehicle: read as one. Other is not.
        for (name, damaged) in [("Truck", false), ("Other", true)] {
            try Self.execute(url, "UPDATE \"Spot\" SET \"fke:Spot.vehicle\" = '\(name)'")
            let reopened = try PersistentContainer(model: model, stores: [.sqlite(at: url)])
            defer { reopened.close() }
            let context = reopened.newBackgroundContext()
            var spots = FetchRequest<ManagedObject>(entityName: "Spot")
            spots.returnsObjectsAsFaults = false
            if !damaged {
                let vehicle = try context.performAndWait { try context.fetch(spots).first?.value(forKey: "vehicle") as? ManagedObject }
                #expect(context.performAndWait { vehicle?.entity.name } == "Truck")
                continue
            }
            let errors = context.performAndWait {
                [#expect(throws: StoreError.self) { _ = try context.fetch(spots) },
                 #expect(throws: StoreError.self) {
                     for spot in try context.fetch(FetchRequest<ManagedObject>(entityName: "Spot")) { context.delete(spot) }
                     try context.save()
                 }]
            }
            for error in errors {
                #expect(error?.code == .corrupt && error?.message.contains(url.path) == true && error?.message.contains("fke:Spot.vehicle") == true, "\(String(describing: error))")
            }
        }
    }

    @Test("a many-to-many's positions at Int64.max refuse a new member as damage, where counting past them overflowed")
    func joinPositionsAtTheEnd() throws {
        let url = try SQLiteStoreTests.temporaryFile()
        let container = try PersistentContainer(model: try SQLiteStoreTests.model(), stores: [.sqlite(at: url)])
        let seeding = container.newBackgroundContext()
        try seeding.performAndWait {
            let tag = try seeding.insertObject(entityName: "Tag")
            try tag.setValue("first", forKey: "label")
            let note = try seeding.insertObject(entityName: "Note")
            try note.setValue("kept", forKey: "text")
            try note.setValue([tag], forKey: "tags")
            try seeding.save()
        }
        container.close()
        try Self.execute(url, "UPDATE \"j:Note.tags\" SET pos = 9223372036854775807")
        let reopened = try PersistentContainer(model: try SQLiteStoreTests.model(), stores: [.sqlite(at: url)])
        defer { reopened.close() }
        let context = reopened.newBackgroundContext()
        let error = try context.performAndWait {
            let note = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Note")).first)
            let tag = try context.insertObject(entityName: "Tag")
            try tag.setValue("second", forKey: "label")
            try note.setValue(try (note.value(forKey: "tags") as? Set<ManagedObject> ?? []).union([tag]), forKey: "tags")
            return #expect(throws: StoreError.self) { try context.save() }
        }
        #expect(error?.code == .corrupt && error?.message.contains(url.path) == true && error?.message.contains("j:Note.tags") == true, "\(String(describing: error))")
    }

    @Test("a row version outside 1..<Int64.max is damage when the row is read, and one stored as a real in range is damage at the save: an update at Int64.max overflowed, one at a negative version was left out of the save without a word, and one at 2.5 was a conflict no merge resolved", arguments: ["9223372036854775807", "1e308", "-5", "0", "2.5"])
    func versionOutsideItsRange(version: String) throws {
        let url = try Self.seededStore()
        try Self.execute(url, "UPDATE \"Note\" SET version = \(version)")
        let container = try PersistentContainer(model: try SQLiteStoreTests.model(), stores: [.sqlite(at: url)])
        defer { container.close() }
        let context = container.newBackgroundContext()
        let error = context.performAndWait {
            #expect(throws: StoreError.self) {
                let note = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Note")).first)
                try note.setValue("changed", forKey: "text")
                try context.save()
            }
        }
        #expect(error?.code == .corrupt && error?.message.contains(url.path) == true && error?.message.contains("version") == true, "\(String(describing: error))")
    }

    @Test("a member of a sibling of a to-many's destination, in a table of several entities, is damage (by foreign key or join row): deleting its owner stopped the process at the inverse's slot", arguments: [false, true])
    func memberOfASibling(manyToMany: Bool) throws {
        let model = try ManagedObjectModel { m in
            m.entity("Vehicle", abstract: true) { e in e.attribute("name", .string) }
            m.entity("Car", parent: "Vehicle") { e in
                if manyToMany { e.toMany("garages", "Garage", inverse: "cars") } else { e.toOne("garage", "Garage", inverse: "cars") }
            }
            m.entity("Truck", parent: "Vehicle") { _ in }
            m.entity("Garage") { e in e.toMany("cars", "Car", inverse: manyToMany ? "garages" : "garage") }
        }
        let url = try SQLiteStoreTests.temporaryFile()
        let container = try PersistentContainer(model: model, stores: [.sqlite(at: url)])
        let seeding = container.newBackgroundContext()
        let (garage, truck) = try seeding.performAndWait {
            let garage = try seeding.insertObject(entityName: "Garage")
            let car = try seeding.insertObject(entityName: "Car")
            try car.setValue("car", forKey: "name")
            try garage.setValue([car], forKey: "cars")
            let truck = try seeding.insertObject(entityName: "Truck")
            try truck.setValue("truck", forKey: "name")
            try seeding.save()
            return (garage.objectID.primaryKey ?? 0, truck.objectID.primaryKey ?? 0)
        }
        container.close()
        if manyToMany {
            try Self.execute(url, "INSERT INTO \"j:Garage.cars\" (src, dst, dste, pos) VALUES (\(garage), \(truck), 'Truck', 5)")
        } else {
            try Self.execute(url, "UPDATE \"Vehicle\" SET \"fk:Car.garage\" = \(garage) WHERE pk = \(truck)")
        }
        let reopened = try PersistentContainer(model: model, stores: [.sqlite(at: url)])
        defer { reopened.close() }
        let context = reopened.newBackgroundContext()
        let errors = context.performAndWait {
            [#expect(throws: StoreError.self) {
                for garage in try context.fetch(FetchRequest<ManagedObject>(entityName: "Garage")) { _ = try garage.value(forKey: "cars") }
            },
             #expect(throws: StoreError.self) {
                 for garage in try context.fetch(FetchRequest<ManagedObject>(entityName: "Garage")) { context.delete(garage) }
                 try context.save()
             }]
        }
        for error in errors {
            #expect(error?.code == .corrupt && error?.message.contains(url.path) == true && error?.message.contains("Garage.cars") == true, "\(String(describing: error))")
        }
    }

    @Test("a row whose version is damaged is deleted through its unread fault, indexed or not, as the LMDB store deletes it (nothing is checked of a row deleted unread)", arguments: ["Plain", "Indexed"])
    func deletingARowWithADamagedVersion(entity: String) throws {
        let url = try SQLiteStoreTests.temporaryFile()
        let model = try StoreDamageProbe.relationshipFreeModel()
        let seeding = try PersistentContainer(model: model, stores: [.sqlite(at: url)])
        try StoreDamageProbe.seedRelationshipFree(seeding)
        seeding.close()
        try Self.execute(url, "UPDATE \"\(entity)\" SET version = 0")
        let container = try PersistentContainer(model: model, stores: [.sqlite(at: url)])
        defer { container.close() }
        #expect(try StoreDamageProbe.deleteUnread(entity, in: container) == (entity == "Plain" ? [0, 1, 1] : [1, 0, 0]))
    }
}
