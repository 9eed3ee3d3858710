import Foundation
import ObjectGraph

/// What a context promises: one object per record (uniquing), change tracking, changed and
/// committed values, rollback, reset, refresh, object IDs, and the weak registry.
/// Lifecycle hooks, notifications and several contexts are in ContextScenarios+Events.swift;
/// what a save calls and what detached objects report, in ContextScenarios+Lifecycle.swift.
enum ContextScenarios {
    static let all: [ConformanceScenario] = core + events + lifecycle + refresh + refreshEvents + changeEvents + discardEvents + transients + committedMembers

    static let core: [ConformanceScenario] = [
        ConformanceScenario("context.uniquing.oneInstancePerRecord") { env in
            let setup = env.newContext()
            let (adaID, mathID) = try setup.performAndWait {
                let math = SchoolClass(context: setup); math.title = "Math"
                let ada = Student(context: setup); ada.name = "Ada"; ada.schoolClass = math
                let bob = Student(context: setup); bob.name = "Bob"; bob.schoolClass = math
                try setup.save()
                return (ada.objectID, math.objectID)
            }
            let context = env.newContext()
            try context.performAndWait {
                let first = try context.fetch(FetchRequest<Student>(predicate: .key("name") == "Ada"))
                let second = try context.fetch(FetchRequest<Student>(sortKeys: [SortKey("name")]))
                try checkEqual(first.count, 1, "one Ada")
                try checkEqual(second.count, 2, "two students")
                let ada = first[0]
                try check(second[0] === ada, "two fetches return the same instance for Ada")
                try check(context.object(with: adaID) === ada, "object(with:) returns the fetched instance")
                try check(try context.existingObject(with: adaID) === ada, "existingObject(with:) returns the fetched instance")
                try check(context.registeredObject(for: adaID) === ada, "registeredObject(for:) returns it")
                let math = context.object(with: mathID)
                try check(ada.schoolClass === math, "traversing a to-one reaches the registered instance")
                try check(second[1].schoolClass === math, "from both students")
                let students = (math as! SchoolClass).students
                try check(students.contains { $0 === ada } && students.contains { $0 === second[1] }, "the to-many holds the fetched instances")
                try checkEqual(context.registeredObjects.filter { $0.objectID == adaID }.count, 1, "one registered object for the record")
            }
        },
        ConformanceScenario("context.changeTracking.lifecycle") { env in
            let context = env.newContext()
            try context.performAndWait {
                try check(!context.hasChanges, "a new context has no changes")
                let a = Tag(context: context); a.label = "a"
                let b = Tag(context: context); b.label = "b"
                try checkEqual(context.insertedObjects, [a, b], "insertedObjects after two inserts")
                try check(context.updatedObjects.isEmpty && context.deletedObjects.isEmpty, "nothing updated or deleted")
                try check(context.hasChanges && a.isInserted && a.hasChanges, "inserted objects are changes")
                try context.save()
                try check(!context.hasChanges, "no changes after save")
                try check(context.insertedObjects.isEmpty && !a.isInserted && !a.hasChanges, "no inserted objects after save")
                a.label = "a"
                try check(!a.isUpdated && !context.hasChanges, "setting the same value is no change")
                a.label = "a2"
                try checkEqual(context.updatedObjects, [a], "updatedObjects after a change")
                try check(a.isUpdated && context.hasChanges, "a is updated")
                context.delete(b)
                try checkEqual(context.deletedObjects, [b], "deletedObjects after a delete")
                try check(b.isDeleted && !b.isUpdated, "b is deleted")
                try checkEqual(context.updatedObjects, [a], "a still updated")
                try context.save()
                try check(!context.hasChanges, "no changes after the second save")
                try check(context.updatedObjects.isEmpty && context.deletedObjects.isEmpty, "sets emptied by save")
                try check(!a.isUpdated && !b.isDeleted, "flags cleared")
                try check(b.managedObjectContext == nil, "a deleted and saved object leaves its context")
                try check(a.managedObjectContext === context, "a saved object stays")
                try checkEqual(try context.count(for: FetchRequest<Tag>()), 1, "one tag left")
            }
        },
        ConformanceScenario("context.changeTracking.insertThenDeleteLeavesNothing") { env in
            let context = env.newContext()
            try context.performAndWait {
                let saved = Tag(context: context); saved.label = "kept"
                try context.save()
                let temp = Tag(context: context); temp.label = "gone"
                context.delete(temp)
                try context.processPendingChanges()
                try check(!context.insertedObjects.contains(temp), "a deleted insert is not inserted")
                try check(!context.deletedObjects.contains(temp), "and not deleted either: it never reached the store")
                try check(!context.hasChanges, "inserting then deleting leaves no changes")
                try context.save()
                try checkEqual(try context.fetch(FetchRequest<Tag>()).map(\.label), ["kept"], "the store never saw it")
            }
        },
        ConformanceScenario("context.changedAndCommittedValues") { env in
            let context = env.newContext()
            try context.performAndWait {
                let math = SchoolClass(context: context); math.title = "Math"
                let s = Student(context: context); s.name = "Ada"; s.age = 36
                try checkEqual(try s.committedValues(forKeys: nil).count, 0, "a new object has no committed values")
                try context.save()
                try checkEqual(try s.changedValues().count, 0, "no changed values after save")
                s.name = "Ada L."
                s.schoolClass = math
                let changed = try s.changedValues()
                try checkEqual(Set(changed.keys), ["name", "schoolClass"], "changed keys")
                try checkEqual((changed["name"] ?? nil) as? String, "Ada L.", "changed name")
                try check(((changed["schoolClass"] ?? nil) as? ManagedObject) === math, "changed to-one is the new destination")
                let committed = try s.committedValues(forKeys: ["name", "age", "schoolClass"])
                try checkEqual((committed["name"] ?? nil) as? String, "Ada", "committed name")
                try checkEqual((committed["age"] ?? nil) as? Int64, 36, "committed age")
                try check(committed.keys.contains("schoolClass") && (committed["schoolClass"] ?? nil) == nil, "committed class is nil")
                try check(try math.changedValues().keys.contains("students"), "the inverse to-many is a changed value of the class")
                s.name = "Ada"
                try check(!(try s.changedValues().keys.contains("name")), "a value set back to its committed value is not a changed value")
                try context.save()
                try checkEqual((try s.committedValues(forKeys: ["name"])["name"] ?? nil) as? String, "Ada", "committed after the second save")
                try check(try s.changedValues().isEmpty, "nothing changed after the second save")
            }
        },
        ConformanceScenario("context.rollback.restoresValuesUndeletesDropsInserts") { env in
            let context = env.newContext()
            try context.performAndWait {
                let ada = Student(context: context); ada.name = "Ada"; ada.age = 36
                let bob = Student(context: context); bob.name = "Bob"
                try context.save()
                ada.name = "Changed"; ada.age = nil
                context.delete(bob)
                let newcomer = Student(context: context); newcomer.name = "New"
                try context.processPendingChanges()
                context.rollback()
                try check(!context.hasChanges, "no changes after rollback")
                try check(context.insertedObjects.isEmpty && context.updatedObjects.isEmpty && context.deletedObjects.isEmpty, "empty change sets")
                try checkEqual(ada.name, "Ada", "name restored")
                try checkEqual(ada.age, 36, "age restored")
                try check(!ada.isUpdated, "ada not updated")
                try check(!bob.isDeleted && bob.managedObjectContext === context, "bob un-deleted")
                try checkEqual(bob.name, "Bob", "bob readable")
                try check(newcomer.managedObjectContext == nil, "the insert left the context")
                try check(!context.registeredObjects.contains(newcomer), "and is not registered")
                let names = try context.fetch(FetchRequest<Student>(sortKeys: [SortKey("name")])).map(\.name)
                try checkEqual(names, ["Ada", "Bob"], "fetch after rollback")
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let names = try fresh.fetch(FetchRequest<Student>(sortKeys: [SortKey("name")])).map(\.name)
                try checkEqual(names, ["Ada", "Bob"], "the store never saw the rolled-back changes")
            }
        },
        ConformanceScenario("context.rollback.restoresRelationshipsAndCascades") { env in
            let context = env.newContext()
            try context.performAndWait {
                let math = SchoolClass(context: context); math.title = "Math"
                let ada = Student(context: context); ada.name = "Ada"; ada.schoolClass = math
                let address = Address(context: context); address.street = "1 Loop"; ada.address = address
                try context.save()
                let art = SchoolClass(context: context); art.title = "Art"
                ada.schoolClass = art
                try checkEqual(math.students.count, 0, "moved out of math")
                context.delete(ada)
                try context.processPendingChanges()
                try check(address.isDeleted, "the cascade reached the address")
                context.rollback()
                try check(!ada.isDeleted && !address.isDeleted, "both un-deleted")
                try check(ada.schoolClass === math, "to-one restored")
                try check(math.students.contains(ada), "inverse to-many restored")
                try check(ada.address === address && address.student === ada, "one-to-one restored both ways")
                try check(art.managedObjectContext == nil, "the inserted class is gone")
            }
        },
        ConformanceScenario("context.reset.detachesObjects") { env in
            let context = env.newContext()
            try context.performAndWait {
                let ada = Student(context: context); ada.name = "Ada"
                try context.save()
                let id = ada.objectID
                ada.name = "unsaved"
                let newcomer = Student(context: context); newcomer.name = "New"
                context.reset()
                try check(!context.hasChanges, "no changes after reset")
                try check(context.registeredObjects.isEmpty, "no registered objects after reset")
                try check(ada.managedObjectContext == nil && newcomer.managedObjectContext == nil, "held objects are detached")
                let error = try checkThrows(ObjectGraphError.self, "reading a detached object") { _ = try ada.value(forKey: "name") }
                try checkEqual(error.code, .objectInaccessible, "error code")
                let setError = try checkThrows(ObjectGraphError.self, "writing a detached object") { try ada.setValue("x", forKey: "name") }
                try checkEqual(setError.code, .objectInaccessible, "error code of a write")
                let again = try context.existingObject(with: id) as! Student
                try check(again !== ada, "the record gets a new instance")
                try checkEqual(again.name, "Ada", "with the stored value, not the discarded change")
                try checkEqual(try context.count(for: FetchRequest<Student>()), 1, "the unsaved insert is gone")
            }
        },
        ConformanceScenario("context.refresh.withoutMergeDiscardsChanges") { env in
            let context = env.newContext()
            var held: Student?
            let id = try context.performAndWait {
                let ada = Student(context: context); ada.name = "Ada"; ada.age = 36
                try context.save()
                held = ada
                return ada.objectID
            }
            let other = env.newContext()
            try other.performAndWait {
                let ada = try other.existingObject(with: id) as! Student
                ada.age = 37
                try other.save()
            }
            try context.performAndWait {
                guard let ada = held else { throw ScenarioFailure(message: "the held object is gone", file: #filePath, line: #line) }
                try check(context.object(with: id) === ada, "the held object is still registered")
                try checkEqual(ada.age, 36, "before refresh the context keeps the values it loaded")
                ada.name = "unsaved"
                context.refresh(ada, mergeChanges: false)
                try check(ada.isFault, "refresh without merge turns the object into a fault")
                try check(!ada.hasChanges && !context.hasChanges, "and drops its changes")
                try check(context.updatedObjects.isEmpty, "no updated objects")
                try checkEqual(ada.name, "Ada", "the name is the stored one")
                try checkEqual(ada.age, 37, "and the other context's save is visible")
                try check(context.object(with: id) === ada, "the same instance, refreshed")
            }
        },
        ConformanceScenario("context.refresh.withMergeKeepsOwnChanges") { env in
            let context = env.newContext()
            var held: Student?
            let id = try context.performAndWait {
                let ada = Student(context: context); ada.name = "Ada"; ada.age = 36
                try context.save()
                ada.name = "Ada L."
                held = ada
                return ada.objectID
            }
            let other = env.newContext()
            try other.performAndWait {
                let ada = try other.existingObject(with: id) as! Student
                ada.age = 40
                try other.save()
            }
            try context.performAndWait {
                guard let ada = held else { throw ScenarioFailure(message: "the held object is gone", file: #filePath, line: #line) }
                try checkEqual(ada.age, 36, "before refresh the context keeps the values it loaded")
                context.refresh(ada, mergeChanges: true)
                try check(!ada.isFault, "a merged object with changes stays loaded")
                try check(ada.isUpdated && context.updatedObjects.contains(ada), "and keeps its changes")
                try checkEqual(ada.name, "Ada L.", "own change kept")
                try checkEqual(ada.age, 40, "other context's change merged in")
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let ada = try fresh.existingObject(with: id) as! Student
                try checkEqual(ada.name, "Ada L.", "own change saved")
                try checkEqual(ada.age, 40, "merged value saved")
            }
        },
        ConformanceScenario("context.objectIDs.temporaryBecomePermanentAtSave") { env in
            let context = env.newContext()
            let (uri, classID) = try context.performAndWait {
                let math = SchoolClass(context: context); math.title = "Math"
                let ada = Student(context: context); ada.name = "Ada"; ada.schoolClass = math
                let temporary = ada.objectID
                try check(temporary.isTemporary, "a new object has a temporary ID")
                try checkEqual(temporary.entityName, "Student", "entity name of the ID")
                try check(env.container.coordinator.objectID(forURI: temporary.uriRepresentation) == nil, "a temporary URI does not resolve")
                try context.save()
                let permanent = ada.objectID
                try check(!permanent.isTemporary && permanent != temporary, "the save gives a permanent ID")
                try check(!math.objectID.isTemporary, "every inserted object gets one")
                try check(context.object(with: permanent) === ada, "the object is registered under its new ID")
                try check(context.registeredObject(for: temporary) == nil, "and no longer under the temporary one")
                try checkEqual(ada.schoolClass?.objectID, math.objectID, "relationships follow the new IDs")
                try checkEqual(ObjectID(uri: permanent.uriRepresentation), permanent, "the URI parses back")
                return (permanent.uriRepresentation, math.objectID)
            }
            try env.reopen()
            guard let id = env.container.coordinator.objectID(forURI: uri) else {
                throw ScenarioFailure(message: "the permanent URI \(uri) does not resolve after reopen", file: #filePath, line: #line)
            }
            let fresh = env.newContext()
            try fresh.performAndWait {
                let ada = try fresh.existingObject(with: id) as! Student
                try checkEqual(ada.name, "Ada", "the URI names the record")
                try checkEqual(ada.schoolClass?.objectID, classID, "its relationship")
            }
        },
        ConformanceScenario("context.objectIDs.obtainPermanentIDsBeforeSave") { env in
            let context = env.newContext()
            let other = env.newContext()
            let id = try context.performAndWait {
                let ada = Student(context: context); ada.name = "Ada"
                let math = SchoolClass(context: context); math.title = "Math"
                ada.schoolClass = math
                try context.obtainPermanentIDs(for: [ada])
                let id = ada.objectID
                try check(!id.isTemporary, "obtainPermanentIDs gives a permanent ID")
                try check(ada.isInserted && context.insertedObjects.contains(ada), "the object is still an unsaved insert")
                try check(context.object(with: id) === ada, "registered under the new ID")
                try check(math.students.contains(ada), "the inverse holds the object under its new ID")
                try other.performAndWait {
                    let error = try checkThrows(ObjectGraphError.self, "another context before the save") { _ = try other.existingObject(with: id) }
                    try checkEqual(error.code, .objectNotFound, "error code")
                }
                try context.save()
                try checkEqual(ada.objectID, id, "the save keeps the obtained ID")
                return id
            }
            let third = env.newContext()
            try third.performAndWait {
                let ada = try third.existingObject(with: id) as! Student
                try checkEqual(ada.name, "Ada", "another context finds it after the save")
                try checkEqual(ada.schoolClass?.title, "Math", "with its relationship")
            }
        },
        ConformanceScenario("context.registeredObjects.heldWeaklyUnlessChanged") { env in
            let setup = env.newContext()
            let ids = try setup.performAndWait {
                let tags = (0..<4).map { i -> Tag in let t = Tag(context: setup); t.label = "t\(i)"; return t }
                try setup.save()
                return tags.map(\.objectID)
            }
            let context = env.newContext()
            var kept: Tag?
            try context.performAndWait {
                let tags = try context.fetch(FetchRequest<Tag>(sortKeys: [SortKey("label")]))
                try checkEqual(tags.map(\.objectID), ids, "fetched all")
                for tag in tags { _ = tag.label }
                tags[1].label = "changed"
                kept = tags[2]
            }
            try context.performAndWait {
                try check(context.registeredObject(for: ids[0]) == nil, "an unchanged object the app released is gone")
                try check(context.registeredObject(for: ids[3]) == nil, "another one too")
                try check(context.registeredObject(for: ids[1]) != nil, "a changed object stays although the app released it")
                try check(context.registeredObject(for: ids[2]) === kept, "an object the app holds stays")
                try checkEqual(Set(context.registeredObjects.map(\.objectID)), [ids[1], ids[2]], "registeredObjects")
                try context.save()
                kept = nil
            }
            try context.performAndWait {
                try check(context.registeredObject(for: ids[1]) == nil, "once saved and released, the changed object goes too")
                try check(context.registeredObjects.isEmpty, "nothing left")
                let tag = try context.existingObject(with: ids[1]) as! Tag
                try checkEqual(tag.label, "changed", "its change was saved")
            }
        },
    ]
}
