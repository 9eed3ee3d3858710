import Foundation
import ObjectGraph
import ObjectGraphConformance
import OrderedCollections
import Testing

/// Crash safety of the transactional stores, as the binary store's own test checks its
/// rename: a child process saves one generation after another until a timer in it sends it
/// SIGKILL at a random moment, and the parent reopens the store, which must hold exactly one
/// completed generation, never older than the last one it saw — every row, foreign key,
/// join-table entry, member list and ordered position of that save and none of the next.
///
/// Generation `g` is a pure function of `g` (``expected(_:)``): the chat "marker" titled
/// "generation g" holds the twenty messages "g-0"…"g-19" (the previous generation's deleted),
/// the members "g-2", "g-1" and "g" (many-to-many; older ones deleted), and the playlist the
/// tracks "g-4"…"g" in order (ordered to-many; older ones deleted).
@Suite("Killed while saving")
struct KilledWhileSavingTests {
    static let iterations = 40
    static let messagesPerGeneration = 20

    struct State: Equatable, CustomStringConvertible {
        var title: String
        // Sorted lists, not sets: a row stored twice shows.
        var messages: [String]
        var members: [String]
        var tracks: [String]
        var description: String { "\(title), \(messages.count) messages, members \(members), tracks \(tracks)" }
    }

    static func expected(_ generation: Int) -> State {
        let recent = { (count: Int) in generation == 0 ? [] : Array(max(1, generation - count + 1)...generation) }
        return State(
            title: "generation \(generation)",
            messages: generation == 0 ? [] : (0..<messagesPerGeneration).map { "\(generation)-\($0)" }.sorted(),
            members: recent(3).map(String.init).sorted(),
            tracks: recent(5).map(String.init))
    }

    /// The store's state, read through the relationships from both ends: an inverse that
    /// disagrees with its source is reported as a different state.
    static func read(_ context: ManagedObjectContext) throws -> (generation: Int, state: State) {
        let chats = try context.fetch(FetchRequest<ManagedObject>(entityName: "Chat"))
        guard chats.count == 1, let marker = chats.first, let title = try marker.value(forKey: "title") as? String,
              let generation = Int(title.dropFirst("generation ".count)) else {
            throw StoreError(.backend, "not one marker chat: \(chats.count) chats")
        }
        func names(_ objects: [ManagedObject], _ key: String) throws -> [String] {
            try objects.map { try $0.value(forKey: key) as? String ?? "?" }
        }
        let messages = try context.fetch(FetchRequest<ManagedObject>(entityName: "Message"))
        let listed = (try marker.value(forKey: "messages") as? Set<ManagedObject>) ?? []
        let members = try context.fetch(FetchRequest<ManagedObject>(entityName: "Member"))
        let joined = (try marker.value(forKey: "members") as? Set<ManagedObject>) ?? []
        var state = State(title: title, messages: try names(messages, "text").sorted(), members: try names(members, "name").sorted(), tracks: [])
        // Each side of each relationship must tell the same story; a mismatch shows as a
        // marker in the state, so the comparison with the expected one fails and says so.
        if Set(listed.map(\.objectID)) != Set(messages.map(\.objectID)) { state.messages.append("(chat.messages differs)") }
        for message in messages where (try message.value(forKey: "chat") as? ManagedObject)?.objectID != marker.objectID {
            state.messages.append("(\(try message.value(forKey: "text") ?? "?").chat is not the marker)")
        }
        if Set(joined.map(\.objectID)) != Set(members.map(\.objectID)) { state.members.append("(chat.members differs)") }
        for member in members where ((try member.value(forKey: "chats") as? Set<ManagedObject>) ?? []).map(\.objectID) != [marker.objectID] {
            state.members.append("(\(try member.value(forKey: "name") ?? "?").chats is not the marker)")
        }
        let tracks = try context.fetch(FetchRequest<ManagedObject>(entityName: "Track"))
        if let playlist = try context.fetch(FetchRequest<ManagedObject>(entityName: "Playlist")).first {
            let listedTracks = Array((try playlist.value(forKey: "tracks") as? OrderedSet<ManagedObject>) ?? [])
            state.tracks = try names(listedTracks, "title")
            // Every Track row is the playlist's: one the list leaves out (a deletion lost) shows.
            if Set(listedTracks.map(\.objectID)) != Set(tracks.map(\.objectID)) { state.tracks.append("(playlist.tracks differs)") }
            for track in tracks where (try track.value(forKey: "playlist") as? ManagedObject)?.objectID != playlist.objectID {
                state.tracks.append("(\(try track.value(forKey: "title") ?? "?").playlist is not the playlist)")
            }
        }
        return (generation, state)
    }

    static func store(_ backend: String, in folder: String) -> StoreDescription? {
        allBackends.first { $0.name == backend }?.makeStore(URL(fileURLWithPath: folder, isDirectory: true))
    }

