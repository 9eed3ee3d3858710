import Foundation
import ObjectGraph
import ObjectGraphSQLite
import Testing

/// Ordered to-manys are stored with gaps between positions (see `OrderPositions`), so that an
/// insert in the middle writes the new member's position and leaves the others' rows alone —
/// checked here on the file, for both ways the schema stores an ordered to-many.
@Suite("SQLite ordered to-many positions")
struct SQLiteOrderGapTests {
    enum Storage: String, CaseIterable, CustomTestStringConvertible {
        /// Ordered one-to-many with a to-one inverse: an order column on the members' table.
        case foreignKey
        /// Ordered many-to-many: the join table's `pos`.
        case joinTable

        var testDescription: String { rawValue }
        var owner: String { self == .foreignKey ? "Board" : "Playlist" }
        var member: String { self == .foreignKey ? "Pin" : "Song" }
        var key: String { self == .foreignKey ? "pins" : "songs" }

        /// `name=position` of each stored member of the one owner, by stored position.
        var positionsSQL: String {
            switch self {
            case .foreignKey:
                #"SELECT "a:Pin.name" || '=' || "ord:Board.pins" FROM "Pin" ORDER BY "ord:Board.pins""#
            case .joinTable:
                #"SELECT s."a:Song.name" || '=' || j.pos FROM "j:Playlist.songs" j JOIN "Song" s ON s.pk = j.dst ORDER BY j.pos"#
            }
        }
    }

    /// The stored positions, in stored order, read through a connection of the test's own.
    static func positions(_ url: URL, _ storage: Storage) throws -> [(name: String, position: Int64)] {
        try SQLiteStoreTests.strings(url, storage.positionsSQL).map { row in
            let parts = row.split(separator: "=")
            return (String(parts[0]), try #require(Int64(parts[1]), "\(row)"))
        }
    }

    @Test("inserting a member in the middle writes only its position, between its neighbours'", arguments: Storage.allCases)
    func insertInTheMiddleWritesOneRow(_ storage: Storage) throws {
        let url = try SQLiteStoreTests.temporaryFile()
        let model = try SQLiteOrderedListTests.model()
        let container = try PersistentContainer(model: model, stores: [.sqlite(at: url)])
        let context = container.newBackgroundContext()
        let ownerID = try context.performAndWait {
            let owner = try context.insertObject(entityName: storage.owner)
            try owner.setValue("owner", forKey: "name")
            for index in 0..<5 {
                let member = try context.insertObject(entityName: storage.member)
                try member.setValue("m\(index)", forKey: "name")
                try owner.add(member, to: storage.key)
            }
            try context.save()
            return owner.objectID
        }
        let before = try Self.positions(url, storage)
        #expect(before.map(\.name) == ["m0", "m1", "m2", "m3", "m4"])
        #expect(zip(before, before.dropFirst()).allSatisfy { $0.position < $1.position }, "\(before)")

        try context.performAndWait {
            let member = try context.insertObject(entityName: storage.member)
            try member.setValue("new", forKey: "name")
            try context.existingObject(with: ownerID).insert(member, at: 2, in: storage.key)
            try context.save()
        }
        let after = try Self.positions(url, storage)
        #expect(after.map(\.name) == ["m0", "m1", "new", "m2", "m3", "m4"])
        #expect(zip(after, after.dropFirst()).allSatisfy { $0.position < $1.position }, "\(after)")
        // One row written: the new member's. Every earlier member keeps its stored position.
        let kept = Dictionary(uniqueKeysWithValues: before.map { ($0.name, $0.position) })
        let changed = after.filter { kept[$0.name] != $0.position }.map(\.name)
        #expect(changed == ["new"], "\(before) then \(after)")
        container.close()

        let reopened = try PersistentContainer(model: model, stores: [.sqlite(at: url)])
        defer { reopened.close() }
        let reader = reopened.newBackgroundContext()
        let names = try reader.performAndWait {
            try reader.existingObject(with: ownerID).objectIDs(forRelationshipNamed: storage.key).map {
                try reader.existingObject(with: $0).value(forKey: "name") as? String
            }
        }
        #expect(names == ["m0", "m1", "new", "m2", "m3", "m4"])
    }
}
