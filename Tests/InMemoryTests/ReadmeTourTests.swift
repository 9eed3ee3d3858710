import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Testing

// The README's tour, compiled and run, so the README stays true.

final class TourChat: ManagedObject {
    @Attribute var title: String
    @Relationship var messages: Set<TourMessage>
}

final class TourMessage: ManagedObject {
    @Attribute var text: String
    @Attribute var sentAt: Date?
    @Relationship var chat: TourChat?
}

@Suite("README tour")
struct ReadmeTourTests {
    @Test("the tour's code runs and does what the README says")
    func tour() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Chat", as: TourChat.self) { e in
                e.attribute("title", .string, default: "Untitled", rules: [.maxLength(200)])
                e.toMany("messages", "Message", inverse: "chat", deleteRule: .cascade)
            }
            m.entity("Message", as: TourMessage.self) { e in
                e.attribute("text", .string)
                e.attribute("sentAt", .date, optional: true)
                e.toOne("chat", "Chat", inverse: "messages", optional: false)
            }
        }
        let container = try PersistentContainer(model: model, stores: [.inMemory()])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let chat = TourChat(context: context)
            chat.title = "Lunch"
            let message = TourMessage(context: context)
            message.text = "Noodles?"
            message.chat = chat
            #expect(chat.messages == [message], "the inverse follows")
            try context.save()

            let request = FetchRequest<TourMessage>(
                predicate: .key("chat.title") == "Lunch" && .key("text").beginsWith("n", options: .caseInsensitive),
                sortKeys: [SortKey("sentAt", ascending: false)])
            let found = try context.fetch(request)
            #expect(found == [message], "uniqued: the fetch returns the same instance")
            let same = try FetchPredicate(format: "chat.title == %@ AND text BEGINSWITH[c] 'n'", "Lunch")
            #expect(try context.fetch(FetchRequest<TourMessage>(predicate: same)) == [message])
            let swiftData = FetchRequest<TourMessage>(predicate: #Predicate { $0.chat?.title == "Lunch" })
            #expect(try context.fetch(swiftData) == [message])

            context.delete(chat)
            try context.save()
            #expect(try context.count(for: FetchRequest<TourMessage>()) == 0, "the delete cascaded")
        }
    }
}
