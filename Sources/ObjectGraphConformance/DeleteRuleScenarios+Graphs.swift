import Foundation
import ObjectGraph
import OrderedCollections

/// Delete rules on graph shapes: a required inverse, the chat graph, inheritance, ordered
/// relationships, cycles and trees, reflexive relationships, unsaved objects, and cascades
/// that reach objects deleted already.
extension DeleteRuleScenarios {
    static let graphs: [ConformanceScenario] = [
        ConformanceScenario("deleteRules.nullify.requiredInverseFailsValidation") { env in
            // Folder.documents nullifies Document.folder, which is required: the delete is
            // refused at save with 1570 on each document, and nothing reaches the store.
            let context = env.newContext()
            let (folderID, documentIDs) = try context.performAndWait {
                let folder = try makeObject(context, "Folder", "f")
                let d1 = try makeObject(context, "Document", "d1", key: "title")
                let d2 = try makeObject(context, "Document", "d2", key: "title")
                try folder.setValue([d1, d2], forKey: "documents")
                try context.save()
                return (folder.objectID, Set([d1.objectID, d2.objectID]))
            }
            try context.performAndWait {
                context.delete(try context.existingObject(with: folderID))
                try context.processPendingChanges()
                for id in documentIDs {
                    let document = try context.existingObject(with: id)
                    try check(!document.isDeleted, "nullify keeps the document")
                    try check(try toOne(document, "folder") == nil, "the document's folder is nullified")
                }
                let error = try checkThrows(ValidationError.self, "saving documents without their required folder") { try context.save() }
                try checkEqual(error.violations.count, 2, "one violation per document: \(error)")
                try check(error.violations.allSatisfy { $0.code == .missingMandatoryProperty && $0.key == "folder" }, "1570 on folder: \(error)")
                try checkEqual(Set(error.violations.map(\.objectID)), documentIDs, "the violations name the documents")
                try check(!error.contains(.relationshipDeniedDelete), "no deny is involved")
            }
            let second = env.newContext()
            try second.performAndWait {
                try checkEqual(try countOf(second, "Folder"), 1, "the folder is still stored")
                for id in documentIDs {
                    try checkEqual(try toOne(second.existingObject(with: id), "folder")?.objectID, folderID, "the stored document keeps its folder")
                }
            }
            try context.performAndWait {
                // Fix it: move one document to another folder, delete the other.
                let documents = try documentIDs.map { try context.existingObject(with: $0) }.sorted { try name($0, key: "title")! < name($1, key: "title")! }
                try documents[0].setValue(try makeObject(context, "Folder", "g"), forKey: "folder")
                context.delete(documents[1])
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(try names(fetchAll(fresh, "Folder")), ["g"], "folders after reopen")
                let document = try fetchOne(fresh, "Document", "d1", key: "title")
                try checkEqual(try name(toOne(document, "folder")), "g", "d1.folder after reopen")
                try checkEqual(try countOf(fresh, "Document"), 1, "documents after reopen")
            }
        },
        ConformanceScenario("deleteRules.chat.cascadesMessagesAndNullifiesMembers") { env in
            let context = env.newContext()
            try context.performAndWait {
                let ann = Member(context: context); ann.name = "ann"
                let bob = Member(context: context); bob.name = "bob"
                let lunch = Chat(context: context); lunch.title = "lunch"
                let work = Chat(context: context); work.title = "work"
                lunch.members = [ann, bob]
                work.members = [ann]
                for (text, author) in [("hi", ann), ("hello", bob), ("pizza?", ann)] {
                    let message = Message(context: context); message.text = text
                    message.chat = lunch; message.author = author
                }
                let memo = Message(context: context); memo.text = "memo"; memo.chat = work; memo.author = ann
                try context.save()
            }
            try env.reopen()
            let second = env.newContext()
            try second.performAndWait {
                // Everything starts as a fault: the rules load what they need.
                let lunch = try second.fetch(FetchRequest<Chat>(predicate: .key("title") == "lunch"))[0]
                let doomed = lunch.messages
                try checkEqual(doomed.count, 3, "lunch has three messages")
                second.delete(lunch)
                try second.processPendingChanges()
                try check(doomed.allSatisfy(\.isDeleted), "the cascade deletes every message of the chat")
                let members = try second.fetch(FetchRequest<Member>(sortKeys: [SortKey("name")]))
                try checkEqual(members.map(\.name), ["ann", "bob"], "members are not deleted")
                try checkEqual(members[0].chats.map(\.title), ["work"], "ann.chats loses the deleted chat")
                try check(members[1].chats.isEmpty, "bob.chats loses the deleted chat")
                try checkEqual(members[0].messages.map(\.text), ["memo"], "ann.messages loses the cascaded messages")
                try check(members[1].messages.isEmpty, "bob.messages loses the cascaded message")
                try second.save()
            }
            try env.reopen()
            let third = env.newContext()
            try third.performAndWait {
                try checkEqual(try third.fetch(FetchRequest<Chat>()).map(\.title), ["work"], "chats after reopen")
                let messages = try third.fetch(FetchRequest<Message>())
                try checkEqual(messages.map(\.text), ["memo"], "messages after reopen")
                let members = try third.fetch(FetchRequest<Member>(sortKeys: [SortKey("name")]))
                try checkEqual(members[0].chats.map(\.title), ["work"], "ann.chats after reopen")
                try checkEqual(members[0].messages.map(\.text), ["memo"], "ann.messages after reopen")
                try check(members[1].chats.isEmpty && members[1].messages.isEmpty, "bob has no chats or messages after reopen")
            }
        },
        ConformanceScenario("deleteRules.cascade.reachesSubEntities") { env in
            // Garage.vehicles points at the abstract Vehicle; the cascade deletes cars and trucks.
            let context = env.newContext()
            try context.performAndWait {
                let full = try makeObject(context, "Garage", "full")
                let other = try makeObject(context, "Garage", "other")
                try full.setValue([try makeObject(context, "Car", "car"), try makeObject(context, "Truck", "truck")], forKey: "vehicles")
                try other.add(try makeObject(context, "Car", "kept"), to: "vehicles")
                try context.save()
            }
            try env.reopen()
            let second = env.newContext()
            try second.performAndWait {
                let full = try fetchOne(second, "Garage", "full")
                let vehicles = try toMany(full, "vehicles")
                second.delete(full)
                try second.processPendingChanges()
                try checkEqual(Set(vehicles.map(\.entity.name)), ["Car", "Truck"], "the garage held a car and a truck")
                try check(vehicles.allSatisfy(\.isDeleted), "the cascade deletes both sub-entities")
                try checkEqual(try countOf(second, "Vehicle"), 1, "vehicles (sub-entities included) in the context")
                try second.save()
            }
            try env.reopen()
            let third = env.newContext()
            try third.performAndWait {
                try checkEqual(try names(fetchAll(third, "Vehicle")), ["kept"], "vehicles after reopen")
                try checkEqual(try countOf(third, "Truck"), 0, "trucks after reopen")
                try checkEqual(try name(toOne(fetchOne(third, "Car", "kept"), "garage")), "other", "the kept car's garage")
            }
        },
        ConformanceScenario("deleteRules.cascade.orderedTracks") { env in
            try seedPlaylists(env)
            let second = env.newContext()
            try second.performAndWait {
                let mix = try second.fetch(FetchRequest<Playlist>(predicate: .key("name") == "mix"))[0]
                let tracks = mix.tracks
                try checkEqual(tracks.map(\.title), ["a", "b", "c"], "tracks before the delete")
                second.delete(mix)
                try second.processPendingChanges()
                try check(tracks.allSatisfy(\.isDeleted), "the cascade deletes every track")
                try second.save()
            }
            try env.reopen()
            let third = env.newContext()
            try third.performAndWait {
                try checkEqual(try third.fetch(FetchRequest<Track>()).map(\.title), ["kept"], "tracks after reopen")
                let other = try third.fetch(FetchRequest<Playlist>())
                try checkEqual(other.map(\.name), ["other"], "playlists after reopen")
                try checkEqual(other[0].tracks.map(\.title), ["kept"], "the other playlist keeps its track")
            }
        },
        ConformanceScenario("deleteRules.nullify.orderedMemberKeepsOrder") { env in
            // Deleting a member of an ordered to-many (Track.playlist nullifies) keeps the others' order.
            let context = env.newContext()
            let id = try context.performAndWait {
                let mix = Playlist(context: context); mix.name = "mix"
                mix.tracks = OrderedSet(["d", "a", "c", "b"].map { title in let t = Track(context: context); t.title = title; return t })
                try context.save()
                context.delete(mix.tracks[1])
                try context.processPendingChanges()
                try checkEqual(mix.tracks.map(\.title), ["d", "c", "b"], "order in the context")
                try context.save()
                return mix.objectID
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let mix = try fresh.existingObject(with: id) as! Playlist
                try checkEqual(mix.tracks.map(\.title), ["d", "c", "b"], "order after reopen")
                try checkEqual(try fresh.count(for: FetchRequest<Track>()), 3, "tracks after reopen")
            }
        },
        ConformanceScenario("deleteRules.cycle.ringCascadesOnceAndTerminates") { env in
            // next and previous both cascade: deleting any node of a ring deletes the ring, once.
            let context = env.newContext()
            try context.performAndWait {
                let ring = try (0..<5).map { try makeObject(context, "Node", "n\($0)", key: "label") }
                for (index, node) in ring.enumerated() { try node.setValue(ring[(index + 1) % ring.count], forKey: "next") }
                try check(try toOne(ring[0], "previous") === ring[4], "the ring is closed")
                _ = try makeObject(context, "Node", "solo", key: "label")
                try context.save()
            }
            try env.reopen()
            let second = env.newContext()
            try second.performAndWait {
                second.delete(try fetchOne(second, "Node", "n2", key: "label"))
                try second.processPendingChanges()
                try checkEqual(second.deletedObjects.count, 5, "every node of the ring is deleted once")
                try checkEqual(try names(fetchAll(second, "Node"), key: "label"), ["solo"], "nodes left in the context")
                try second.save()
            }
            try env.reopen()
            let third = env.newContext()
            try third.performAndWait {
                try checkEqual(try names(fetchAll(third, "Node"), key: "label"), ["solo"], "nodes after reopen")
            }
        },
        ConformanceScenario("deleteRules.cycle.selfLoopTerminates") { env in
            let context = env.newContext()
            try context.performAndWait {
                let node = try makeObject(context, "Node", "loop", key: "label")
                try node.setValue(node, forKey: "next")
                try check(try toOne(node, "previous") === node, "a self-loop is its own previous")
                try node.add(node, to: "children")
                try check(try toOne(node, "parent") === node, "and its own parent")
                _ = try makeObject(context, "Node", "solo", key: "label")
                try context.save()
                context.delete(node)
                try context.processPendingChanges()
                try checkEqual(context.deletedObjects.count, 1, "the loop is deleted once")
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(try names(fetchAll(fresh, "Node"), key: "label"), ["solo"], "nodes after reopen")
            }
        },
        ConformanceScenario("deleteRules.cycle.treeCascadesSubtree") { env in
            let context = env.newContext()
            try context.performAndWait {
                func node(_ label: String, under parent: ManagedObject?) throws -> ManagedObject {
                    let node = try makeObject(context, "Node", label, key: "label")
                    if let parent { try parent.add(node, to: "children") }
                    return node
                }
                let root = try node("root", under: nil)
                let a = try node("a", under: root)
                _ = try node("b", under: root)
                let a1 = try node("a1", under: a)
                _ = try node("a2", under: a)
                _ = try node("a1x", under: a1)
                try context.save()
            }
            try env.reopen()
            let second = env.newContext()
            try second.performAndWait {
                let a = try fetchOne(second, "Node", "a", key: "label")
                second.delete(a)
                try second.processPendingChanges()
                try checkEqual(Set(try second.deletedObjects.map { try name($0, key: "label") ?? "" }), ["a", "a1", "a2", "a1x"], "the subtree is deleted")
                let root = try fetchOne(second, "Node", "root", key: "label")
                try checkEqual(try names(toMany(root, "children"), key: "label"), ["b"], "the parent loses the deleted child")
                try second.save()
            }
            try env.reopen()
            let third = env.newContext()
            try third.performAndWait {
                try checkEqual(try names(fetchAll(third, "Node"), key: "label"), ["root", "b"], "nodes after reopen")
                let b = try fetchOne(third, "Node", "b", key: "label")
                try checkEqual(try name(toOne(b, "parent"), key: "label"), "root", "b keeps its parent")
                third.delete(try fetchOne(third, "Node", "root", key: "label"))
                try third.save()
                try checkEqual(try countOf(third, "Node"), 0, "deleting the root deletes the rest")
            }
        },
        ConformanceScenario("deleteRules.reflexive.managerNullifiesReports") { env in
            let context = env.newContext()
            try context.performAndWait {
                let boss = Employee(context: context); boss.name = "boss"
                let a = Employee(context: context); a.name = "a"; a.manager = boss
                let b = Employee(context: context); b.name = "b"; b.manager = boss
                let c = Employee(context: context); c.name = "c"; c.manager = a
                try context.save()
            }
            try env.reopen()
            let second = env.newContext()
            try second.performAndWait {
                let staff = try second.fetch(FetchRequest<Employee>(sortKeys: [SortKey("name")]))
                try checkEqual(staff.map(\.name), ["a", "b", "boss", "c"], "staff")
                let (a, b, boss, c) = (staff[0], staff[1], staff[2], staff[3])
                second.delete(boss)
                try second.processPendingChanges()
                try check(a.manager == nil && b.manager == nil, "the reports lose their deleted manager")
                try check(!a.isDeleted && !b.isDeleted, "nullify deletes no report")
                try check(c.manager === a, "the next level is untouched")
                second.delete(a)
                try second.processPendingChanges()
                try check(c.manager == nil, "deleting a middle manager frees its report")
                try second.save()
            }
            try env.reopen()
            let third = env.newContext()
            try third.performAndWait {
                let staff = try third.fetch(FetchRequest<Employee>(sortKeys: [SortKey("name")]))
                try checkEqual(staff.map(\.name), ["b", "c"], "staff after reopen")
                try check(staff.allSatisfy { $0.manager == nil && $0.reports.isEmpty }, "nobody has a manager or reports after reopen")
            }
        },
        ConformanceScenario("deleteRules.unsaved.insertedObjectNeverReachesStore") { env in
            let context = env.newContext()
            try context.performAndWait {
                let owner = try makeObject(context, "Owner", "new")
                let cascaded = try makeObject(context, "Item", "cascaded")
                let kept = try makeObject(context, "Item", "kept")
                try owner.setValue(cascaded, forKey: "cascadeOne")
                try owner.add(kept, to: "nullifyMany")
                context.delete(owner)
                try check(owner.isDeleted && !owner.isInserted, "a deleted insert is no longer inserted")
                try check(!context.insertedObjects.contains(owner), "it leaves the inserted objects at once")
                try context.processPendingChanges()
                try check(cascaded.isDeleted, "its cascade still applies")
                try check(try toOne(kept, "nullifyManyOwner") == nil, "its nullify still applies")
                try checkEqual(try names(Array(context.insertedObjects)), ["kept"], "inserted objects")
                try check(context.deletedObjects.isEmpty, "objects never saved are not deleted objects")
                try checkEqual(try countOf(context, "Owner"), 0, "the context's fetch leaves it out")
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(try countOf(fresh, "Owner"), 0, "owners after reopen")
                let items = try fetchAll(fresh, "Item")
                try checkEqual(try names(items), ["kept"], "items after reopen")
                try check(try toOne(items[0], "nullifyManyOwner") == nil, "the kept item has no owner")
            }
        },
        ConformanceScenario("deleteRules.unsaved.insertedDestinationLeavesSavedOwner") { env in
            let context = env.newContext()
            try context.performAndWait {
                let owner = try makeObject(context, "Owner", "o")
                try owner.add(try makeObject(context, "Item", "saved"), to: "nullifyMany")
                try context.save()
            }
            try env.reopen()
            let second = env.newContext()
            try second.performAndWait {
                let owner = try fetchOne(second, "Owner", "o")
                let draft = try makeObject(second, "Item", "draft")
                try owner.add(draft, to: "nullifyMany")
                try owner.setValue(draft, forKey: "cascadeOne")
                second.delete(draft)
                try second.processPendingChanges()
                try checkEqual(try names(toMany(owner, "nullifyMany")), ["saved"], "the owner's to-many forgets the draft")
                try check(try toOne(owner, "cascadeOne") == nil, "the owner's to-one forgets the draft")
                try check(!owner.isDeleted, "nothing cascades back to the owner")
                try second.save()
            }
            try env.reopen()
            let third = env.newContext()
            try third.performAndWait {
                let owner = try fetchOne(third, "Owner", "o")
                try checkEqual(try names(toMany(owner, "nullifyMany")), ["saved"], "owner.nullifyMany after reopen")
                try check(try toOne(owner, "cascadeOne") == nil, "owner.cascadeOne after reopen")
                try checkEqual(try names(fetchAll(third, "Item")), ["saved"], "items after reopen")
            }
        },
        ConformanceScenario("deleteRules.cascade.skipsDestinationsMovedAway") { env in
            // Inverse maintenance takes a moved item out of its old owner's relationships, even
            // while those are unloaded faults, so the old owner's cascade no longer reaches it.
            let context = env.newContext()
            try context.performAndWait {
                let old = try makeObject(context, "Owner", "old")
                try old.setValue([try makeObject(context, "Item", "moved"), try makeObject(context, "Item", "doomed")], forKey: "cascadeMany")
                try old.setValue(try makeObject(context, "Item", "stolen"), forKey: "cascadeOne")
                try context.save()
            }
            try env.reopen()
            let second = env.newContext()
            try second.performAndWait {
                let heir = try makeObject(second, "Owner", "heir")
                try heir.add(try fetchOne(second, "Item", "moved"), to: "cascadeMany")
                try heir.setValue(try fetchOne(second, "Item", "stolen"), forKey: "cascadeOne")
                let old = try fetchOne(second, "Owner", "old")
                try check(old.isFault || (try toOne(old, "cascadeOne") == nil), "the one-to-one partner was taken from the old owner")
                second.delete(old)
                try second.processPendingChanges()
                try checkEqual(Set(try second.deletedObjects.map { try name($0) ?? "" }), ["old", "doomed"], "only what the old owner still held is cascaded")
                try second.save()
            }
            try env.reopen()
            let third = env.newContext()
            try third.performAndWait {
                let heir = try fetchOne(third, "Owner", "heir")
                try checkEqual(try names(toMany(heir, "cascadeMany")), ["moved"], "heir.cascadeMany after reopen")
                try checkEqual(try name(toOne(heir, "cascadeOne")), "stolen", "heir.cascadeOne after reopen")
                try checkEqual(try names(fetchAll(third, "Item")), ["moved", "stolen"], "items after reopen")
            }
        },
        ConformanceScenario("deleteRules.noInverse.toManyDropsDeletedMembers") { env in
            // Student.tags has no inverse, so nothing in the context nullifies it when a tag is
            // deleted; the store then answers a to-many with existing rows only, and a fresh
            // context never sees the deleted tag.
            let context = env.newContext()
            let studentID = try context.performAndWait {
                let student = Student(context: context); student.name = "s"
                let gone = Tag(context: context); gone.label = "gone"
                let kept = Tag(context: context); kept.label = "kept"
                student.tags = [gone, kept]
                try context.save()
                context.delete(gone)
                try context.save()
                try checkEqual(try context.count(for: FetchRequest<Tag>()), 1, "tags after the save")
                return student.objectID
            }
            let second = env.newContext()
            try second.performAndWait {
                let student = try second.existingObject(with: studentID) as! Student
                try checkEqual(student.tags.map(\.label), ["kept"], "another context sees only the existing tag")
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let student = try fresh.existingObject(with: studentID) as! Student
                try checkEqual(student.tags.map(\.label), ["kept"], "student.tags after reopen")
                let tag = Tag(context: fresh); tag.label = "new"
                student.$tags.add(tag)
                try fresh.save()
            }
            try env.reopen()
            let last = env.newContext()
            try last.performAndWait {
                let student = try last.existingObject(with: studentID) as! Student
                try checkEqual(Set(student.tags.map(\.label)), ["kept", "new"], "a later change to the relationship keeps no deleted member")
            }
        },
        ConformanceScenario("deleteRules.noInverse.savedDeletionLeavesTheSavingContextsMembers") { env in
            // The saving context's own loaded many-to-nil drops a member whose deletion it saved,
            // as a fresh context's does (it kept naming the deleted tag: reading it threw
            // objectNotFound, and a typed read such as `tags.map(\.label)` stopped the process).
            let context = env.newContext()
            try context.performAndWait {
                let student = Student(context: context); student.name = "s"
                let gone = Tag(context: context); gone.label = "gone"
                let kept = Tag(context: context); kept.label = "kept"
                student.tags = [gone, kept]
                try context.save()
                try checkEqual(student.tags.count, 2, "tags before the delete")
                context.delete(gone)
                try context.save()
                try checkEqual(student.tags.count, 1, "tags after the deletion is saved")
                let labels = try (student.value(forKey: "tags") as! Set<ManagedObject>).map { try $0.value(forKey: "label") as? String }
                try checkEqual(labels, ["kept"], "the remaining tag reads")
                try check(!student.hasChanges && !context.hasChanges, "dropping the deleted member is no change")
                let other = Tag(context: context); other.label = "other"
                student.$tags.add(other)
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let student = try fresh.fetch(FetchRequest<Student>())[0]
                try checkEqual(Set(student.tags.map(\.label)), ["kept", "other"], "tags after reopen")
            }
        },
        ConformanceScenario("deleteRules.unsaved.deletedInsertLeavesNoReferenceInStore") { env in
            // An object inserted and deleted before any save has no record. Relationships with
            // an inverse are nullified by the rules; those without one (one-to-nil, many-to-nil)
            // and no-action inverses must not carry its temporary ID into the store either.
            let context = env.newContext()
            let (itemID, studentID) = try context.performAndWait {
                let student = Student(context: context); student.name = "s"
                let kept = Tag(context: context); kept.label = "kept"
                student.tags = [kept]
                try context.save()
                let owner = try makeObject(context, "Owner", "draft")
                let item = try makeObject(context, "Item", "i")
                try item.setValue(owner, forKey: "noActionOneOwner")
                let locker = Locker(context: context); locker.number = 7
                let tag = Tag(context: context); tag.label = "draft"
                student.locker = locker
                student.$tags.add(tag)
                context.delete(owner)
                context.delete(locker)
                context.delete(tag)
                try context.processPendingChanges()
                try check(try toOne(item, "noActionOneOwner") === owner, "no action: until the save the item still names the deleted insert")
                try context.save()
                try check(try toOne(item, "noActionOneOwner") == nil, "after the save the item names no object that was never stored")
                try check(student.locker == nil, "after the save student.locker is empty")
                try checkEqual(student.tags.map(\.label), ["kept"], "after the save student.tags holds the stored tag only")
                return (item.objectID, student.objectID)
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let item = try fresh.existingObject(with: itemID)
                let owner = try toOne(item, "noActionOneOwner")
                try check(owner == nil, "item.noActionOneOwner after reopen: \(String(describing: owner?.objectID))")
                let student = try fresh.existingObject(with: studentID) as! Student
                try check(student.locker == nil, "student.locker after reopen: \(String(describing: student.locker?.objectID))")
                try checkEqual(student.tags.map(\.label), ["kept"], "student.tags after reopen")
                try checkEqual(try fresh.count(for: FetchRequest<Locker>()), 0, "lockers after reopen")
            }
        },
        ConformanceScenario("deleteRules.cascade.reachesAlreadyDeletedObject") { env in
            let context = env.newContext()
            try context.performAndWait {
                // In the context: the destinations were deleted by hand, before and after the owner.
                let owner = try makeObject(context, "Owner", "o")
                let a = try makeObject(context, "Item", "a")
                let b = try makeObject(context, "Item", "b")
                let c = try makeObject(context, "Item", "c")
                _ = try makeObject(context, "Item", "bystander")
                try owner.setValue([a, b], forKey: "cascadeMany")
                try owner.setValue(c, forKey: "cascadeOne")
                try context.save()
                context.delete(a)
                try context.processPendingChanges()
                context.delete(owner)
                context.delete(c)
                try context.processPendingChanges()
                try checkEqual(context.deletedObjects.count, 4, "owner, a, b and c are deleted once each")
                try context.save()
                try checkEqual(try names(fetchAll(context, "Item")), ["bystander"], "items after the save")
            }
            // In the store: another context deleted a member after this one loaded the to-many.
            let first = env.newContext()
            let second = env.newContext()
            let ownerID = try context.performAndWait {
                let owner = try makeObject(context, "Owner", "p")
                try owner.setValue([try makeObject(context, "Item", "x"), try makeObject(context, "Item", "y")], forKey: "cascadeMany")
                try context.save()
                return owner.objectID
            }
            let staleMembers = try first.performAndWait {
                // Loads the members' IDs only; the owner and the items stay faults.
                try toMany(first.object(with: ownerID), "cascadeMany").map(\.objectID)
            }
            try checkEqual(staleMembers.count, 2, "the first context knows two members")
            try second.performAndWait {
                second.delete(try fetchOne(second, "Item", "x"))
                try second.save()
            }
            try first.performAndWait {
                first.delete(first.object(with: ownerID))
                try first.processPendingChanges()
                try first.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(try countOf(fresh, "Owner"), 0, "owners after reopen")
                try checkEqual(try names(fetchAll(fresh, "Item")), ["bystander"], "items after reopen")
            }
        },
    ]
}
