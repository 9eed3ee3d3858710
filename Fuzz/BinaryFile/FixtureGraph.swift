import Foundation
import ObjectGraph

/// Random graphs in ``FixtureModel``, built through a context so that they are what a real
/// application would save: every attribute type with its edge cases (extreme integers, NaN,
/// −0 and infinities, NUL bytes and combining marks, relative URLs, nil) and every relationship
/// kind, ordered members included.
enum FixtureGraph {
    /// Inserts about `people` persons with passports, teams, clubs, tags and playlists, and
    /// saves. Call inside `context.performAndWait`.
    static func populate(_ context: ManagedObjectContext, seed: UInt64, people: Int) throws {
        var random = SeededGenerator(seed: seed)
        let tags = try (0..<max(2, people / 4)).map { index -> ManagedObject in
            let tag = try context.insertObject(entityName: "Tag")
            try tag.setValue("tag \(index)", forKey: "label")
            return tag
        }
        let teams = try (0..<max(1, people / 8)).map { index -> ManagedObject in
            let team = try context.insertObject(entityName: "Team")
            try team.setValue("team \(index)", forKey: "name")
            return team
        }
        let clubs = try (0..<max(1, people / 6)).map { index -> ManagedObject in
            let club = try context.insertObject(entityName: "Club")
            try club.setValue("club \(index)", forKey: "name")
            return club
        }
        for index in 0..<people {
            let person = try context.insertObject(entityName: Bool.random(using: &random) ? "Person" : "Captain")
            try fill(person, index: index, &random)
            if Int.random(in: 0..<3, using: &random) > 0 {
                let passport = try context.insertObject(entityName: "Passport")
                try passport.setValue("P-\(index)", forKey: "number")
                try person.setValue(passport, forKey: "passport")
            }
            if Bool.random(using: &random) { try person.setValue(teams.randomElement(using: &random), forKey: "team") }
            for club in clubs where Int.random(in: 0..<3, using: &random) == 0 { try person.add(club, to: "clubs") }
            for tag in tags where Int.random(in: 0..<4, using: &random) == 0 { try person.add(tag, to: "tags") }
            if Bool.random(using: &random) { try person.setValue(tags.randomElement(using: &random), forKey: "favourite") }
        }
        for index in 0..<max(1, people / 10) {
            let playlist = try context.insertObject(entityName: "Playlist")
            try playlist.setValue("playlist \(index)", forKey: "name")
            for position in 0..<Int.random(in: 0..<6, using: &random) {
                // Inserting at random positions makes the stored order differ from key order.
                let track = try context.insertObject(entityName: "Track")
                try track.setValue("track \(index).\(position)", forKey: "title")
                try playlist.insert(track, at: Int.random(in: 0...position, using: &random), in: "tracks")
            }
        }
        try context.save()
    }

    /// Sets every attribute of `person`, each to nil one time in eight.
    static func fill(_ person: ManagedObject, index: Int, _ random: inout SeededGenerator) throws {
        func pick<T>(_ values: [T]) -> T? { Int.random(in: 0..<8, using: &random) == 0 ? nil : values.randomElement(using: &random) }
        try person.setValue(pick([Int16.min, -1, 0, Int16.max, Int16(truncatingIfNeeded: index)]), forKey: "i16")
        try person.setValue(pick([Int32.min, Int32.max, 0, Int32(index)]), forKey: "i32")
        try person.setValue(pick([Int64.min, Int64.max, 0, -1, Int64(index) * 1_000_003]), forKey: "i64")
        try person.setValue(pick([Double.nan, -0.0, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.1, Double(index) / 7]), forKey: "dbl")
        try person.setValue(pick([Float.nan, -0.0, Float.infinity, 1.5, Float(index) / 3]), forKey: "flt")
        try person.setValue(pick([Decimal(string: "-123.4500")!, Decimal(string: "3402823669209384634633746074317682114.55")!, Decimal(index), Decimal.nan, Decimal(string: "0.000000000000000000000000000001")!]), forKey: "dec")
        try person.setValue(pick(["", "a\u{0}b\u{0}", "é", "e\u{301}", "🧪 \(index)", String(repeating: "x", count: 300)]), forKey: "str")
        try person.setValue(pick([true, false]), forKey: "flag")
        try person.setValue(pick([Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: -1e10 + 0.123456789), Date(timeIntervalSince1970: 1.7e9 + Double(index))]), forKey: "when")
        try person.setValue(pick([Data(), Data((0...255).map { UInt8($0) }), Data("\(index)".utf8)]), forKey: "blob")
        try person.setValue(pick([UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!]), forKey: "uid")
        try person.setValue(pick([URL(string: "https://example.com/a?b=c#d")!, URL(fileURLWithPath: "/tmp/a b/"), URL(string: "sub/x", relativeTo: URL(string: "http://a.com/b/"))!]), forKey: "link")
        try person.setValue(pick([FixtureModel.Badge(title: "gold", level: index), FixtureModel.Badge(title: "", level: -1)]), forKey: "badge")
        if person.entity.name == "Captain" { try person.setValue(pick([Int16(1), Int16.max]), forKey: "rank") }
    }
}
