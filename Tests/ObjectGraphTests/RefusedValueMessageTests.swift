import Foundation
import ObjectGraph
import Testing

/// A value of the wrong type is refused with a message that names the attribute and shows the
/// value without stopping the process, whatever the value holds.
@Suite("Refused values are described safely")
struct RefusedValueMessageTests {
    static func person() throws -> (PersistentContainer, ManagedObjectContext) {
        let model = try ManagedObjectModel { m in
            m.entity("Person") { e in
                e.attribute("name", .string, optional: true)
                e.attribute("age", .integer64, optional: true)
                e.attribute("score", .double, optional: true)
                e.attribute("amount", .decimal, optional: true)
                e.attribute("active", .boolean, optional: true)
                e.attribute("token", .uuid, optional: true)
                e.attribute("home", .uri, optional: true)
            }
        }
        let container = try PersistentContainer(model: model, stores: [.inMemory()])
        return (container, container.newBackgroundContext())
    }

    static func error(of body: () throws -> Void) -> ObjectGraphError? {
        do { try body() } catch let error as ObjectGraphError { return error } catch { return nil }
        return nil
    }

    // Foundation's Date.description traps on a NaN date on Linux; the message for the refusal
    // used to interpolate the value and stopped the process (SIGILL) instead of throwing.
    @Test("a NaN date, alone or in a collection, set on a non-date attribute is wrongValueType")
    func nanDateOnAnotherType() throws {
        let (_, context) = try Self.person()
        try context.performAndWait {
            let person = try context.insertObject(entityName: "Person")
            let nan = Date(timeIntervalSinceReferenceDate: .nan)
            for key in ["name", "age", "score", "amount", "active", "token", "home"] {
                for value in [nan as Any, [nan] as Any, ["when": nan] as Any] {
                    let error = Self.error { try person.setValue(value, forKey: key) }
                    #expect(error?.code == .wrongValueType, "\(key)")
                    #expect(error?.description.contains("Person.\(key)") == true, "\(key): \(String(describing: error?.description))")
                }
            }
        }
    }

    @Test("a refused scalar is shown with its type and value; a collection by its type")
    func refusedValuesShown() throws {
        let (_, context) = try Self.person()
        try context.performAndWait {
            let person = try context.insertObject(entityName: "Person")
            let scalar = Self.error { try person.setValue("twelve", forKey: "age") }
            #expect(scalar?.description.contains("String twelve") == true, "\(String(describing: scalar?.description))")
            let date = Self.error { try person.setValue(Date(timeIntervalSinceReferenceDate: 60), forKey: "name") }
            #expect(date?.description.contains("Date 60.0") == true, "\(String(describing: date?.description))")
            let list = Self.error { try person.setValue([1, 2], forKey: "name") }
            #expect(list?.description.contains("Array<Int>") == true, "\(String(describing: list?.description))")
        }
    }
}
