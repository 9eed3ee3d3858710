import Foundation
import ObjectGraph

/// Defaults, transient attributes, and the typed errors of misuse.
extension AttributeScenarios {
    static let rules: [ConformanceScenario] = [
        ConformanceScenario("attributes.defaults.applyAtInsertAndPersist") { env in
            let context = env.newContext()
            let ids = try context.performAndWait {
                let chat = Chat(context: context)
                try checkEqual(chat.title, "Untitled", "Chat.title default")
                let named = Chat(context: context); named.title = "Lunch"
                let all = try context.insertObject(entityName: "AllTypes")
                try checkEqual(try all.value(forKey: "defaulted") as? Int64, 42, "AllTypes.defaulted default")
                try check(try all.value(forKey: "int32") == nil, "an optional attribute without default starts nil")
                let car = try context.insertObject(entityName: "Car")
                try car.setValue("c", forKey: "name")
                try checkEqual(try car.value(forKey: "doors") as? Int64, 4, "a sub-entity's own default")
                let truck = try context.insertObject(entityName: "Truck")
                try truck.setValue("t", forKey: "name")
                try checkEqual(try truck.value(forKey: "payload") as? Double, 0, "Truck.payload default")
                try checkEqual(try chat.committedValues(forKeys: ["title"]).count, 0, "a default is not a committed value before save")
                try context.save()
                return [chat.objectID, named.objectID, all.objectID, car.objectID]
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual((try fresh.existingObject(with: ids[0]) as! Chat).title, "Untitled", "the default was saved")
                try checkEqual((try fresh.existingObject(with: ids[1]) as! Chat).title, "Lunch", "an explicit value overrides the default")
                try checkEqual(try fresh.existingObject(with: ids[2]).value(forKey: "defaulted") as? Int64, 42, "AllTypes.defaulted after reopen")
                try checkEqual(try fresh.existingObject(with: ids[3]).value(forKey: "doors") as? Int64, 4, "Car.doors after reopen")
                let untitled = try fresh.count(for: FetchRequest<Chat>(predicate: .key("title") == "Untitled"))
                try checkEqual(untitled, 1, "the stored default is queryable")
            }
        },
        ConformanceScenario("attributes.transient.isNeverStored") { env in
            let context = env.newContext()
            let id = try context.performAndWait {
                let object = try context.insertObject(entityName: "AllTypes")
                try object.setValue("scratch value", forKey: "scratch")
                try object.setValue("kept", forKey: "string")
                try context.save()
                try checkEqual(try object.value(forKey: "scratch") as? String, "scratch value", "the saving context keeps its transient value")
                return object.objectID
            }
            let other = env.newContext()
            try other.performAndWait {
                let object = try other.existingObject(with: id)
                try checkEqual(try object.value(forKey: "string") as? String, "kept", "a stored value is shared")
                try check(try object.value(forKey: "scratch") == nil, "a transient value is not seen by another context")
                try object.setValue("changed only the transient", forKey: "scratch")
                try other.save()
            }
            try context.performAndWait {
                let matches = try context.count(for: FetchRequest<ManagedObject>(entityName: "AllTypes", predicate: .key("string") == "kept"))
                try checkEqual(matches, 1, "the stored row is still there")
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let object = try fresh.existingObject(with: id)
                try check(try object.value(forKey: "scratch") == nil, "the transient attribute is nil after reopen")
                try checkEqual(try object.value(forKey: "string") as? String, "kept", "the stored one is not")
            }
        },
        ConformanceScenario("attributes.errors.unknownKeyNamesEntityAndKey") { env in
            let context = env.newContext()
            try context.performAndWait {
                let object = try context.insertObject(entityName: "AllTypes")
                let read = try checkThrows(ObjectGraphError.self, "reading an unknown key") { _ = try object.value(forKey: "colour") }
                try checkEqual(read.code, .unknownKey, "code")
                try checkEqual(read.key, "colour", "the error names the key")
                try check(read.message.contains("AllTypes") && read.message.contains("colour"), "the message names entity and key: \(read.message)")
                let write = try checkThrows(ObjectGraphError.self, "setting an unknown key") { try object.setValue(1, forKey: "colour") }
                try checkEqual(write.code, .unknownKey, "code of a write")
                try check(write.message.contains("AllTypes") && write.message.contains("colour"), "the message names entity and key: \(write.message)")
                let student = Student(context: context)
                let typed = try checkThrows(ObjectGraphError.self, "an unknown key on a typed object") { _ = try student.value(forKey: "nickname") }
                try checkEqual(typed.code, .unknownKey, "code on a typed object")
                try check(typed.message.contains("Student") && typed.message.contains("nickname"), "the message names entity and key: \(typed.message)")
                let car = try context.insertObject(entityName: "Car")
                try car.setValue("inherited", forKey: "name")
                try checkEqual(try car.value(forKey: "name") as? String, "inherited", "an inherited attribute is a known key")
                let sibling = try checkThrows(ObjectGraphError.self, "a sibling sub-entity's attribute") { _ = try car.value(forKey: "payload") }
                try checkEqual(sibling.code, .unknownKey, "Car has no payload (Truck has)")
                try check(sibling.message.contains("Car"), "the message names the concrete entity: \(sibling.message)")
            }
        },
        ConformanceScenario("attributes.errors.wrongValueTypeLeavesValueUnchanged") { env in
            let context = env.newContext()
            try context.performAndWait {
                let object = try context.insertObject(entityName: "AllTypes")
                for (key, value) in sample { try object.setValue(value, forKey: key) }
                try context.save()
                let wrong: [(String, Any)] = [
                    ("int32", "12"), ("int16", Int(Int16.max) + 1), ("int32", Int64(Int32.min) - 1), ("int64", UInt64.max),
                    ("string", 5), ("bool", 1.5), ("date", "2024-01-01"), ("uuid", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"),
                    ("uri", "https://example.com"), ("data", "bytes"), ("double", "1.0"), ("decimal", "1.5"),
                    ("palette", "not a palette"), ("palette", 42),
                ]
                for (key, value) in wrong {
                    let error = try checkThrows(ObjectGraphError.self, "setting \(key) to \(type(of: value)) \(value)") { try object.setValue(value, forKey: key) }
                    try checkEqual(error.code, .wrongValueType, "code for \(key) = \(value)")
                    try checkEqual(error.key, key, "the error names the key")
                    try check(error.message.contains("AllTypes"), "the message names the entity: \(error.message)")
                }
                try check(!object.hasChanges && !context.hasChanges, "rejected values change nothing")
                try checkSample(object)
                let student = Student(context: context); student.name = "s"
                let tag = Tag(context: context); tag.label = "t"
                let notObject = try checkThrows(ObjectGraphError.self, "a string for a to-one") { try student.setValue("Math", forKey: "schoolClass") }
                try checkEqual(notObject.code, .wrongValueType, "a to-one needs an object")
                let wrongEntity = try checkThrows(ObjectGraphError.self, "a Tag for a SchoolClass relationship") { try student.setValue(tag, forKey: "schoolClass") }
                try checkEqual(wrongEntity.code, .wrongDestination, "a to-one needs an object of its destination entity")
                try check(student.schoolClass == nil, "the relationship is unchanged")
            }
        },
        ConformanceScenario("attributes.errors.abstractEntityCannotBeInserted") { env in
            let context = env.newContext()
            try context.performAndWait {
                let error = try checkThrows(ObjectGraphError.self, "inserting the abstract Vehicle") { _ = try context.insertObject(entityName: "Vehicle") }
                try checkEqual(error.code, .abstractEntity, "code")
                try check(error.message.contains("Vehicle") && error.message.contains("Car") && error.message.contains("Truck"), "the message names the entity and its sub-entities: \(error.message)")
                guard let vehicle = context.model.entity(named: "Vehicle") else { throw ScenarioFailure(message: "no Vehicle entity", file: #filePath, line: #line) }
                let loose = ManagedObject(entity: vehicle, insertInto: nil)
                let direct = try checkThrows(ObjectGraphError.self, "insert(_:) of a Vehicle object") { try context.insert(loose) }
                try checkEqual(direct.code, .abstractEntity, "code of insert(_:)")
                let unknown = try checkThrows(ObjectGraphError.self, "an entity the model lacks") { _ = try context.insertObject(entityName: "Spaceship") }
                try checkEqual(unknown.code, .unknownEntity, "code for an unknown entity")
                try check(!context.hasChanges && context.insertedObjects.isEmpty, "nothing was inserted")
                _ = try context.insertObject(entityName: "Car")
                try checkEqual(context.insertedObjects.count, 1, "a concrete sub-entity can be")
            }
        },
    ]
}
