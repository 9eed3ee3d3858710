import Foundation
import ObjectGraph

/// `refresh(_:mergeChanges: false)` of an object whose own unsaved change moved it between
/// owners (or partners): what the refresh drops, the other sides must drop too, and what the
/// save will store anyway, the context must show.
///
/// An audit found the one-to-many case losing data on every store: after `m.chat = b;
/// refresh(m, mergeChanges: false)` the message named chat A again, but A's members still
/// lacked it and B's still listed it (their recorded halves of the move replayed), so deleting
/// B cascaded to a message of A's; with a nullify rule, deleting the old owner missed the member
/// and the save stored its key naming a deleted row. For a one-to-one, whose pair the save
/// completes from the side still changed, the refreshed side showed its old partner while the
/// new one named it, and deleting it failed the save.
extension RelationshipScenarios {
    static let refreshedMoves: [ConformanceScenario] = [
        ConformanceScenario("relationships.oneToMany.refreshDroppingAMoveDropsItFromBothOwners") { env in
            for (variant, loadLists, throughList) in [("set", false, false), ("set, lists loaded", true, false), ("added to B's list", true, true)] {
                let ids = try env.seed { context in
                    let a = Chat(context: context); a.title = "A"
                    let b = Chat(context: context); b.title = "B"
                    let message = Message(context: context); message.text = "m"
                    message.chat = a
                    return [a, b, message]
                }
                let context = env.newContext()
                try context.performAndWait {
                    let a = try context.existingObject(with: ids[0]) as! Chat
                    let b = try context.existingObject(with: ids[1]) as! Chat
                    let message = try context.existingObject(with: ids[2]) as! Message
                    if loadLists { _ = (a.messages.count, b.messages.count) }
                    if throughList { b.$messages.add(message) } else { message.chat = b }
                    context.refresh(message, mergeChanges: false)
                    try check(message.chat === a, "\(variant): the refreshed message names its stored chat, A")
                    try checkEqual(a.messages.map(\.text), ["m"], "\(variant): A's messages")
                    try checkEqual(b.messages.map(\.text), [], "\(variant): B's messages")
                    try check(!context.hasChanges, "\(variant): the refresh left \(context.updatedObjects.count) updated objects")
                    context.delete(b)
                    try context.save()
                }
                try env.reopen()
                let fresh = env.newContext()
                try fresh.performAndWait {
                    let messages = try fresh.fetch(FetchRequest<Message>())
                    try checkEqual(messages.map { "\($0.text) in \($0.chat?.title ?? "none")" }, ["m in A"], "\(variant): stored after B's cascade")
                    for message in messages { fresh.delete(message) }
                    for chat in try fresh.fetch(FetchRequest<Chat>()) { fresh.delete(chat) }
                    try fresh.save()
                }
            }
        },
        ConformanceScenario("relationships.oneToMany.refreshDroppingARemovalLetsTheNullifyReachTheMember") { env in
            let ids = try env.seed { context in
                let owner = try DeleteRuleScenarios.makeObject(context, "Owner", "o")
                let item = try DeleteRuleScenarios.makeObject(context, "Item", "i")
                try owner.add(item, to: "nullifyMany")
                return [owner, item]
            }
            let context = env.newContext()
            try context.performAndWait {
                let owner = try context.existingObject(with: ids[0])
                let item = try context.existingObject(with: ids[1])
                _ = try DeleteRuleScenarios.toMany(owner, "nullifyMany")
                try item.setValue(nil, forKey: "nullifyManyOwner")
                context.refresh(item, mergeChanges: false)
                try check(try DeleteRuleScenarios.toOne(item, "nullifyManyOwner") === owner, "the refreshed item names its stored owner")
                try checkEqual(try DeleteRuleScenarios.toMany(owner, "nullifyMany").count, 1, "the owner lists the item again")
                context.delete(owner)
                try context.save()
                try check(try DeleteRuleScenarios.toOne(item, "nullifyManyOwner") == nil, "the nullify cleared the item's owner")
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let item = try fresh.existingObject(with: ids[1])
                try check(try DeleteRuleScenarios.toOne(item, "nullifyManyOwner") == nil, "stored: the item names no owner (not the deleted row)")
                fresh.delete(item)
                try fresh.save()
            }
        },
        ConformanceScenario("relationships.ordered.refreshDroppingAMoveKeepsBothListsAsStored") { env in
            let ids = try env.seed { context in
                let first = Playlist(context: context); first.name = "P1"
                let second = Playlist(context: context); second.name = "P2"
                for title in ["a", "b", "c"] { let track = Track(context: context); track.title = title; first.$tracks.add(track) }
                let other = Track(context: context); other.title = "x"; second.$tracks.add(other)
                return [first, second]
            }
            let context = env.newContext()
            try context.performAndWait {
                let first = try context.existingObject(with: ids[0]) as! Playlist
                let second = try context.existingObject(with: ids[1]) as! Playlist
                let moved = first.tracks[1]
                _ = second.tracks.count
                moved.playlist = second
                context.refresh(moved, mergeChanges: false)
                try checkEqual(first.tracks.map(\.title), ["a", "b", "c"], "the first list as stored")
                try checkEqual(second.tracks.map(\.title), ["x"], "the second list as stored")
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let lists = try fresh.fetch(FetchRequest<Playlist>(sortKeys: [SortKey("name")]))
                try checkEqual(lists.map { "\($0.name): \($0.tracks.map(\.title))" }, ["P1: [\"a\", \"b\", \"c\"]", "P2: [\"x\"]"], "stored lists")
            }
        },
        ConformanceScenario("relationships.oneToOne.refreshKeepsAPairItsPartnerStillRecords") { env in
            for variant in ["moved, then deleted", "moved", "cleared"] {
                let ids = try env.seed { context in
                    let student = Student(context: context); student.name = "s"
                    let old = Address(context: context); old.street = "old"
                    let new = Address(context: context); new.street = "new"
                    student.address = old
                    return [student, old, new]
                }
                let context = env.newContext()
                try context.performAndWait {
                    let student = try context.existingObject(with: ids[0]) as! Student
                    let old = try context.existingObject(with: ids[1]) as! Address
                    let new = try context.existingObject(with: ids[2]) as! Address
                    let chosen: Address? = variant == "cleared" ? nil : new
                    student.address = chosen
                    context.refresh(student, mergeChanges: false)
                    // The save completes the pair from the partner's side: the context shows it.
                    try check(student.address === chosen, "\(variant): the student shows \(chosen?.street ?? "no address"), not \(student.address?.street ?? "none")")
                    try check(old.student == nil && new.student === (chosen === new ? student : nil), "\(variant): the addresses agree")
                    if variant == "moved, then deleted" { context.delete(student) }
                    try context.save()
                }
                try env.reopen()
                let fresh = env.newContext()
                try fresh.performAndWait {
                    let students = try fresh.fetch(FetchRequest<Student>())
                    let addresses = try fresh.fetch(FetchRequest<Address>(sortKeys: [SortKey("street")]))
                    let shown = addresses.map { "\($0.street): \($0.student?.name ?? "-")" } + students.map { "\($0.name): \($0.address?.street ?? "-")" }
                    let expected = switch variant {
                    case "moved, then deleted": ["old: -"]  // the student's cascade took the new address with it
                    case "moved": ["new: s", "old: -", "s: new"]
                    default: ["new: -", "old: -", "s: -"]
                    }
                    try checkEqual(shown, expected, "\(variant): stored")
                    for object in students as [ManagedObject] + addresses { fresh.delete(object) }
                    try fresh.save()
                }
            }
        },
    ]
}
