import ObjectGraph
import Testing

@Suite("Attribute values")
struct AttributeValuesTests {
    @Test("a stretch of a shared array reads its own values, and a change copies them out without touching the others")
    func sharedStretches() {
        let shared: [AttributeValue] = [.integer(1), "a", .integer(2), "b", .integer(3), "c"]
        var first = AttributeValues(sharing: shared, from: 0, count: 2)
        let second = AttributeValues(sharing: shared, from: 2, count: 2)
        let third = AttributeValues(sharing: shared, from: 4, count: 2)
        #expect(Array(first) == [.integer(1), "a"])
        #expect(second[0] == .integer(2) && second[1] == "b")
        #expect(third.count == 2 && third.array == [.integer(3), "c"])
        first[1] = "changed"
        #expect(Array(first) == [.integer(1), "changed"])
        #expect(Array(second) == [.integer(2), "b"])
        #expect(shared[1] == "a")
        var grown = second
        grown.append(.null)
        #expect(Array(grown) == [.integer(2), "b", .null] && Array(second) == [.integer(2), "b"])
    }

    @Test("equality and hashing are by values, wherever the values are stored")
    func equalityByValues() {
        let shared: [AttributeValue] = [.integer(9), .integer(1), "a"]
        let stretch = AttributeValues(sharing: shared, from: 1, count: 2)
        let own: AttributeValues = [.integer(1), "a"]
        #expect(stretch == own)
        #expect(stretch.hashValue == own.hashValue)
        #expect(stretch != AttributeValues([.integer(1)]))
        #expect(stretch.isSameStorage(as: stretch) && !stretch.isSameStorage(as: own))
        #expect(AttributeValues().isEmpty && own.description == [AttributeValue.integer(1), "a"].description)
    }

    @Test("a run hands its rows out in order, each with its own values, whatever the run length")
    func runs() {
        var run = RowRun()
        var rows: [RowSnapshot] = []
        let namespace = ObjectID.Namespace(entityName: "Item", storeIdentifier: "S")
        let count = RowRun.length * 2 + 5
        for key in 1...count {
            run.appendValue(.integer(Int64(key)))
            if key % 3 == 0 { run.appendValue("third") }  // rows of different widths
            run.endRow(objectID: namespace.objectID(primaryKey: Int64(key)), version: Int64(key), toOne: [], into: &rows)
        }
        run.flush(into: &rows)
        #expect(rows.count == count)
        for (offset, row) in rows.enumerated() {
            let key = Int64(offset + 1)
            #expect(row.objectID.primaryKey == key && row.version == key)
            #expect(Array(row.attributes) == (key % 3 == 0 ? [.integer(key), "third"] : [.integer(key)]))
        }
        // A change to one row stays in it.
        var changed = rows[1]
        changed.attributes[0] = .null
        #expect(rows[1].attributes[0] == .integer(2) && rows[2].attributes[0] == .integer(3))
    }

    @Test("a run of fixed-width rows gives each row its own stretch, across full runs, a partial last one and rows already in the answer")
    func fixedWidthRuns() {
        var rows: [RowSnapshot] = []
        let namespace = ObjectID.Namespace(entityName: "Item", storeIdentifier: "S")
        // A row from an earlier answer stays as it is: the run's rows start after it.
        rows.append(RowSnapshot(objectID: namespace.objectID(primaryKey: 0), version: 1, attributes: ["earlier"], toOne: []))
        var run = RowRun(width: 3)
        let count = RowRun.length * 2 + 7
        for key in 1...count {
            run.appendValue(.integer(Int64(key)))
            run.appendValue(.string("row \(key)"))
            run.appendValue(key.isMultiple(of: 2) ? .null : .double(Double(key)))
            run.endRow(objectID: namespace.objectID(primaryKey: Int64(key)), version: Int64(key), toOne: [nil], into: &rows)
        }
        run.flush(into: &rows)
        run.flush(into: &rows)  // nothing left: a second flush changes nothing
        #expect(rows.count == count + 1)
        #expect(Array(rows[0].attributes) == ["earlier"])
        for key in 1...count {
            let row = rows[key]
            #expect(row.objectID.primaryKey == Int64(key) && row.version == Int64(key) && row.toOne == [nil])
            #expect(Array(row.attributes) == [.integer(Int64(key)), .string("row \(key)"), key.isMultiple(of: 2) ? .null : .double(Double(key))])
        }
        // A change to one row of a run stays in it.
        var changed = rows[2]
        changed.attributes[1] = "changed"
        #expect(rows[2].attributes[1] == "row 2" && rows[3].attributes[1] == "row 3" && changed.attributes[1] == "changed")
    }
}
