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
}
