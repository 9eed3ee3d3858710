import Foundation
import ObjectGraph

/// Inaccessible faults: an object whose record another context deleted after this context
/// got it. As in Core Data (`shouldDeleteInaccessibleFaults`, on by default), reading one turns
/// it into a deleted object with empty values — the app keeps running — and the next save
/// discards it; with the setting off the read fails with `objectNotFound`. (Before 2026-11-27
/// every such read failed: typed accessors stopped the process.)
extension FaultingScenarios {
    static let inaccessible: [ConformanceScenario] = [
        ConformanceScenario("faulting.inaccessible.readTurnsTheFaultIntoADeletedObject") { env in
            let (adaID, bobID) = try seedAdaAndBob(env)
            let context = env.newContext()
            let ada = context.performAndWait { context.object(with: adaID) as! Student }
            try deleteElsewhere(env, adaID)
            try context.performAndWait {
                try check(!context.hasChanges, "nothing changed before the read")
                try checkEqual(ada.name, "", "a required string reads empty")
                try checkEqual(ada.age, nil, "an optional attribute reads nil")
                try check(ada.isDeleted && context.deletedObjects.contains(ada), "the object is deleted in this context")
                try check(context.hasChanges, "its deletion is a change")
                try check(ada.schoolClass == nil && ada.address == nil, "to-ones are empty")
                try check(ada.tags.isEmpty && ada.subjects.isEmpty, "to-manys are empty")
                try check(try ada.value(forKey: "name") == nil, "key-value reads give nil")
                try check(try ada.committedValues().values.allSatisfy { $0 == nil || ($0 as? Set<ManagedObject>)?.isEmpty == true }, "no committed values (to-manys without members)")
                // Exempt from validation (its required name is nil), and nothing is stored for it.
                let carl = Student(context: context); carl.name = "Carl"
                try context.save()
                try check(!context.hasChanges, "the save discarded it")
                try check(context.registeredObject(for: adaID) == nil, "it left the context")
                try checkEqual(carl.objectID.isTemporary, false, "the save stored the rest")
            }
            let reader = env.newContext()
            try reader.performAndWait {
                let names = try reader.fetch(FetchRequest<Student>()).map(\.name).sorted()
                try checkEqual(names, ["Bob", "Carl"], "the store holds the other students")
                try checkEqual((try reader.existingObject(with: bobID) as! Student).age, 41, "Bob untouched")
                let error = try checkThrows(ObjectGraphError.self, "existingObject for the deleted record") { _ = try reader.existingObject(with: adaID) }
                try checkEqual(error.code, .objectNotFound, "existingObject still throws for a missing record")
            }
        },
        ConformanceScenario("faulting.inaccessible.reachedThroughARelationship") { env in
            let setup = env.newContext()
            let (messageID, authorID) = try setup.performAndWait {
                let chat = Chat(context: setup); chat.title = "c"
                let alice = Member(context: setup); alice.name = "alice"
                let message = Message(context: setup); message.text = "hi"; message.chat = chat; message.author = alice
                try setup.save()
                return (message.objectID, alice.objectID)
            }
            let context = env.newContext()
            let message = try context.performAndWait {
                let message = try context.existingObject(with: messageID) as! Message
                try checkEqual(message.text, "hi", "loaded")
                return message
            }
            try deleteElsewhere(env, authorID)
            try context.performAndWait {
                // This context still names the author (no merge): reaching it finds no record.
                guard let author = message.author else { throw ScenarioFailure(message: "the unmerged message still names its author", file: #filePath, line: #line) }
                try checkEqual(author.name, "", "the vanished author reads empty")
                try check(author.isDeleted && author.messages.isEmpty, "the author is deleted and relates to nothing")
                try check(!message.isDeleted && !message.isUpdated, "the message is untouched")
                try context.save()
                try check(!context.hasChanges, "saved")
            }
            let reader = env.newContext()
            try reader.performAndWait {
                let stored = try reader.existingObject(with: messageID) as! Message
                try check(stored.author == nil && stored.text == "hi", "the message keeps its text and no author")
            }
        },
        ConformanceScenario("faulting.inaccessible.refusedWhenTheSettingIsOff") { env in
            let (adaID, _) = try seedAdaAndBob(env)
            let context = env.newContext()
            let ada = context.performAndWait {
                context.shouldDeleteInaccessibleFaults = false
                return context.object(with: adaID) as! Student
            }
            try checkEqual(context.shouldDeleteInaccessibleFaults, false, "read back off the queue")
            try deleteElsewhere(env, adaID)
            try context.performAndWait {
                let error = try checkThrows(ObjectGraphError.self, "reading an inaccessible fault") { _ = try ada.value(forKey: "name") }
                try checkEqual(error.code, .objectNotFound, "the error")
                try check(!ada.isDeleted && !context.hasChanges, "nothing was deleted")
                // Turned on again, the next read deletes it.
                context.shouldDeleteInaccessibleFaults = true
                try checkEqual(ada.name, "", "read with the setting on")
                try check(ada.isDeleted, "deleted now")
            }
        },
        ConformanceScenario("faulting.inaccessible.rollbackMakesItAFaultAgain") { env in
            let (adaID, _) = try seedAdaAndBob(env)
            let context = env.newContext()
            let ada = context.performAndWait { context.object(with: adaID) as! Student }
            try deleteElsewhere(env, adaID)
            try context.performAndWait {
                _ = ada.name
                try check(ada.isDeleted, "deleted by the read")
                context.rollback()
                try check(!ada.isDeleted && ada.isFault && !context.hasChanges, "rollback leaves a fault and no changes")
                try checkEqual(ada.age, nil, "read again")
                try check(ada.isDeleted && context.deletedObjects.contains(ada), "deleted again by the next read")
                context.refresh(ada, mergeChanges: false)
                try checkEqual(ada.name, "", "read after a refresh")
                try check(ada.isDeleted, "still deleted after a refresh")
                try context.save()
                try check(!context.hasChanges && context.registeredObject(for: adaID) == nil, "a save after the refresh discards it")
                let again = context.object(with: adaID) as! Student
                try checkEqual(again.age, nil, "a new fault for the ID")
                try check(again.isDeleted, "is deleted by its read too")
                context.reset()
                try check(!context.hasChanges, "reset discards it")
            }
        },
        ConformanceScenario("faulting.inaccessible.undoDoesNotBringItBack") { env in
            // An undo group recorded the object before another context deleted its record:
            // undo put it back as a live, unchanged object with its old values (no record
            // behind it), and the save passed over it in silence.
            let (adaID, _) = try seedAdaAndBob(env)
            let context = env.newContext()
            let ada = try context.performAndWait {
                context.undoStack = ContextUndoStack()
                let ada = try context.existingObject(with: adaID) as! Student
                ada.age = 31
                try context.processPendingChanges()
                context.refresh(ada, mergeChanges: false)  // a fault again, the group kept
                return ada
            }
            try deleteElsewhere(env, adaID)
            try context.performAndWait {
                try checkEqual(ada.name, "", "read as a deleted object")
                try context.undo()
                try check(ada.isDeleted && context.deletedObjects.contains(ada), "still deleted after undo")
                try checkEqual(ada.age, nil, "with empty values")
                try context.redo()
                try check(ada.isDeleted, "and after redo")
                try context.save()
                try check(!context.hasChanges && context.registeredObject(for: adaID) == nil, "the save discards it")
            }
        },
        ConformanceScenario("faulting.inaccessible.batchedFetchReadsARecordDeletedMeanwhile") { env in
            // A batched fetch holds IDs; a record deleted before its batch loads is read as a
            // deleted object, and the iteration goes on (it stopped the process before).
            let (adaID, _) = try seedAdaAndBob(env)
            let context = env.newContext()
            var request = FetchRequest<Student>(sortKeys: [SortKey("name")])
            request.fetchBatchSize = 1
            let results = try context.performAndWait { try context.fetchBatched(request) }
            try deleteElsewhere(env, adaID)
            try context.performAndWait {
                try checkEqual(results.count, 2, "the IDs fetched before the deletion")
                try checkEqual(results.map(\.name), ["", "Bob"], "Ada reads empty, Bob as stored")
                try check(results[0].isDeleted && !results[1].isDeleted, "only Ada is deleted")
                try context.save()
                try check(!context.hasChanges, "the save discards her")
            }
        },
        ConformanceScenario("faulting.inaccessible.inAChildContext") { env in
            // The child reads through its parent: a record gone from the store is inaccessible
            // there too. The child's save hands the parent nothing for it.
            let (adaID, _) = try seedAdaAndBob(env)
            let parent = env.newContext()
            let child = parent.newChildContext(name: "child")
            let ada = child.performAndWait { child.object(with: adaID) as! Student }
            try deleteElsewhere(env, adaID)
            try child.performAndWait {
                try checkEqual(ada.name, "", "the child reads it empty")
                try check(ada.isDeleted && child.hasChanges, "deleted in the child")
                try child.save()
                try check(!child.hasChanges, "the child's save discarded it")
            }
            try parent.performAndWait {
                try check(!parent.hasChanges, "the parent got nothing to store")
                try parent.save()
            }
            let reader = env.newContext()
            try reader.performAndWait {
                try checkEqual(try reader.fetch(FetchRequest<Student>()).map(\.name), ["Bob"], "the store is as the other context left it")
            }
        },
        ConformanceScenario("faulting.inaccessible.objectsLetGoReadEmptyThroughTypedAccessors") { env in
            // A list screen holds messages (one read, one still a fault) when a background
            // import deletes their chat and the view merges it: the rows redraw before the
            // list drops them. Typed reads of objects their context let go (merged deletes,
            // its own saved deletes, a reset) answer no destinations, and a fault's attributes
            // read empty (a loaded object's read what it held); a to-one or to-many read, and
            // an attribute read of a fault, stopped the process.
            let setup = env.newContext()
            let (chatID, messageIDs) = try setup.performAndWait {
                let chat = Chat(context: setup); chat.title = "c"
                let messages = (0..<2).map { i in
                    let message = Message(context: setup); message.text = "m\(i)"; message.chat = chat; return message
                }
                try setup.save()
                return (chat.objectID, messages.map(\.objectID))
            }
            let view = env.newContext("view")
            view.automaticallyMergesChangesFromParent = true
            let (chat, read, fault) = try view.performAndWait {
                let chat = try view.existingObject(with: chatID) as! Chat
                let read = try view.existingObject(with: messageIDs[0]) as! Message
                try checkEqual(read.chat, chat, "loaded")
                return (chat, read, view.object(with: messageIDs[1]) as! Message)
            }
            try deleteElsewhere(env, chatID)
            try view.performAndWait {
                try check(read.managedObjectContext == nil && fault.managedObjectContext == nil, "the merge let the cascade's objects go")
                try check(read.chat == nil && fault.chat == nil, "their to-one reads no destination")
                try check(chat.messages.isEmpty && chat.members.isEmpty && chat.$messages.count == 0, "the chat's to-manys read no members")
                try checkEqual(fault.text, "", "a fault's required string reads empty")
                try checkEqual(fault.sentAt, nil, "a fault's optional attribute reads nil")
                try check(!view.hasChanges, "nothing to save")
            }
            // The context's own saved delete, and a reset, let objects go the same way.
            let own = env.newContext()
            let (ownMessage, kept) = try own.performAndWait {
                let message = Message(context: own); message.text = "own"
                let chat = Chat(context: own); chat.title = "own"; message.chat = chat
                let kept = Message(context: own); kept.text = "kept"; kept.chat = chat
                try own.save()
                own.delete(message)
                try own.save()
                return (message, own.object(with: kept.objectID) as! Message)
            }
            try own.performAndWait {
                try check(ownMessage.chat == nil, "a deleted and saved object's to-one reads no destination")
                own.refresh(kept, mergeChanges: false)
                own.reset()
                try check(kept.isFault && kept.text == "" && kept.chat == nil, "a fault of a reset context reads empty")
            }
        },
    ]

    /// Stores Ada (30, tagged) and Bob (41); their IDs.
    static func seedAdaAndBob(_ env: ScenarioEnvironment) throws -> (ada: ObjectID, bob: ObjectID) {
        let setup = env.newContext()
        return try setup.performAndWait {
            let ada = Student(context: setup); ada.name = "Ada"; ada.age = 30
            let bob = Student(context: setup); bob.name = "Bob"; bob.age = 41
            let tag = Tag(context: setup); tag.label = "t"
            ada.tags = [tag]
            try setup.save()
            return (ada.objectID, bob.objectID)
        }
    }

    /// Deletes the record `id` through a context of its own.
    private static func deleteElsewhere(_ env: ScenarioEnvironment, _ id: ObjectID) throws {
        let other = env.newContext()
        try other.performAndWait {
            other.delete(try other.existingObject(with: id))
            try other.save()
        }
    }
}
