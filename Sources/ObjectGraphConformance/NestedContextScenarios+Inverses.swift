import Foundation
import ObjectGraph

/// A child's save changing a to-one that the parent changed too, after the child read it: the
/// child's change set unlinks the destination the child read, and the parent must unlink its
/// own.
extension NestedContextScenarios {
    static let inverses: [ConformanceScenario] = [
        // The parent moved the message to B; the stale child moves it to C. The parent took
        // m.chat = C but kept m in B's messages (an audit), and stored both ends that way.
        ConformanceScenario("nested.staleChildMoveUnlinksParentsLaterChat") { env in
            let (aID, bID, messageID) = try seedTwoChatsAndAMessage(env)
            let cID = try env.seed { context in let chat = Chat(context: context); chat.title = "C"; return [chat] }[0]
            let parent = env.newContext("parent")
            let child = parent.newChildContext(name: "child")
            // Held across the blocks, so the child keeps what it read (the message in A).
            let childsMessage = try child.performAndWait {
                let message = try child.existingObject(with: messageID) as! Message
                try checkEqual(message.chat?.title, "A", "the child reads the message in A")
                return message
            }
            try parent.performAndWait {
                (try parent.existingObject(with: messageID) as! Message).chat = (try parent.existingObject(with: bID) as! Chat)
            }
            try child.performAndWait {
                childsMessage.chat = (try child.existingObject(with: cID) as! Chat)
                try child.save()
            }
            func checkChats(_ context: ManagedObjectContext, _ what: String) throws {
                let message = try context.existingObject(with: messageID) as! Message
                try checkEqual(message.chat?.title, "C", "\(what): the child's move")
                for id in [aID, bID, cID] {
                    let chat = try context.existingObject(with: id) as! Chat
                    try checkEqual(chat.messages.contains(message), chat.title == "C", "\(what): \(chat.title).messages")
                }
            }
            try parent.performAndWait {
                try checkChats(parent, "in the parent")
                try parent.save()
            }
            let fresh = env.newContext()
            try fresh.performAndWait { try checkChats(fresh, "stored") }
        },
        // One-to-one: the parent gave the student address a3; the stale child gives it a new
        // a2. a3 kept naming the student, whose address was a2.
        ConformanceScenario("nested.staleChildOneToOneUnlinksParentsLaterPartner") { env in
            let setup = env.newContext()
            let (studentID, a3ID) = try setup.performAndWait {
                let student = Student(context: setup); student.name = "s"
                let a1 = Address(context: setup); a1.street = "a1"; student.address = a1
                let a3 = Address(context: setup); a3.street = "a3"
                try setup.save()
                return (student.objectID, a3.objectID)
            }
            let parent = env.newContext("parent")
            let child = parent.newChildContext(name: "child")
            let childsStudent = try child.performAndWait {
                let student = try child.existingObject(with: studentID) as! Student
                try checkEqual(student.address?.street, "a1", "the child reads a1")
                return student
            }
            try parent.performAndWait {
                (try parent.existingObject(with: studentID) as! Student).address = (try parent.existingObject(with: a3ID) as! Address)
            }
            try child.performAndWait {
                let a2 = Address(context: child); a2.street = "a2"
                childsStudent.address = a2
                try child.save()
            }
            func checkAddresses(_ context: ManagedObjectContext, _ what: String) throws {
                let student = try context.existingObject(with: studentID) as! Student
                try checkEqual(student.address?.street, "a2", "\(what): the child's address")
                for address in try context.fetch(FetchRequest<Address>(sortKeys: [SortKey("street")])) {
                    try checkEqual(address.student === student, address.street == "a2", "\(what): \(address.street).student")
                }
            }
            try parent.performAndWait {
                try checkAddresses(parent, "in the parent")
                try parent.save()
            }
            let fresh = env.newContext()
            try fresh.performAndWait { try checkAddresses(fresh, "stored") }
        },
    ]
}
