import Foundation
import ObjectGraph

/// The ObjectGraph side of each chat workload, independent of the store: the SQLite and the
/// LMDB tables run exactly the same code above the store protocol.
enum ChatBodies {
    static func insert(_ context: ManagedObjectContext, input: ChatInput) throws -> Tally {
        try context.performAndWait {
            var tally = Tally()
            for c in 1...input.sizes.chats {
                let chat = Chat(context: context)
                chat.title = input.title(c)
                for index in 0..<input.sizes.messagesPerChat {
                    let message = Message(context: context)
                    let text = input.text(chat: c, index: index)
                    message.text = text
                    message.sentAt = Date(timeIntervalSinceReferenceDate: input.sentAt(chat: c, index: index))
                    message.chat = chat
                    tally.add(UInt64(text.utf8.count))
                }
            }
            try context.save()
            return tally
        }
    }

    static func fetchAll(_ context: ManagedObjectContext) throws -> Tally {
        try context.performAndWait {
            var request = FetchRequest<Message>()
            request.returnsObjectsAsFaults = false
            let messages = try context.fetch(request)
            var tally = Tally()
            for message in messages {
                tally.add(UInt64(message.text.utf8.count) &+ message.sentAt.timeIntervalSinceReferenceDate.bitPattern)
            }
            return tally
        }
    }

    static func chatMessages(_ context: ManagedObjectContext, chats ids: [ObjectID]) throws -> Tally {
        try context.performAndWait {
            var tally = Tally()
            for id in ids {
                var request = FetchRequest<Message>(predicate: .key("chat") == id, sortKeys: [SortKey("sentAt")])
                request.returnsObjectsAsFaults = false
                for (position, message) in try context.fetch(request).enumerated() {
                    tally.add(UInt64(position + 1) &* UInt64(message.objectID.primaryKey!) &+ UInt64(message.text.utf8.count))
                }
            }
            return tally
        }
    }

    static func faultByID(_ context: ManagedObjectContext, messages ids: [ObjectID]) -> Tally {
        context.performAndWait {
            var tally = Tally()
            for id in ids {
                let message = context.object(with: id) as! Message
                tally.add(UInt64(message.text.utf8.count) &+ UInt64(id.primaryKey!))
            }
            return tally
        }
    }

    static func countPerChat(_ context: ManagedObjectContext, chats ids: [ObjectID]) throws -> Tally {
        try context.performAndWait {
            var tally = Tally()
            for (offset, id) in ids.enumerated() {
                let count = try context.count(for: FetchRequest<Message>(predicate: .key("chat") == id))
                tally.add(UInt64(count) &* UInt64(offset + 1))
            }
            return tally
        }
    }

    static func countGrouped(_ context: ManagedObjectContext) throws -> Tally {
        try context.performAndWait {
            var request = FetchRequest<Message>()
            request.propertiesToFetch = [.key("chat.title", as: "title"), .count(as: "count")]
            request.propertiesToGroupBy = ["chat.title"]
            var tally = Tally()
            for row in try context.fetchDictionaries(request) {
                guard case .string(let title)? = row["title"], case .integer(let count)? = row["count"] else {
                    throw BenchmarkFailure("unexpected dictionary row \(row)")
                }
                tally.add(fnv(title) &* UInt64(count))
            }
            return tally
        }
    }

    static func cascadeDelete(_ context: ManagedObjectContext, chats ids: [ObjectID]) throws -> Tally {
        try context.performAndWait {
            var tally = Tally()
            for id in ids {
                context.delete(context.object(with: id))
                tally.add(UInt64(id.primaryKey!))
            }
            try context.save()
            return tally
        }
    }

    static func update(_ context: ManagedObjectContext, messages ids: [ObjectID]) throws -> Tally {
        try context.performAndWait {
            var tally = Tally()
            for id in ids {
                let message = context.object(with: id) as! Message
                let text = message.text + " (edited)"
                message.text = text
                tally.add(UInt64(text.utf8.count))
            }
            try context.save()
            return tally
        }
    }
}
