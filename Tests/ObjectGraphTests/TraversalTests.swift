import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Testing

@Suite("Traversal")
struct TraversalTests {
    /// Students each taking the same few subjects, saved and read back in a fresh context.
    static func school(students: Int, subjects: Int) throws -> PersistentContainer {
        let model = try ManagedObjectModel { m in
            m.entity("Student") { e in
                e.attribute("name", .string)
                e.toMany("subjects", "Subject", inverse: "students")
            }
            m.entity("Subject") { e in
                e.attribute("name", .string)
                e.toMany("students", "Student", inverse: "subjects")
            }
        }
        let container = try PersistentContainer(model: model, stores: [.inMemory()])
        let writer = container.newBackgroundContext()
        try writer.performAndWait {
            let taught = try (0..<subjects).map { index in
                let subject = try writer.insertObject(entityName: "Subject")
                try subject.setValue("subject \(index)", forKey: "name")
                return subject
            }
            for index in 0..<students {
                let student = try writer.insertObject(entityName: "Student")
                try student.setValue("student \(index)", forKey: "name")
                for subject in taught { try student.add(subject, to: "subjects") }
            }
            try writer.save()
        }
        return container
    }

    @Test("objects reached through relationships stay alive while traversing, so each fault fires once")
    func reachedObjectsStayAlive() throws {
        let container = try Self.school(students: 200, subjects: 5)
        container.coordinator.rowCache.removeAll()
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let students = try context.fetch(FetchRequest<ManagedObject>(entityName: "Student"))
            context.resetStatistics()
            var names = Set<String>()
            for student in students {
                // Nothing here holds the subjects between students: only the context can.
                for subject in try student.value(forKey: "subjects") as! Set<ManagedObject> {
                    names.insert(try subject.value(forKey: "name") as! String)
                }
            }
            #expect(names.count == 5)
            #expect(context.statistics.faultsFired == 5, "one fault per subject, not one per visit")
            context.reset()
            #expect(context.registeredObjects.isEmpty, "reset lets go of the objects it kept alive")
        }
    }

    @Test("after another context's save, objects the context kept alive for traversals come back with the stored values; held ones keep theirs")
    func reachedObjectsLetGoAfterASave() throws {
        // More subjects than the cache of reached objects holds: the ring keeps the rest.
        let container = try Self.school(students: 20, subjects: 300)
        let context = container.newBackgroundContext()
        func traverse() throws -> (names: Set<String>, faults: Int) {
            try context.performAndWait {
                context.resetStatistics()
                var names = Set<String>()
                for student in try context.fetch(FetchRequest<ManagedObject>(entityName: "Student")) {
                    for subject in try student.value(forKey: "subjects") as! Set<ManagedObject> {
                        names.insert(try subject.value(forKey: "name") as! String)
                    }
                }
                return (names, context.statistics.faultsFired)
            }
        }
        let first = try traverse()
        #expect(first.names.count == 300 && first.faults == 300, "each subject fires once: \(first.faults)")
        let held = try context.performAndWait {
            try context.fetch(FetchRequest<ManagedObject>(entityName: "Subject", predicate: .key("name") == "subject 0"))[0]
        }
        let writer = container.newBackgroundContext()
        try writer.performAndWait {
            for subject in try writer.fetch(FetchRequest<ManagedObject>(entityName: "Subject")) {
                try subject.setValue("\(subject.value(forKey: "name") as! String) renamed", forKey: "name")
            }
            try writer.save()
        }
        let second = try traverse()
        #expect(second.names.count == 300)
        #expect(second.names.filter { !$0.hasSuffix(" renamed") } == ["subject 0"], "only the subject the app held keeps the name it read")
        #expect(second.faults == 299, "the others, let go of, fire once each again: \(second.faults)")
        let third = try traverse()
        #expect(third.faults == 0, "until the next save, the context keeps them: \(third.faults)")
        try context.performAndWait {
            context.refresh(held, mergeChanges: false)
            let name = try held.value(forKey: "name") as? String
            #expect(name == "subject 0 renamed", "until refreshed")
        }
    }

    @Test("objects reached through relationships loaded by an object the app holds keep the values they read, as Core Data's fired relationships keep them")
    func reachedFromHeldObjectsKeepTheirValues() throws {
        let container = try Self.school(students: 3, subjects: 5)
        let context = container.newBackgroundContext()
        let student = try context.performAndWait {
            let student = try context.fetch(FetchRequest<ManagedObject>(entityName: "Student"))[0]
            for subject in try student.value(forKey: "subjects") as! Set<ManagedObject> { _ = try subject.value(forKey: "name") }
            return student
        }
        let writer = container.newBackgroundContext()
        try writer.performAndWait {
            for subject in try writer.fetch(FetchRequest<ManagedObject>(entityName: "Subject")) {
                try subject.setValue("renamed", forKey: "name")
            }
            try writer.save()
        }
        try context.performAndWait {
            let subjects = try student.value(forKey: "subjects") as! Set<ManagedObject>
            let names = try subjects.map { try $0.value(forKey: "name") as! String }
            #expect(names.count == 5 && !names.contains("renamed"), "still the values read: \(names)")
            let fetched = try context.fetch(FetchRequest<ManagedObject>(entityName: "Subject"))
            #expect(Set(fetched.map(ObjectIdentifier.init)) == Set(subjects.map(ObjectIdentifier.init)), "the same objects, not new ones")
        }
    }
}
