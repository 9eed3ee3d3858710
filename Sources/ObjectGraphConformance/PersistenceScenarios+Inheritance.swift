import Foundation
import ObjectGraph

extension PersistenceScenarios {
    /// A to-one whose destination is an abstract parent: each destination comes back as its own
    /// sub-entity, with its own attributes, through the to-one, its inverse, key paths and
    /// comparisons with objects — a store keeping one table or index for the hierarchy must tell
    /// the destination's entity from the row, not from the relationship.
    static let inheritance: [ConformanceScenario] = [
        ConformanceScenario("persistence.toOneToAnAbstractParentKeepsEachDestinationsEntity") { env in
            let context = env.newContext()
            let (carID, truckID) = try context.performAndWait { () throws -> (ObjectID, ObjectID) in
                let car = try context.insertObject(entityName: "Car")
                try car.setValue("beetle", forKey: "name")
                try car.setValue(2, forKey: "doors")
                let truck = try context.insertObject(entityName: "Truck")
                try truck.setValue("hauler", forKey: "name")
                try truck.setValue(3.5, forKey: "payload")
                for (label, vehicle) in [("A", car), ("B", truck), ("C", nil)] as [(String, ManagedObject?)] {
                    let spot = try context.insertObject(entityName: "Spot")
                    try spot.setValue(label, forKey: "label")
                    try spot.setValue(vehicle, forKey: "vehicle")
                }
                try context.save()
                return (car.objectID, truck.objectID)
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                var request = FetchRequest<ManagedObject>(entityName: "Spot", sortKeys: [SortKey("label")])
                request.returnsObjectsAsFaults = false
                let spots = try fresh.fetch(request)
                try checkEqual(try spots.map { try $0.value(forKey: "label") as? String }, ["A", "B", "C"], "the spots")
                let vehicles = try spots.map { try $0.value(forKey: "vehicle") as? ManagedObject }
                try checkEqual(vehicles.map { $0?.entity.name }, ["Car", "Truck", nil], "each destination as its own entity")
                try checkEqual(vehicles.map { $0?.objectID }, [carID, truckID, nil], "the very records")
                try checkEqual(try vehicles[0]?.value(forKey: "doors") as? Int64, 2, "the car's own attribute")
                try checkEqual(try vehicles[1]?.value(forKey: "payload") as? Double, 3.5, "the truck's own attribute")
                try checkEqual(try vehicles[1]?.value(forKey: "spot") as? ManagedObject, spots[1], "the inverse, from a sub-entity")
                func labels(_ predicate: FetchPredicate) throws -> [String?] {
                    let found = try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Spot", predicate: predicate, sortKeys: [SortKey("label")]))
                    return try found.map { try $0.value(forKey: "label") as? String }
                }
                try checkEqual(try labels(.key("vehicle") == truckID), ["B"], "compared with a truck")
                try checkEqual(try labels(.key("vehicle") == carID), ["A"], "compared with a car")
                try checkEqual(try labels(.key("vehicle.name") == "hauler"), ["B"], "a key path through the to-one")
                try checkEqual(try labels(.key("vehicle") == nil), ["C"], "no vehicle")
                try checkEqual(try fresh.count(for: FetchRequest<ManagedObject>(entityName: "Spot", predicate: .key("vehicle") == carID)), 1, "counted")
                // Sorted through the to-one: no vehicle first, then by the vehicles' names.
                for ascending in [true, false] {
                    let sorted = try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Spot", sortKeys: [SortKey("vehicle.name", ascending: ascending)]))
                    let expected = ascending ? ["C", "A", "B"] : ["B", "A", "C"]
                    try checkEqual(try sorted.map { try $0.value(forKey: "label") as? String }, expected, "sorted by vehicle.name, ascending: \(ascending)")
                }
            }
        },
        ConformanceScenario("persistence.deleteThroughAnIDOfAnotherSubEntityLeavesTheRow") { env in
            // Car and Truck share their hierarchy's keys: an ID naming a Truck with the car's
            // key (a URI edited by hand) names no record, and deleting through it deletes
            // nothing — not the car.
            let context = env.newContext()
            let car = try context.performAndWait { () throws -> ObjectID in
                let car = try context.insertObject(entityName: "Car")
                try car.setValue("beetle", forKey: "name")
                try context.save()
                return car.objectID
            }
            guard let store = car.storeIdentifier, let key = car.primaryKey else {
                throw ScenarioFailure(message: "a saved car has a store and a key", file: #filePath, line: #line)
            }
            let ghost = ObjectID(entityName: "Truck", storeIdentifier: store, primaryKey: key)
            let deleter = env.newContext()
            try deleter.performAndWait {
                deleter.delete(deleter.object(with: ghost))
                try deleter.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let found = try fresh.existingObject(with: car)
                try checkEqual(try found.value(forKey: "name") as? String, "beetle", "the car is still there")
                try checkEqual(try fresh.count(for: FetchRequest<ManagedObject>(entityName: "Car")), 1, "one car")
                try checkEqual(try fresh.count(for: FetchRequest<ManagedObject>(entityName: "Truck")), 0, "no truck")
            }
        },
    ]
}
