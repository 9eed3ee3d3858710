import Foundation
import ObjectGraph

/// A server shutting down: the container is closed while request handlers on other threads are
/// still fetching, counting, firing faults and saving. Every call must end cleanly — it works,
/// or it throws ``StoreError`` `.closed` — never another error, a hang or a crash (a store
/// freeing its connection or environment under a reader in flight); every call begun after
/// `close()` returned must throw `.closed`; and the store, opened again, must hold exactly what
/// the saves that reported success saved: a save that threw stored nothing.
///
/// ``ClosedContainerScenarios`` checks each operation after the close, one at a time; this one
/// is about the calls that race it.
extension StressScenarios {
    static let closing: [ConformanceScenario] = [
        ConformanceScenario("stress.closeWhileInUse.everyCallEndsCleanly") { env in
            let ledger = Ledger()
            let observer = ledger.recordSaves(of: env.container.coordinator)
            defer { NotificationCenter.default.removeObserver(observer) }
            _ = try env.seed { context in
                let member = Member(context: context)
                member.name = "member"
                var objects: [ManagedObject] = [member]
                for i in 0..<3 {
                    let chat = Chat(context: context)
                    chat.title = "chat\(i)"
                    objects.append(chat)
                    for j in 0..<3 {
                        let message = Message(context: context)
                        message.text = "seed\(i).\(j)"
                        message.chat = chat
                        message.author = member
                        objects.append(message)
                    }
                }
                return objects
            }
            // Read before the close: a closed container has no store to ask.
            let persistent = env.capabilities.contains(.persistent)
            let container = env.container
            let workers = 4, stepsAfterClose = 20
            let steps = SharedValue(0)
            let closed = SharedValue(false)
            let refusedAfterClose = SharedValue(0)
            let failures = SharedValue<[String]>([])
            try runOnThreads(workers + 1) { index in
                guard index < workers else {
                    // The closer waits until the workers are under way (bounded, so a stuck
                    // worker fails the checks below rather than hanging the run).
                    let deadline = Date().addingTimeInterval(10)
                    while steps.get() < workers * 10 && Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
                    container.close()
                    closed.set(true)
                    return
                }
                let context = container.newBackgroundContext(name: "worker\(index)")
                context.mergePolicy = .objectTrumps
                var random = SeededRandom(seed: UInt64(index + 1) &* 0x2545_F491_4F6C_DD1D)
                var afterClose = 0
                var step = 0
                while afterClose < stepsAfterClose && step < 5_000 {
                    // Known closed before the step began: the step must be refused.
                    let begunAfterClose = closed.get()
                    context.performAndWait {
                        do {
                            try closingStep(context, step: step, worker: index, random: &random)
                            if begunAfterClose { failures.update { $0.append("worker\(index) step \(step) began after close() returned and still succeeded") } }
                        } catch let error as StoreError where error.code == .closed {
                            if begunAfterClose { refusedAfterClose.update { $0 += 1 } }
                            context.rollback()
                        } catch is MergeConflictError {
                            context.rollback()
                        } catch {
                            failures.update { $0.append("worker\(index) step \(step): \(error)") }
                            context.rollback()
                        }
                    }
                    steps.update { $0 += 1 }
                    step += 1
                    if begunAfterClose { afterClose += 1 }
                }
            }
            try check(failures.get().isEmpty, "calls racing close() ended otherwise than working or throwing .closed: \(failures.get().prefix(5))")
            try checkEqual(refusedAfterClose.get(), workers * stepsAfterClose, "every step begun after close() returned is refused as .closed")
            try check(ledger.saves > 1, "saves landed before the close (\(ledger.saves))")
            // A store that does not persist is gone with its container: nothing to read back.
            guard persistent else { return }
            try env.reopen()
            try verify(env.newContext("verifier"), expected: ledger.alive)
        },
    ]

    /// One step of a worker racing the close: a reader's step (a fetch that traverses, and a
    /// count), a fault fired, or a message inserted and saved.
    static func closingStep(_ context: ManagedObjectContext, step: Int, worker: Int, random: inout SeededRandom) throws {
        switch random.next(4) {
        case 0:
            try read(context, random: &random)
        case 1:
            // A fault fired: the object turned back into one, then read.
            let messages = try context.fetch(FetchRequest<ManagedObject>(entityName: "Message"))
            guard !messages.isEmpty else { return }
            let message = messages[random.next(messages.count)]
            context.refresh(message, mergeChanges: false)
            _ = try message.value(forKey: "text")
        default:
            let chats = try context.fetch(FetchRequest<ManagedObject>(entityName: "Chat"))
            let members = try context.fetch(FetchRequest<ManagedObject>(entityName: "Member"))
            guard let member = members.first, !chats.isEmpty else { return }
            let message = try context.insertObject(entityName: "Message")
            try message.setValue("w\(worker).\(step)", forKey: "text")
            try message.setValue(chats[random.next(chats.count)], forKey: "chat")
            try message.setValue(member, forKey: "author")
            try context.save()
        }
    }
}
