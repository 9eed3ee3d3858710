import CSQLite
import Foundation
import ObjectGraph
@testable import ObjectGraphSQLite
import Testing

/// An ordered to-many kept in its members' rows (a position column next to the foreign key):
/// saving its order reads the members' positions in chunks, so a list of any length saves.
@Suite("SQLite ordered lists")
struct SQLiteOrderedListTests {
    /// Ordered to-manys stored both ways: `Board.pins` in an order column on the pins' rows (its
    /// inverse is to-one), `Playlist.songs` in its join table's `pos` (many-to-many).
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Board") { e in
                e.attribute("name", .string)
                e.toMany("pins", "Pin", inverse: "board", ordered: true)
            }
            m.entity("Pin") { e in
                e.attribute("name", .string)
                e.toOne("board", "Board", inverse: "pins")
            }
            m.entity("Playlist") { e in
                e.attribute("name", .string)
                e.toMany("songs", "Song", inverse: "playlists", ordered: true)
            }
            m.entity("Song") { e in
                e.attribute("name", .string)
                e.toMany("playlists", "Playlist", inverse: "songs")
            }
        }
    }

    @Test("an ordered list longer than SQLite's bound-parameter limit saves, reorders and reads back in order")
    func listLongerThanTheParameterLimit() throws {
        let model = try Self.model()
        let url = try SQLiteStoreTests.temporaryFile()
        let container = try PersistentContainer(model: model, stores: [.sqlite(at: url)])
        defer { container.close() }
        let store = try #require(container.coordinator.persistentStores.first as? SQLiteStore)
        // The limit is lowered on the store's connections (to above the store's own chunks of
        // 500), so that a list of 700 crosses it instead of one of 250,000 or more.
        let limited = store.withIdleConnections { connections in
            connections.compactMap(\.handle).map { sqlite3_limit($0, SQLITE_LIMIT_VARIABLE_NUMBER, 600) }.count
        }
        try #require(limited > 0, "the store has an open connection")
        let count = 700
        let context = container.newBackgroundContext()
        let boardID = try context.performAndWait {
            let board = try context.insertObject(entityName: "Board")
            try board.setValue("b", forKey: "name")
            for index in 0..<count {
                let pin = try context.insertObject(entityName: "Pin")
                try pin.setValue("p\(index)", forKey: "name")
                try board.add(pin, to: "pins")
            }
            try context.save()
            try board.move(from: 0, to: count - 1, in: "pins")
            try context.save()
            return board.objectID
        }
        let reader = container.newBackgroundContext()
        let names = try reader.performAndWait {
            let board = try reader.existingObject(with: boardID)
            return try board.objectIDs(forRelationshipNamed: "pins").map { try reader.existingObject(with: $0).value(forKey: "name") as! String }
        }
        #expect(names == (1..<count).map { "p\($0)" } + ["p0"])
    }
}
