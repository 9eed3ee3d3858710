import Foundation
import ObjectGraph

/// Deleting many rows at once: runs of rows saved together (which a store may delete as key
/// ranges) beside scattered rows and survivors saved in between, in a table of one entity, a
/// table shared by an inheritance hierarchy, and many-to-many memberships on both sides.
extension DeleteRuleScenarios {
    static let bulk: [ConformanceScenario] = [
        ConformanceScenario("deleteRules.bulk.runsAndScatteredRowsDeleteExactlyTheirRows") { env in
            let context = env.newContext()
            // Saved in this order, so that stores numbering rows in save order hold the doomed
            // rows in runs (20 and 18 long) broken by survivors, and in short runs.
            let messageCounts = [20, 2, 18, 1, 3]
            try context.performAndWait {
                let members = (0..<3).map { index -> Member in
                    let member = Member(context: context); member.name = "m\(index)"
                    return member
                }
                var chats: [Chat] = []
                for index in 0..<40 {
                    let chat = Chat(context: context); chat.title = String(format: "c%02d", index)
                    chat.members = [members[index % 3]]
                    chats.append(chat)
                }
                // Messages of doomed chats, with survivors' messages between them.
                for (index, count) in messageCounts.enumerated() {
                    for number in 0..<count {
                        let message = Message(context: context); message.text = "\(chats[index].title)-\(number)"
                        message.chat = chats[index]
                    }
                    let kept = Message(context: context); kept.text = "c35-\(index)"; kept.chat = chats[35]
                }
                // Cars of one garage in two runs, trucks of another between them (one table).
                let doomed = try makeObject(context, "Garage", "doomed")
                let kept = try makeObject(context, "Garage", "kept")
                for (entity, count, garage, prefix) in [("Car", 18, doomed, "a"), ("Truck", 1, kept, "t"), ("Car", 17, doomed, "b"), ("Truck", 2, kept, "u")] {
                    for number in 0..<count {
                        let vehicle = try makeObject(context, entity, "\(prefix)\(number)")
                        try vehicle.setValue(garage, forKey: "garage")
                    }
                }
                try context.save()
            }
            let deletedChats = Set((0..<25).map { String(format: "c%02d", $0) } + ["c30"])
            try context.performAndWait {
                for chat in try context.fetch(FetchRequest<Chat>()) where deletedChats.contains(chat.title) {
                    context.delete(chat)
                }
                context.delete(try fetchOne(context, "Garage", "doomed"))
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let chats = try fresh.fetch(FetchRequest<Chat>())
                let expectedChats = Set((0..<40).map { String(format: "c%02d", $0) }).subtracting(deletedChats)
                try checkEqual(Set(chats.map(\.title)), expectedChats, "the chats left")
                let messages = try fresh.fetch(FetchRequest<Message>())
                try checkEqual(Set(messages.map(\.text)), Set((0..<messageCounts.count).map { "c35-\($0)" }), "only the kept chat's messages are left")
                try check(messages.allSatisfy { $0.chat?.title == "c35" }, "every message left still has its chat")
                for member in try fresh.fetch(FetchRequest<Member>()) {
                    let index = Int(member.name.dropFirst())!
                    let expected = Set(expectedChats.filter { Int($0.dropFirst())! % 3 == index })
                    try checkEqual(Set(member.chats.map(\.title)), expected, "\(member.name)'s chats: memberships of deleted chats are gone")
                }
                try checkEqual(try countOf(fresh, "Car"), 0, "every car of the deleted garage is gone")
                try checkEqual(try names(fetchAll(fresh, "Vehicle")), ["t0", "u0", "u1"], "the trucks between the cars are left")
                try checkEqual(try names(fetchAll(fresh, "Garage")), ["kept"], "garages left")
                for truck in try fetchAll(fresh, "Truck") {
                    let truckName = try name(truck) ?? "?"
                    try checkEqual(try name(toOne(truck, "garage")), "kept", "\(truckName) keeps its garage")
                }
            }
        },
    ]
}
