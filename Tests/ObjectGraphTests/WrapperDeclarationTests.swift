import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Testing

// Wrappers placed at one position on purpose (the arguments a declaration's position fills
// in, written out): a class and its subclass may well declare properties at the same line and
// column of two files, and each must still reach its own property.

/// A superclass declaring an attribute at position 1:1 (and a relationship at 2:1).
class Vehicle: ManagedObject {
    @Attribute(line: 1, column: 1) var make: String
    @Relationship(line: 2, column: 1) var garage: Garage?
}

/// A bound subclass declaring its own attribute at the same position.
class Car: Vehicle {
    @Attribute(line: 1, column: 1) var model: String
}

/// A subclass the model does not know, instantiated for `Car` objects by hand; its attribute
/// sits at that position too.
final class SportsCar: Car {
    @Attribute(line: 1, column: 1) var topSpeed: Int32
}

final class Garage: ManagedObject {
    @Attribute var name: String
    @Relationship var vehicles: Set<Car>
}

/// Two wrappers of one class at one position: nothing tells them apart.
final class Clash: ManagedObject {
    @Attribute(line: 9, column: 9) var first: String
    @Attribute(line: 9, column: 9) var second: String
}

@Suite("Property wrapper declarations")
struct WrapperDeclarationTests {
    static func build(_ m: ModelBuilder) {
        m.entity("Car", as: Car.self) { e in
            e.attribute("make", .string)
            e.attribute("model", .string)
            e.attribute("topSpeed", .integer32, default: 0)
            e.toOne("garage", "Garage", inverse: "vehicles")
        }
        m.entity("Garage", as: Garage.self) { e in
            e.attribute("name", .string)
            e.toMany("vehicles", "Car", inverse: "garage")
        }
        m.entity("Clash", as: Clash.self) { e in
            e.attribute("first", .string)
            e.attribute("second", .string)
        }
    }

    /// A new car, its two attributes set through their wrappers.
    static func car(_ make: String, _ model: String, in context: ManagedObjectContext) -> Car {
        let car = Car(context: context)
        car.make = make
        car.model = model
        return car
    }

    /// A new garage, named through its wrapper.
    static func garage(_ name: String, in context: ManagedObjectContext) -> Garage {
        let garage = Garage(context: context)
        garage.name = name
        return garage
    }

    @Test func aSubclassAndItsSuperclassAtOnePositionReachTheirOwnProperties() throws {
        let (_, context) = try makeContext(Self.build)
        try context.performAndWait {
            let garage = Self.garage("North", in: context)
            let car = Self.car("Volvo", "240", in: context)
            car.garage = garage
            #expect(try string(car, "make") == "Volvo")
            #expect(try string(car, "model") == "240")
            #expect(car.make == "Volvo")
            #expect(car.model == "240")
            #expect(car.garage === garage)
            #expect(garage.vehicles == [car])
            try context.save()
            #expect(car.make == "Volvo" && car.model == "240")
        }
    }

    @Test func anUnboundSubclassReachesInheritedAndOwnProperties() throws {
        let (_, context) = try makeContext(Self.build)
        try context.performAndWait {
            // The bound class first, so that its declarations are resolved before the
            // subclass's, which share their position.
            let car = Self.car("Saab", "900", in: context)
            let entity = try #require(context.model.entity(named: "Car"))
            let sports = SportsCar(entity: entity, insertInto: context)
            sports.make = "Porsche"
            sports.model = "911"
            sports.topSpeed = 260
            #expect(try string(sports, "make") == "Porsche")
            #expect(try string(sports, "model") == "911")
            #expect(try sports.value(forKey: "topSpeed") as? Int64 == 260)
            #expect(sports.make == "Porsche" && sports.model == "911" && sports.topSpeed == 260)
            #expect(car.make == "Saab" && car.model == "900")
            #expect(try car.value(forKey: "topSpeed") as? Int64 == 0)
        }
    }

    /// Mutating a wrapped value in place (`+=`, a mutating method) goes through the wrapper's
    /// getter and setter: the change lands in the object and is tracked.
    @Test func inPlaceMutationsReachTheObject() throws {
        let (_, context) = try makeContext(Self.build)
        try context.performAndWait {
            let garage = Self.garage("South", in: context)
            let car = Self.car("Volvo", "24", in: context)
            try context.save()
            car.make += " Cars"
            car.model.append("0")
            garage.vehicles.insert(car)
            #expect(try string(car, "make") == "Volvo Cars")
            #expect(try string(car, "model") == "240")
            #expect(car.garage === garage)
            #expect(car.isUpdated && garage.isUpdated)
            try context.save()
            #expect(car.make == "Volvo Cars" && car.model == "240" && garage.vehicles == [car])
        }
    }

    @Test func twoWrappersOfOneClassAtOnePositionStopTheProcessWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, context) = try makeContext(Self.build)
            context.performAndWait {
                let clash = Clash(context: context)
                _ = clash.first
            }
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("Clash declares wrapped properties first and second"))
        #expect(text.contains("name one explicitly"))
    }
}
