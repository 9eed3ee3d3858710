import ArgumentParser
import Foundation
import ObjectGraph

/// `objectgraph demo`: a small chat app narrated step by step.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Insert, fault, fetch and cascade-delete in a small chat app, narrated.")

    @Option(help: "The store to use: \(BuiltInStore.allCases.map(\.rawValue).joined(separator: ", ")).")
    var store: BuiltInStore = .sqlite

    @Option(help: "A folder for the store's files, kept afterwards (default: a temporary folder, removed).")
    var path: String?

    /// An empty `--path` or one naming a file is a usage error: the empty one meant the current
    /// folder (the store was written there and kept), and a file made creating the folder fail
    /// with an untyped Foundation error.
    func validate() throws {
        guard let path else { return }
        guard !path.isEmpty else { throw ValidationError("--path is empty; give a folder for the store's files") }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw ValidationError("--path \(path) is a file, not a folder for the store's files")
        }
    }

    func run() throws {
        try run(temporaryRoot: FileManager.default.temporaryDirectory)
    }

    /// The demo; without `--path` its store's folder is made in `temporaryRoot` and removed
    /// afterwards (tests pass a root of their own, to see what is left in it).
    func run(temporaryRoot: URL) throws {
        let directory = path.map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? temporaryRoot.appendingPathComponent("objectgraph-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { if path == nil { try? FileManager.default.removeItem(at: directory) } }
        let container = try PersistentContainer(model: try DemoModel.make(), stores: [store.description(in: directory)])
        defer { container.close() }
        print("ObjectGraph demo — a chat app on the \(store.rawValue) store")

        // The IDs of this run's Lunch and Alice: with `--path` the folder may already hold a
        // store from an earlier run, whose Alice (and chats) the fetches below also find.
        let writer = container.newBackgroundContext(name: "writer")
        let (lunchID, aliceID) = try writer.performAndWait { () throws -> (ObjectID, ObjectID) in
            let alice = DemoMember(context: writer); alice.name = "Alice"
            let bob = DemoMember(context: writer); bob.name = "Bob"
            let lunch = DemoChat(context: writer); lunch.title = "Lunch"
            let release = DemoChat(context: writer); release.title = "Release"
            lunch.members = [alice, bob]
            release.members = [alice]
            let lines: [(DemoChat, DemoMember, String)] = [
                (lunch, alice, "Noodles at noon?"), (lunch, bob, "Yes, the usual place."),
                (lunch, alice, "Booked for two."), (release, alice, "Tagging 1.0 tonight."),
                (release, alice, "Changelog is in."),
            ]
            for (index, (chat, author, text)) in lines.enumerated() {
                let message = DemoMessage(context: writer)
                message.text = text
                message.sentAt = Date(timeIntervalSince1970: 1_700_000_000 + Double(index) * 60)
                message.chat = chat      // the inverse, chat.messages, follows
                message.author = author  // and author.messages
            }
            print("1. Inserted 2 chats, 2 members, \(lines.count) messages; \(writer.insertedObjects.count) objects wait to be saved.")
            print("   Setting message.chat also filled chat.messages: Lunch has \(lunch.messages.count) messages.")
            try writer.save()
            print("2. Saved. Objects now have permanent IDs, e.g. \(lunch.objectID.uriRepresentation.absoluteString)")
            return (lunch.objectID, alice.objectID)
        }

        let reader = container.newBackgroundContext(name: "reader")
        try reader.performAndWait {
            let chats = try reader.fetch(FetchRequest<DemoChat>(sortKeys: [SortKey("title")]))
            let lunch = chats.first { $0.objectID == lunchID }!
            print("3. A fresh context fetched \(chats.count) chats sorted by title; they arrive as faults (isFault: \(lunch.isFault)).")
            _ = lunch.title
            print("   Reading lunch.title fired the fault (isFault: \(lunch.isFault)); round trips so far: \(reader.statistics.storeRoundTrips).")
            let before = reader.statistics.storeRoundTrips
            let messages = lunch.messages
            let trips = reader.statistics.storeRoundTrips - before
            print("   lunch.messages was a to-many fault; touching it loaded \(messages.count) message IDs in \(trips) round trip\(trips == 1 ? "" : "s").")
            let alice = try reader.fetch(FetchRequest<DemoMember>(predicate: .key("name") == "Alice")).first { $0.objectID == aliceID }!
            print("4. Alice has written \(alice.messages.count) messages in \(alice.chats.count) chats.")

            reader.delete(lunch)
            try reader.processPendingChanges()
            let cascaded = reader.deletedObjects.filter { $0 is DemoMessage }.count
            print("5. Deleting chat 'Lunch' cascaded to its \(cascaded) messages (delete rule: cascade).")
            print("   The back-references were nullified: Alice now has \(alice.messages.count) messages and \(alice.chats.count) chat.")
            try reader.save()
        }

        let checker = container.newBackgroundContext(name: "checker")
        try checker.performAndWait {
            let chats = try checker.count(for: FetchRequest<DemoChat>())
            let messages = try checker.count(for: FetchRequest<DemoMessage>())
            let titles = try checker.fetch(FetchRequest<DemoMessage>(sortKeys: [SortKey("sentAt")])).map(\.text)
            print("6. After saving, the store holds \(chats) chat\(chats == 1 ? "" : "s") and \(messages) messages: \(titles.joined(separator: " / "))")
            let bad = DemoChat(context: checker)
            bad.title = ""
            do {
                try checker.save()
            } catch let error as ObjectGraph.ValidationError {
                print("7. Saving a chat with an empty title is refused, not crashed: \(error.violations[0].message) (code \(error.violations[0].code.rawValue)).")
            }
        }
    }
}
