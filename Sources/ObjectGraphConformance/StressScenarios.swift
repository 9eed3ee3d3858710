import Foundation
import ObjectGraph

/// Several private-queue contexts on several threads at once, modeled on the crash reports
/// Core Data users send: writers keep inserting, editing and deleting related objects (chats,
/// their messages, members) while readers fetch, traverse and merge. Bounded by iterations and
/// by time (about two seconds). Afterwards the graph must be whole: every inverse symmetric,
/// no reference to a missing record, and exactly the objects that the did-save notifications
/// say were inserted and not deleted.
///
/// Every context merges automatically and writers resolve conflicts by a merge policy (which
/// retries while other writers keep getting in between); a save that still conflicts is
/// rolled back and counted. Objects
/// are touched through the throwing key-value API, since another thread may delete any of
/// them at any moment.
enum StressScenarios {
    static let all: [ConformanceScenario] = sharedRows + closing + [
        ConformanceScenario("stress.concurrentContexts.graphStaysWhole") { env in
            try run(env, writers: 3, readers: 2, iterations: 300, seconds: 2)
        },
        ConformanceScenario("stress.childContexts.graphStaysWhole") { env in
            // Children of one parent work on their own threads and save into it, while the
            // parent saves to the store now and then.
            try run(env, writers: 3, readers: 1, iterations: 150, seconds: 1.5, nested: true)
        },
    ]

    /// IDs each successful save reported, from whichever thread saved.
    final class Ledger: Sendable {
        private let state = SharedValue<(inserted: Set<ObjectID>, deleted: Set<ObjectID>, saves: Int)>(([], [], 0))
        func record(_ saved: ContextDidSave) {
            state.update { $0.inserted.formUnion(saved.inserted); $0.deleted.formUnion(saved.deleted); $0.saves += 1 }
        }
        var alive: Set<ObjectID> { state.get().inserted.subtracting(state.get().deleted) }
        var saves: Int { state.get().saves }
        /// Records every save of `coordinator`'s contexts until the returned observer is removed.
        func recordSaves(of coordinator: PersistentStoreCoordinator) -> NSObjectProtocol {
            NotificationCenter.default.addObserver(forName: .objectGraphContextDidSave, object: nil, queue: nil) { note in
                guard let sender = note.object as? ManagedObjectContext, sender.coordinator === coordinator,
                      let saved = note.userInfo?[ContextDidSave.key] as? ContextDidSave else { return }
                self.record(saved)
            }
        }
    }

    static func run(_ env: ScenarioEnvironment, writers: Int, readers: Int, iterations: Int, seconds: Double, nested: Bool = false) throws {
        let ledger = Ledger()
        let observer = ledger.recordSaves(of: env.container.coordinator)
        defer { NotificationCenter.default.removeObserver(observer) }

        let setup = env.newContext("setup")
        try setup.performAndWait {
            let members = (0..<4).map { i in let m = Member(context: setup); m.name = "member\(i)"; return m }
            for i in 0..<3 {
                let chat = Chat(context: setup); chat.title = "chat\(i)"
                chat.members = Set(members.prefix(2 + i % 2))
                for j in 0..<3 {
                    let message = Message(context: setup); message.text = "seed\(i).\(j)"; message.chat = chat; message.author = members[j % members.count]
                }
            }
            try setup.save()
        }

        let policies: [MergePolicy] = [.objectTrumps, .storeTrumps, .overwrite, .rollback]
        let parent = nested ? env.newContext("parent") : nil
        let contexts = (0..<(writers + readers)).map { index in
            let name = index < writers ? "writer\(index)" : "reader\(index - writers)"
            let context = parent?.newChildContext(name: name) ?? env.newContext(name)
            context.automaticallyMergesChangesFromParent = true
            context.mergePolicy = policies[index % policies.count]
            return context
        }
        let deadline = Date().addingTimeInterval(seconds)
        let failures = SharedValue<[String]>([])
        let conflicts = SharedValue(0)
        let completed = SharedValue(0)
        try runOnThreads(contexts.count) { index in
            let context = contexts[index]
            var random = SeededRandom(seed: UInt64(index + 1) &* 0x9E37_79B9_7F4A_7C15)
            // Objects kept from earlier steps: edited later, after other threads changed them.
            var held: [ManagedObject] = []
            // The deadline bounds the run, but never before a writer saved ten times: how far
            // a loaded machine gets in two seconds must not decide the outcome (only the
            // iteration bound stops a writer that cannot save).
            var saved = 0
            for step in 0..<iterations where Date() < deadline || (index < writers && saved < 10) {
                context.performAndWait {
                    do {
                        if index < writers {
                            try write(context, step: step, writer: index, held: &held, random: &random)
                            try context.save()
                            if let parent, step % 10 == index { try parent.performAndWait { try parent.save() } }
                            completed.update { $0 += 1 }
                            saved += 1
                        } else {
                            try read(context, random: &random)
                        }
                    } catch is MergeConflictError {
                        conflicts.update { $0 += 1 }
                        context.rollback()
                    } catch let error as ObjectGraphError where error.code == .objectNotFound || error.code == .objectInaccessible {
                        context.rollback()  // touched something deleted by another thread: expected
                    } catch {
                        failures.update { $0.append("\(context.name) step \(step): \(error)") }
                        context.rollback()
                    }
                }
            }
        }
        if let parent { try parent.performAndWait { try parent.save() } }
        try check(failures.get().isEmpty, "unexpected errors: \(failures.get().prefix(5))")
        try check(ledger.saves > 1 && completed.get() >= writers * 10, "the writers saved (\(completed.get()) steps completed, \(conflicts.get()) unresolved conflicts)")
        try verify(env.newContext("verifier"), expected: ledger.alive)
    }

