import Foundation
import ObjectGraph

/// The optimistic-lock versions a store keeps, read from the store itself: the shared layer
/// takes a version below 0 for "no saved row" (an update of such an object is left out of the
/// save), so a store that handed one up would lose changes without a word. The built-in stores
/// refuse such a row as damage when they read it; these scenarios hold a new store to the same
/// numbering.
extension PersistenceScenarios {
    static let versions: [ConformanceScenario] = [
        ConformanceScenario("persistence.versionsStartAtOneAndCountSaves") { env in
            let context = env.newContext()
            let ids = try context.performAndWait { () throws -> [String: ObjectID] in
                let tag = Tag(context: context); tag.label = "honours"
                let logic = Subject(context: context); logic.name = "Logic"
                let ada = Student(context: context); ada.name = "Ada"
                try context.save()
                return ["tag": tag.objectID, "logic": logic.objectID, "ada": ada.objectID]
            }
            func storedVersions() throws -> [String: Int64?] {
                guard let store = env.container.coordinator.persistentStores.first else {
                    throw ScenarioFailure(message: "the container has no store", file: #filePath, line: #line)
                }
                return try ids.mapValues { try store.snapshot(for: $0)?.version }
            }
            try checkEqual(try storedVersions(), ["tag": 1, "logic": 1, "ada": 1], "a new row's version is 1")
            try context.performAndWait {
                let ada = try load(context, ids["ada"]!, as: Student.self)
                ada.age = 36
                try context.save()
            }
            try checkEqual(try storedVersions(), ["tag": 1, "logic": 1, "ada": 2], "an attribute saved counts one on its row alone")
            try context.performAndWait {
                let ada = try load(context, ids["ada"]!, as: Student.self)
                ada.$subjects.add(try load(context, ids["logic"]!, as: Subject.self))
                ada.$tags.add(try load(context, ids["tag"]!, as: Tag.self))
                try context.save()
            }
            // A many-to-many changes both ends' rows; a many-to-nil only its owner's.
            try checkEqual(try storedVersions(), ["tag": 1, "logic": 2, "ada": 3], "a membership saved counts one on each end it changes")
            try env.reopen()
            try checkEqual(try storedVersions(), ["tag": 1, "logic": 2, "ada": 3], "versions survive reopening")
            guard let store = env.container.coordinator.persistentStores.first else {
                throw ScenarioFailure(message: "the reopened container has no store", file: #filePath, line: #line)
            }
            for name in ["Tag", "Subject", "Student"] {
                guard let entity = env.model.entity(named: name) else {
                    throw ScenarioFailure(message: "the model has no \(name)", file: #filePath, line: #line)
                }
                let rows = try store.fetch(StoreFetchRequest(entity: entity, resultType: .snapshots)).snapshots
                try check(!rows.isEmpty && rows.allSatisfy { $0.version >= 1 }, "every fetched \(name) row has a version of at least 1: \(rows.map(\.version))")
            }
        },
    ]
}