    /// The child: opens the store and saves generation after generation until killed.
    static func saveUntilKilled(_ backend: String, folder: String, killAfterMicroseconds delay: Int) throws -> Never {
        let killer = Thread {
            usleep(UInt32(delay))
            kill(getpid(), SIGKILL)
        }
        killer.start()
        guard let description = store(backend, in: folder) else { fatalError("no backend named \(backend)") }
        let container = try PersistentContainer(model: try ConformanceModel.make(), stores: [description])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            var generation = try read(context).generation
            let marker = try context.fetch(FetchRequest<ManagedObject>(entityName: "Chat"))[0]
            let playlist = try context.fetch(FetchRequest<ManagedObject>(entityName: "Playlist"))[0]
            while true {
                generation += 1
                try marker.setValue("generation \(generation)", forKey: "title")
                for message in try context.fetch(FetchRequest<ManagedObject>(entityName: "Message")) { context.delete(message) }
                for index in 0..<messagesPerGeneration {
                    let message = try context.insertObject(entityName: "Message")
                    try message.setValue("\(generation)-\(index)", forKey: "text")
                    try message.setValue(marker, forKey: "chat")
                }
                let member = try context.insertObject(entityName: "Member")
                try member.setValue("\(generation)", forKey: "name")
                try marker.add(member, to: "members")
                for old in try context.fetch(FetchRequest<ManagedObject>(entityName: "Member"))
                where Int(try old.value(forKey: "name") as? String ?? "") ?? 0 <= generation - 3 {
                    context.delete(old)
                }
                let track = try context.insertObject(entityName: "Track")
                try track.setValue("\(generation)", forKey: "title")
                try playlist.add(track, to: "tracks")
                for old in (try playlist.value(forKey: "tracks") as? OrderedSet<ManagedObject> ?? [])
                where Int(try old.value(forKey: "title") as? String ?? "") ?? 0 <= generation - 5 {
                    context.delete(old)
                }
                try context.save()
            }
        }
        fatalError("unreachable: the loop saves until the process is killed")
    }

    /// The comparison can fail: rows of a generation left behind, or left out of the lists
    /// that should name them, show in the state read.
    @Test("a stray row or a list disagreeing with the rows is seen by the state read", arguments: ["sqlite", "lmdb"])
    func strayRowsAreSeen(_ backend: String) throws {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("og-stray-\(backend)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let description = try #require(Self.store(backend, in: folder.path))
        let container = try PersistentContainer(model: try ConformanceModel.make(), stores: [description])
        defer { container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            try context.insertObject(entityName: "Chat").setValue("generation 0", forKey: "title")
            try context.insertObject(entityName: "Playlist").setValue("log", forKey: "name")
            try context.save()
            #expect(try Self.read(context).state == Self.expected(0))
            // A track of an older generation whose deletion was lost, out of the playlist.
            try context.insertObject(entityName: "Track").setValue("-4", forKey: "title")
            try context.save()
            #expect(try Self.read(context).state != Self.expected(0), "a Track row the playlist does not list")
        }
    }

    @Test("a process killed at random moments while saving leaves exactly one completed save", arguments: ["sqlite", "lmdb", "lmdb-indexed"])
    func killedWhileSaving(_ backend: String) async throws {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("og-killed-\(backend)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let description = try #require(Self.store(backend, in: folder.path))
        let model = try ConformanceModel.make()
        do {  // generation 0: the marker chat and the empty playlist
            let container = try PersistentContainer(model: model, stores: [description])
            let context = container.newBackgroundContext()
            try context.performAndWait {
                try context.insertObject(entityName: "Chat").setValue("generation 0", forKey: "title")
                try context.insertObject(entityName: "Playlist").setValue("log", forKey: "name")
                try context.save()
            }
            container.close()
        }
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SplitMix64(seed: seed)  // the delays, reproducible from the seed a failure reports
        var last = 0
        var generations: [Int] = []
        for iteration in 0..<Self.iterations {
            // The first child lives long enough to save whatever the machine's speed, so the
            // store moves past generation 0; the others die at random moments.
            let delay = iteration == 0 ? 400_000 : Int.random(in: 2_000...80_000, using: &random)
            await #expect(processExitsWith: .signal(SIGKILL), "iteration \(iteration), seed \(seed)") { [backend = backend as String, path = folder.path as String, delay = delay as Int] in
                try KilledWhileSavingTests.saveUntilKilled(backend, folder: path, killAfterMicroseconds: delay)
            }
            let container = try PersistentContainer(model: model, stores: [description])
            let context = container.newBackgroundContext()
            let (generation, state) = try context.performAndWait { try Self.read(context) }
            container.close()
            #expect(state == Self.expected(generation), "\(backend), iteration \(iteration) (seed \(seed), killed after \(delay) µs): \(state) is not generation \(generation) whole")
            #expect(generation >= last, "\(backend), iteration \(iteration): the store went back from generation \(last) to \(generation)")
            last = generation
            generations.append(generation)
        }
        print("killed while saving, \(backend): \(Self.iterations) kills (seed \(seed)); generations reached: \(generations)")
        #expect(last > 0, "the children completed saves before they were killed (generations \(generations))")
    }
}