    /// One writer step: insert, edit or delete messages; create or delete chats; join or leave.
    static func write(_ context: ManagedObjectContext, step: Int, writer: Int, held: inout [ManagedObject], random: inout SeededRandom) throws {
        if !held.isEmpty && random.next(3) == 0 {
            let object = held[random.next(held.count)]
            try object.setValue("held w\(writer).\(step)", forKey: object.entity.name == "Chat" ? "title" : "text")
        }
        let chats = try context.fetch(FetchRequest<ManagedObject>(entityName: "Chat"))
        let members = try context.fetch(FetchRequest<ManagedObject>(entityName: "Member"))
        guard !members.isEmpty else { return }
        let member = members[random.next(members.count)]
        if held.count > 8 { held.removeFirst() }
        if !chats.isEmpty { held.append(chats[random.next(chats.count)]) }
        switch random.next(12) {
        case 0, 1, 2, 10, 11:
            guard !chats.isEmpty else { return }
            let message = try context.insertObject(entityName: "Message")
            try message.setValue("w\(writer).\(step)", forKey: "text")
            try message.setValue(chats[random.next(chats.count)], forKey: "chat")
            try message.setValue(member, forKey: "author")
        case 3:
            let chat = try context.insertObject(entityName: "Chat")
            try chat.setValue("chat w\(writer).\(step)", forKey: "title")
            try chat.add(member, to: "members")
            let message = try context.insertObject(entityName: "Message")
            try message.setValue("first", forKey: "text")
            try message.setValue(chat, forKey: "chat")
        case 4, 5:
            let messages = try context.fetch(FetchRequest<ManagedObject>(entityName: "Message"))
            guard !messages.isEmpty else { return }
            let message = messages[random.next(messages.count)]
            try message.setValue("edited w\(writer).\(step)", forKey: "text")
            held.append(message)
        case 6:
            let messages = try context.fetch(FetchRequest<ManagedObject>(entityName: "Message"))
            guard !messages.isEmpty else { return }
            context.delete(messages[random.next(messages.count)])
        case 7:
            guard chats.count > 4 else { return }
            context.delete(chats[random.next(chats.count)])
        case 8:
            guard !chats.isEmpty else { return }
            try chats[random.next(chats.count)].add(member, to: "members")
        default:
            guard !chats.isEmpty else { return }
            try chats[random.next(chats.count)].remove(member, from: "members")
        }
    }

    /// One reader step: fetch with prefetching, traverse, count.
    static func read(_ context: ManagedObjectContext, random: inout SeededRandom) throws {
        var request = FetchRequest<ManagedObject>(entityName: "Chat")
        request.relationshipKeyPathsForPrefetching = ["messages"]
        request.returnsObjectsAsFaults = random.next(2) == 0
        for chat in try context.fetch(request) {
            _ = try chat.value(forKey: "title")
            for message in (try chat.value(forKey: "messages") as? Set<ManagedObject>) ?? [] {
                _ = try message.value(forKey: "text")
            }
        }
        _ = try context.count(for: FetchRequest<ManagedObject>(entityName: "Message"))
    }

