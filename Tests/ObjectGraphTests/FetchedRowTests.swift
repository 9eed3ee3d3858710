import ObjectGraph
import Testing

@Suite("Fetched rows")
struct FetchedRowTests {
    @Test("reads like a dictionary: lookup, keys and values in column order, iteration")
    func reading() {
        let row: FetchedRow = ["title": "lunch", "count": .integer(3)]
        #expect(row["title"] == .string("lunch"))
        #expect(row["count"] == .integer(3))
        #expect(row["missing"] == nil)
        #expect(row.keys == ["title", "count"])
        #expect(row.values == [.string("lunch"), .integer(3)])
        #expect(row.count == 2 && !row.isEmpty)
        #expect(row.map(\.key) == ["title", "count"])
        #expect(row.dictionary == ["title": .string("lunch"), "count": .integer(3)])
        #expect(FetchedRow(row.dictionary) == row)
        #expect(FetchedRow([String: AttributeValue]()).isEmpty)
    }

    @Test("equality and hashing ignore column order, as a dictionary's do")
    func equalityIgnoresOrder() {
        let a: FetchedRow = ["x": .integer(1), "y": "b"]
        let b: FetchedRow = ["y": "b", "x": .integer(1)]
        let c: FetchedRow = ["x": .integer(1), "y": "c"]
        let d: FetchedRow = ["x": .integer(1)]
        let e: FetchedRow = ["x": .integer(1), "z": "b"]
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(a != c && a != d && d != a && a != e)
        #expect(Set([a, b, c, d]).count == 3)
    }

    @Test("setting a value replaces it, adds a column, or with nil removes one; copies stay apart")
    func writing() {
        var row: FetchedRow = ["x": .integer(1), "y": "b"]
        let original = row
        row["x"] = .integer(2)
        #expect(row["x"] == .integer(2) && original["x"] == .integer(1))
        row["z"] = .null
        #expect(row.keys == ["x", "y", "z"] && original.keys == ["x", "y"])
        row["y"] = nil
        #expect(row == ["x": .integer(2), "z": .null])
        row["nothing"] = nil
        #expect(row.count == 2)
        let repeated = FetchedRow([("x", AttributeValue.integer(1)), ("x", .integer(5))])
        #expect(repeated == ["x": .integer(5)])
    }

    @Test("wide rows look names up through the shared table")
    func wideRows() {
        let names = (0..<20).map { "column\($0)" }
        var row = FetchedRow(names.enumerated().map { ($1, AttributeValue.integer(Int64($0))) })
        #expect(names.indices.allSatisfy { row[names[$0]] == .integer(Int64($0)) })
        #expect(row["column20"] == nil)
        row["column7"] = .string("seven")
        #expect(row["column7"] == .string("seven") && row.count == 20)
    }

    @Test("describes itself as a dictionary literal in column order")
    func description() {
        let row: FetchedRow = ["title": "lunch", "count": .integer(3)]
        #expect(row.description == "[\"title\": \(AttributeValue.string("lunch")), \"count\": \(AttributeValue.integer(3))]")
        #expect(FetchedRow([String: AttributeValue]()).description == "[:]")
    }
}
