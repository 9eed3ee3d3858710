import Foundation
import ObjectGraph
import ObjectGraphBinaryFile
@testable import ObjectGraphBinaryFileFuzz
import OrderedCollections
import Testing

/// Crash safety: a child process saves one generation after another until a timer in it
/// sends it SIGKILL at a random moment — while opening, encoding, writing, flushing or
/// renaming — and the parent then reopens the store, which must hold exactly the state of one
/// completed save (never older than the last one it saw), with nothing left locked.
///
/// Generation `g` is a pure function of `g` (``expectedState(_:)``), so the parent can tell
/// which save it is looking at and whether every row of it is there.
@Suite("Binary store crash safety")
struct BinaryFileCrashTests {
    static let iterations = 100

    static func sharedStore(processID: Int32) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("og-binary-crash-\(processID)/store.bin")
    }

    /// What generation `g` holds: the marker team's name, the people's strings and blob sizes
    /// (steps g-1 and g), and the log playlist's track titles, in order (the last five steps).
    struct State: Equatable {
        var marker: String
        var people: [String: Int]
        var tracks: [String]
    }

    static func expectedState(_ generation: Int) -> State {
        var people: [String: Int] = [:]
        for step in max(1, generation - 1)...max(1, generation) where generation > 0 {
            for index in 0..<peoplePerStep { people["\(step)-\(index)"] = blobSize(step, index) }
        }
        let tracks = generation == 0 ? [] : (max(1, generation - 4)...generation).map { "\($0)" }
        return State(marker: "generation \(generation)", people: people, tracks: tracks)
    }

    static let peoplePerStep = 40
    static func blobSize(_ step: Int, _ index: Int) -> Int { (step * 131 + index * 17) % 3000 }

    /// Reads the state a container holds.
    static func readState(_ context: ManagedObjectContext) throws -> (generation: Int, state: State) {
        let teams = try context.fetch(FetchRequest<ManagedObject>(entityName: "Team"))
        guard teams.count == 1, let marker = try teams[0].value(forKey: "name") as? String,
              let generation = Int(marker.dropFirst("generation ".count)) else {
            throw StoreError(.backend, "no single marker team: \(teams.count) teams")
        }
        var people: [String: Int] = [:]
        for person in try context.fetch(FetchRequest<ManagedObject>(entityName: "Person")) {
            people[try person.value(forKey: "str") as? String ?? "?"] = (try person.value(forKey: "blob") as? Data)?.count ?? -1
        }
        let playlist = try context.fetch(FetchRequest<ManagedObject>(entityName: "Playlist")).first
        let tracks = try (playlist?.value(forKey: "tracks") as? OrderedSet<ManagedObject> ?? []).map { try $0.value(forKey: "title") as? String ?? "?" }
        return (generation, State(marker: marker, people: people, tracks: tracks))
    }

    /// The child: opens the store and saves generation after generation until killed.
    static func saveUntilKilled(url: URL, killAfterMicroseconds delay: Int) throws -> Never {
        let killer = Thread {
            usleep(UInt32(delay))
            kill(getpid(), SIGKILL)
        }
        killer.start()
        let container = try PersistentContainer(model: FuzzInput.model, stores: [.binaryFile(at: url)])
        let context = container.newBackgroundContext()
        try context.performAndWait {
            var generation = try readState(context).generation
            let marker = try context.fetch(FetchRequest<ManagedObject>(entityName: "Team"))[0]
            let playlist = try context.fetch(FetchRequest<ManagedObject>(entityName: "Playlist"))[0]
            while true {
                generation += 1
                try marker.setValue("generation \(generation)", forKey: "name")
                for person in try context.fetch(FetchRequest<ManagedObject>(entityName: "Person"))
                where (try person.value(forKey: "str") as? String)?.hasPrefix("\(generation - 2)-") == true {
                    context.delete(person)
                }
                for index in 0..<peoplePerStep {
                    let person = try context.insertObject(entityName: "Person")
                    try person.setValue("\(generation)-\(index)", forKey: "str")
                    try person.setValue(Data(repeating: UInt8(truncatingIfNeeded: index), count: blobSize(generation, index)), forKey: "blob")
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

    @Test("a process killed at random moments while saving always leaves one complete saved state")
    func killedWhileSaving() async throws {
        let url = Self.sharedStore(processID: getpid())
        try? FileManager.default.removeItem(at: url.deletingLastPathComponent())
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        do {  // generation 0: the marker and the empty log
            let container = try PersistentContainer(model: FuzzInput.model, stores: [.binaryFile(at: url)])
            let context = container.newBackgroundContext()
            try context.performAndWait {
                try context.insertObject(entityName: "Team").setValue("generation 0", forKey: "name")
                try context.insertObject(entityName: "Playlist").setValue("log", forKey: "name")
                try context.save()
            }
            container.close()
        }
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededGenerator(seed: seed)
        var last = 0
        var generations: [Int] = []
        var killedMidWrite = 0
        for iteration in 0..<Self.iterations {
            let delay = Int.random(in: 1_000...60_000, using: &random)
            await #expect(processExitsWith: .signal(SIGKILL), "iteration \(iteration), seed \(seed)") { [delay = delay as Int] in
                try BinaryFileCrashTests.saveUntilKilled(url: BinaryFileCrashTests.sharedStore(processID: getppid()), killAfterMicroseconds: delay)
            }
            let folder = url.deletingLastPathComponent().path
            if try FileManager.default.contentsOfDirectory(atPath: folder).contains(where: { $0.hasSuffix(".tmp") }) { killedMidWrite += 1 }
            let container = try PersistentContainer(model: FuzzInput.model, stores: [.binaryFile(at: url)])
            let context = container.newBackgroundContext()
            let (generation, state) = try context.performAndWait { try Self.readState(context) }
            container.close()
            #expect(state == Self.expectedState(generation), "iteration \(iteration) (seed \(seed), killed after \(delay) µs): generation \(generation) is incomplete")
            #expect(generation >= last, "iteration \(iteration): the store went back from generation \(last) to \(generation)")
            last = generation
            generations.append(generation)
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".tmp") }
            #expect(leftovers.isEmpty, "the opener removed the temporary files the killed saves left: \(leftovers)")
        }
        print("binary store crash test: \(Self.iterations) kills (seed \(seed)), \(killedMidWrite) while a temporary file was being written; generations reached: \(generations)")
        #expect(last > 0, "the children completed saves before they were killed (generations \(generations))")
    }
}
