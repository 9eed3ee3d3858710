import ObjectGraph
@testable import ObjectGraphLMDB
import Testing

@Suite("LMDB group index")
struct LMDBGroupIndexTests {
    @Test("keys find the group of an equal key, whatever their kind, past the size it was made for")
    func findsEqualKeys() {
        // ASCII strings, integers, nulls and dates, each several times, more than the stated
        // capacity.
        let distinct: [AttributeValue] = (0..<300).map { .string("chat \($0)") }
            + ["", "K", .integer(7), .integer(8), .null, .date(.init(timeIntervalSinceReferenceDate: 5))]
        let keys = distinct + distinct.reversed() + distinct
        var index = GroupIndex(capacity: 10)
        var groups: [AttributeValue] = []
        var assigned: [Int] = []
        for key in keys {
            if let position = index.position(of: key, insertingAs: groups.count, keyAt: { groups[$0] }) {
                assigned.append(position)
            } else {
                assigned.append(groups.count)
                groups.append(key)
            }
        }
        #expect(groups == distinct)
        for (key, position) in zip(keys, assigned) {
            #expect(groups[position] == key)
        }
        // Strings equal only by canonical equivalence are one group, as for the shared
        // grouping: the Kelvin sign is "K", and "é" has two forms.
        let more: [AttributeValue] = ["\u{212A}", "e\u{301}", "\u{e9}", "chat 7", .integer(7)]
        var found: [Int?] = []
        for key in more {
            let position = index.position(of: key, insertingAs: groups.count, keyAt: { groups[$0] })
            if position == nil { groups.append(key) }
            found.append(position)
        }
        #expect(found == [301, nil, groups.count - 1, 7, 302])
    }
}
