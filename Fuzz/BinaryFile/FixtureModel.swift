import Foundation
import ObjectGraph

/// The binary store's fixture: a model with every attribute type and every relationship kind,
/// and a seeded generator of graphs in it. The fuzz harness makes its seed files with it and
/// `Tests/BinaryFileTests` its round trips, so both exercise every encoding.
///
/// - `Person` (and its sub-entity `Captain`): one attribute of every type; `passport`
///   one-to-one; `team` many-to-one; `clubs` many-to-many; `tags` many-to-nil; `favourite`
///   one-to-nil.
/// - `Playlist.tracks`: an ordered one-to-many.
enum FixtureModel {
    /// The transformable attribute's value type.
    struct Badge: Codable, Sendable, Hashable {
        var title: String
        var level: Int
    }

    static func make() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Person") { e in
                e.attribute("i16", .integer16, optional: true)
                e.attribute("i32", .integer32, optional: true)
                e.attribute("i64", .integer64, optional: true)
                e.attribute("dbl", .double, optional: true)
                e.attribute("flt", .float, optional: true)
                e.attribute("dec", .decimal, optional: true)
                e.attribute("str", .string, optional: true)
                e.attribute("flag", .boolean, optional: true)
                e.attribute("when", .date, optional: true)
                e.attribute("blob", .binaryData, optional: true)
                e.attribute("uid", .uuid, optional: true)
                e.attribute("link", .uri, optional: true)
                e.transformable("badge", Badge.self)
                e.toOne("passport", "Passport", inverse: "holder", deleteRule: .cascade)
                e.toOne("team", "Team", inverse: "members")
                e.toMany("clubs", "Club", inverse: "people")
                e.toMany("tags", "Tag")
                e.toOne("favourite", "Tag")
            }
            m.entity("Captain", parent: "Person") { e in e.attribute("rank", .integer16, optional: true) }
            m.entity("Passport") { e in
                e.attribute("number", .string, optional: true)
                e.toOne("holder", "Person", inverse: "passport")
            }
            m.entity("Team") { e in
                e.attribute("name", .string, optional: true)
                e.toMany("members", "Person", inverse: "team")
            }
            m.entity("Club") { e in
                e.attribute("name", .string, optional: true)
                e.toMany("people", "Person", inverse: "clubs")
            }
            m.entity("Tag") { e in e.attribute("label", .string, optional: true) }
            m.entity("Playlist") { e in
                e.attribute("name", .string, optional: true)
                e.toMany("tracks", "Track", inverse: "playlist", deleteRule: .cascade, ordered: true)
            }
            m.entity("Track") { e in
                e.attribute("title", .string, optional: true)
                e.toOne("playlist", "Playlist", inverse: "tracks")
            }
        }
    }
}

/// SplitMix64: a small, seedable generator, so a fixture or a fuzz run can be repeated.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
