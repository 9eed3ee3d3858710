import Foundation
import ObjectGraph
import Testing

/// ToOneValues keeps its first destination inline and the rest in an array; from outside it
/// must behave exactly like an array of `ObjectID?`.
@Suite("To-one values")
struct ToOneValuesTests {
    let chat = ObjectID(entityName: "Chat", storeIdentifier: "S", primaryKey: 3)
    let author = ObjectID(entityName: "Person", storeIdentifier: "S", primaryKey: 9)
    let other = ObjectID(entityName: "Person", storeIdentifier: "T", primaryKey: 9)

    @Test func behavesLikeAnArray() {
        let shapes: [[ObjectID?]] = [[], [nil], [chat], [nil, nil], [chat, nil], [nil, author], [chat, author, other], [nil, nil, nil, chat]]
        for shape in shapes {
            let values = ToOneValues(shape)
            #expect(values.count == shape.count)
            #expect(values.array == shape)
            #expect(Array(values) == shape)
            var appended = ToOneValues()
            for value in shape { appended.append(value) }
            #expect(appended == values, "appending \(shape)")
            #expect(appended.hashValue == values.hashValue)
        }
        #expect(ToOneValues(repeating: nil, count: 3).array == [nil, nil, nil])
        #expect(ToOneValues(repeating: chat, count: 2).array == [chat, chat])
        #expect(ToOneValues(repeating: chat, count: 0).isEmpty)
        #expect(([chat, nil] as ToOneValues).array == [chat, nil])
    }

    @Test func singleDestinationEqualsTheOneElementCollection() {
        for value in [nil, chat, author] as [ObjectID?] {
            let single = ToOneValues(single: value)
            #expect(single == ToOneValues([value]) && single.hashValue == ToOneValues([value]).hashValue)
            #expect(single.count == 1 && single[0] == value)
        }
        #expect(ToOneValues(single: nil) != ToOneValues())
    }

    @Test func emptyNilAndIDsAreDistinct() {
        let distinct: [ToOneValues] = [[], [nil], [chat], [author], [other], [nil, nil], [chat, nil], [nil, chat]]
        for (i, a) in distinct.enumerated() {
            for (j, b) in distinct.enumerated() {
                #expect((a == b) == (i == j), "\(a) vs \(b)")
            }
        }
        #expect(Set(distinct).count == distinct.count)
    }

    @Test func slotsAreWrittenInPlace() throws {
        var values = ToOneValues(repeating: nil, count: 3)
        values[0] = chat
        values[2] = author
        #expect(values.array == [chat, nil, author])
        values[0] = nil
        #expect(values.array == [nil, nil, author])
        #expect(values.count == 3)
        // A temporary ID (store token 0) in the inline slot is an ID, not "no slot".
        let model = try ManagedObjectModel { m in m.entity("Note") { e in e.attribute("text", .string, optional: true) } }
        let temporary = ManagedObject(entity: try #require(model.entity(named: "Note")), insertInto: nil).objectID
        #expect(temporary.isTemporary)
        values[0] = temporary
        #expect(values[0] == temporary)
        #expect(values.count == 3)
    }

    @Test func snapshotsFromArraysAndValuesAgree() {
        let id = ObjectID(entityName: "Message", storeIdentifier: "S", primaryKey: 1)
        let fromArray = RowSnapshot(objectID: id, version: 1, attributes: [.string("a")], toOne: [chat, nil])
        let fromValues = RowSnapshot(objectID: id, version: 1, attributes: [.string("a")], toOne: ToOneValues([chat, nil]))
        #expect(fromArray == fromValues)
        #expect(fromArray.toOne[0] == chat)
        #expect(fromArray.toOne[1] == nil)
    }
}