    /// Inverse symmetry, no dangling reference, and the ledger's objects exactly.
    static func verify(_ context: ManagedObjectContext, expected: Set<ObjectID>) throws {
        try context.performAndWait {
            func all(_ entity: String) throws -> [ManagedObject] {
                try context.fetch(FetchRequest<ManagedObject>(entityName: entity))
            }
            let chats = try all("Chat"), messages = try all("Message"), members = try all("Member")
            let ids = Set((chats + messages + members).map(\.objectID))
            try checkEqual(ids.count, chats.count + messages.count + members.count, "fetches return each object once")
            try checkEqual(ids, expected, "stored objects are exactly those saved as inserted and not deleted")
            func toOne(_ object: ManagedObject, _ key: String) throws -> ObjectID? {
                (try object.value(forKey: key) as? ManagedObject)?.objectID
            }
            func toMany(_ object: ManagedObject, _ key: String) throws -> Set<ObjectID> {
                Set(((try object.value(forKey: key) as? Set<ManagedObject>) ?? []).map(\.objectID))
            }
            var messagesOfChat: [ObjectID: Set<ObjectID>] = [:]
            var messagesOfMember: [ObjectID: Set<ObjectID>] = [:]
            for message in messages {
                if let chat = try toOne(message, "chat") {
                    try check(ids.contains(chat), "\(message.objectID).chat points at missing \(chat)")
                    messagesOfChat[chat, default: []].insert(message.objectID)
                }
                if let author = try toOne(message, "author") {
                    try check(ids.contains(author), "\(message.objectID).author points at missing \(author)")
                    messagesOfMember[author, default: []].insert(message.objectID)
                }
            }
            var chatsOfMember: [ObjectID: Set<ObjectID>] = [:]
            for chat in chats {
                try checkEqual(try toMany(chat, "messages"), messagesOfChat[chat.objectID] ?? [], "\(chat.objectID).messages mirrors Message.chat")
                for member in try toMany(chat, "members") {
                    try check(ids.contains(member), "\(chat.objectID).members holds missing \(member)")
                    chatsOfMember[member, default: []].insert(chat.objectID)
                }
            }
            for member in members {
                try checkEqual(try toMany(member, "chats"), chatsOfMember[member.objectID] ?? [], "\(member.objectID).chats mirrors Chat.members")
                try checkEqual(try toMany(member, "messages"), messagesOfMember[member.objectID] ?? [], "\(member.objectID).messages mirrors Message.author")
            }
            try checkEqual(try context.count(for: FetchRequest<ManagedObject>(entityName: "Message")), messages.count, "count agrees with fetch")
        }
    }
}

/// Runs `body(0..<count)` on `count` threads of their own at once and waits for all (a
/// dispatch pool would run only as many as there are cores, one after another). Throws when
/// they have not all finished within ``threadWaitLimit`` (see ``waitForThreads(_:limit:file:line:_:)``).
func runOnThreads(_ count: Int, file: String = #filePath, line: Int = #line, _ body: @escaping @Sendable (Int) -> Void) throws {
    let group = DispatchGroup()
    let finished = SharedValue<Set<Int>>([])
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            finished.update { _ = $0.insert(index) }
            group.leave()
        }
        thread.name = "objectgraph-stress-\(index)"
        thread.start()
    }
    try waitForThreads(group, file: file, line: line) {
        let stuck = Set(0..<count).subtracting(finished.get()).sorted()
        return "threads \(stuck.map { "objectgraph-stress-\($0)" }.joined(separator: ", ")) of \(count)"
    }
}

/// How long a scenario waits for its threads: far beyond what any of them needs on a loaded
/// machine, so reaching it means a thread is stuck (a deadlock or a call that never returns),
/// not slow. It is no speed check; it turns a hang, which would stop the whole test run
/// without a word, into this scenario's failure naming what did not finish.
let threadWaitLimit: TimeInterval = 300

/// Waits for `group`; throws a failure naming `what()` when `limit` passes first.
/// The stuck threads are left running: a thread cannot be stopped from outside.
func waitForThreads(_ group: DispatchGroup, limit: TimeInterval = threadWaitLimit, file: String = #filePath, line: Int = #line, _ what: () -> String) throws {
    guard group.wait(timeout: .now() + limit) == .success else {
        throw ScenarioFailure(message: "\(what()) still running after \(limit) s: stuck (a deadlock, or a store call that never returned)", file: file, line: line)
    }
}

/// Waits for `semaphore`; throws like ``waitForThreads(_:limit:file:line:_:)``.
func waitForSignal(_ semaphore: DispatchSemaphore, limit: TimeInterval = threadWaitLimit, file: String = #filePath, line: Int = #line, _ what: () -> String) throws {
    guard semaphore.wait(timeout: .now() + limit) == .success else {
        throw ScenarioFailure(message: "\(what()) not signalled after \(limit) s: stuck (a deadlock, or a store call that never returned)", file: file, line: line)
    }
}

