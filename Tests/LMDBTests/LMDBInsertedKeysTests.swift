import ObjectGraph
@testable import ObjectGraphLMDB
import Testing

@Suite("LMDB inserted keys")
struct LMDBInsertedKeysTests {
    static func rows(_ namespace: ObjectID.Namespace, _ keys: some Sequence<Int64>) -> [RowSnapshot] {
        keys.map { RowSnapshot(objectID: namespace.objectID(primaryKey: $0), version: 1, attributes: [AttributeValue](), toOne: []) }
    }

    @Test("runs, scattered keys and several entities answer exactly as a set of the IDs")
    func answersAsASet() {
        let messages = ObjectID.Namespace(entityName: "Message", storeIdentifier: "S")
        let chats = ObjectID.Namespace(entityName: "Chat", storeIdentifier: "S")
        let tags = ObjectID.Namespace(entityName: "Tag", storeIdentifier: "S")
        let other = ObjectID.Namespace(entityName: "Message", storeIdentifier: "T")
        // A run with gaps (a bitmap), keys far apart (a set), and rows of two entities interleaved.
        var rows = Self.rows(messages, Array(1_000...1_300).filter { $0 % 7 != 0 })
        rows += Self.rows(tags, [5, 1 << 40, Int64.max, Int64.min + 1])
        rows.insert(contentsOf: Self.rows(chats, [3, 1, 2]), at: 40)
        let keys = InsertedKeys(rows)
        let expected = Set(rows.map(\.objectID))
        var probes: [ObjectID] = []
        for namespace in [messages, chats, tags, other] {
            for key in [Int64.min + 1, -1, 0, 1, 2, 3, 4, 5, 6, 999, 1_000, 1_007, 1_008, 1_300, 1_301, 1 << 40, Int64.max] {
                probes.append(namespace.objectID(primaryKey: key))
            }
        }
        for id in probes {
            #expect(keys.contains(id) == expected.contains(id), "\(id)")
        }
        #expect(probes.filter(keys.contains).count == probes.filter(expected.contains).count)
        #expect(!InsertedKeys().contains(messages.objectID(primaryKey: 1)))
    }
}
