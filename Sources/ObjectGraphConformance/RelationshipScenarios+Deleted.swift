import Foundation
import ObjectGraph

/// Relating an object whose deletion was already processed. Its delete rules ran before the
/// reference existed, so nothing nullifies it: as in Core Data ("dangling reference to an
/// invalid object", 1550), the save is refused, naming the object and the relationship, and
/// the store keeps what it had. Before, the save stored a foreign key (or join row) naming
/// the row it deleted, and a reload handed out a fault no row answers; LMDB kept the
/// many-to-many membership too (an audit).
extension RelationshipScenarios {
    static let deletedDestinations: [ConformanceScenario] = [
        ConformanceScenario("relationships.relatingAnObjectAfterItsDeletionFailsTheSave") { env in
            let ids = try env.seed { context in
                let chat = Chat(context: context); chat.title = "gone"
                let message = Message(context: context); message.text = "m"
                let member = Member(context: context); member.name = "mm"
                let tag = Tag(context: context); tag.label = "gone"
                let locker = Locker(context: context); locker.number = 1
                let student = Student(context: context); student.name = "s"
                let playlist = Playlist(context: context); playlist.name = "p"
                let track = Track(context: context); track.title = "gone"
                return [chat, message, member, tag, locker, student, playlist, track]
            }
            let context = env.newContext()
            try context.performAndWait {
                let objects = try ids.map { try context.existingObject(with: $0) }
                let chat = objects[0] as! Chat, message = objects[1] as! Message, member = objects[2] as! Member
                let tag = objects[3] as! Tag, locker = objects[4] as! Locker, student = objects[5] as! Student
                let playlist = objects[6] as! Playlist, track = objects[7] as! Track
                for doomed in [chat, tag, locker, track] as [ManagedObject] { context.delete(doomed) }
                try context.processPendingChanges()
                message.chat = chat                 // many-to-one
                member.$chats.add(chat)             // many-to-many
                student.$tags.add(tag)              // many-to-nil
                student.locker = locker             // one-to-nil
                playlist.$tracks.insert(track, at: 0)  // ordered one-to-many
                let error = try checkThrows(ValidationError.self, "saving references to deleted objects") { try context.save() }
                let found = Set(error.violations.map { "\($0.objectID == message.objectID ? "message" : $0.objectID == member.objectID ? "member" : $0.objectID == student.objectID ? "student" : $0.objectID == playlist.objectID ? "playlist" : "?").\($0.key) \($0.code.rawValue)" })
                try checkEqual(found, ["message.chat 1550", "member.chats 1550", "student.tags 1550", "student.locker 1550", "playlist.tracks 1550"], "one violation per reference")
                try check(error.violations.allSatisfy { $0.message.contains("deleted") }, "the messages say why: \(error)")
                // Taking the references back lets the deletions save.
                message.chat = nil
                member.$chats.remove(chat)
                student.$tags.remove(tag)
                student.locker = nil
                playlist.$tracks.remove(track)
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                for entity in ["Chat", "Tag", "Locker", "Track"] {
                    try checkEqual(try fresh.count(for: FetchRequest<ManagedObject>(entityName: entity)), 0, "\(entity) rows after the save")
                }
                let message = try fresh.existingObject(with: ids[1]) as! Message
                let member = try fresh.existingObject(with: ids[2]) as! Member
                let student = try fresh.existingObject(with: ids[5]) as! Student
                let playlist = try fresh.existingObject(with: ids[6]) as! Playlist
                try checkEqual(try message.objectIDs(forRelationshipNamed: "chat"), [], "message.chat names no row")
                try checkEqual(try member.objectIDs(forRelationshipNamed: "chats"), [], "member.chats names no row")
                try checkEqual(try student.objectIDs(forRelationshipNamed: "tags"), [], "student.tags names no row")
                try checkEqual(try student.objectIDs(forRelationshipNamed: "locker"), [], "student.locker names no row")
                try checkEqual(try playlist.objectIDs(forRelationshipNamed: "tracks"), [], "playlist.tracks names no row")
            }
        },
        ConformanceScenario("relationships.relatingAnObjectBeforeItsDeletionIsProcessedIsNullified") { env in
            // The same references made before the delete rules run are theirs to handle: the
            // nullify rules take them back and the save succeeds (Core Data's order of events).
            let ids = try env.seed { context in
                let chat = Chat(context: context); chat.title = "gone"
                let member = Member(context: context); member.name = "mm"
                let student = Student(context: context); student.name = "s"
                let schoolClass = SchoolClass(context: context); schoolClass.title = "gone"
                return [chat, member, student, schoolClass]
            }
            let context = env.newContext()
            try context.performAndWait {
                let objects = try ids.map { try context.existingObject(with: $0) }
                let chat = objects[0] as! Chat, member = objects[1] as! Member
                let student = objects[2] as! Student, schoolClass = objects[3] as! SchoolClass
                context.delete(chat)
                context.delete(schoolClass)
                member.$chats.add(chat)
                student.schoolClass = schoolClass
                try context.save()
                try checkEqual(member.chats.count, 0, "the nullify rule took the membership back")
                try check(student.schoolClass == nil, "and the to-one")
            }
        },
    ]
}
