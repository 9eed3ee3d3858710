import Foundation
import ObjectGraph
@testable import ObjectGraphLMDB
import Testing

/// The buffer a save encodes rows into: what it writes must be what ``ByteWriter`` writes (the
/// reader is shared), including past the size a row reserved, which only a reference to an
/// entity outside the store's layout (written by name) reaches.
@Suite("LMDB row buffer")
struct LMDBRowBufferTests {
    @Test("writes the bytes ByteWriter writes, growing past its capacity, and starts over on reset")
    func sameBytesAsByteWriter() throws {
        var buffer = RowBuffer(capacity: 16)
        var writer = ByteWriter()
        let long = String(repeating: "é∑x", count: 40)
        let data: [UInt8] = Array(0...255)
        for round in 0..<2 {
            // The second round reserves less than it writes: each write must still fit.
            buffer.reset(reserving: round == 0 ? 8 : 4)
            writer = ByteWriter()
            buffer.u8(7); writer.u8(7)
            buffer.u16(0xBEEF); writer.u16(0xBEEF)
            buffer.u32(0xDEAD_BEEF); writer.u32(0xDEAD_BEEF)
            buffer.u64(0x0123_4567_89AB_CDEF); writer.u64(0x0123_4567_89AB_CDEF)
            buffer.orderedInt64(-42); writer.orderedInt64(-42)
            buffer.string(long); writer.string(long)
            data.withUnsafeBytes { buffer.blob($0) }; writer.blob(data)
            buffer.string(""); writer.string("")
            #expect(Array(buffer.bytes) == writer.bytes, "round \(round)")
            #expect(buffer.count == writer.bytes.count)
        }
        var reader = ByteReader(buffer.bytes)
        #expect(try reader.u8() == 7)
        #expect(try reader.u16() == 0xBEEF)
        #expect(try reader.u32() == 0xDEAD_BEEF)
        #expect(try reader.u64() == 0x0123_4567_89AB_CDEF)
        #expect(try reader.orderedInt64() == -42)
        #expect(try reader.string() == long)
        #expect(Array(try reader.blob()) == data)
        #expect(try reader.string() == "")
        #expect(reader.isAtEnd)
    }

    @Test("a row naming an entity outside the layout by a long name round-trips (it outgrows its reservation)")
    func referenceOutsideTheStore() throws {
        let farName = String(repeating: "AnEntityOutsideTheLayout", count: 8)
        let model = try ManagedObjectModel { m in
            m.entity("Note") { e in
                e.attribute("text", .string)
                e.attribute("data", .binaryData, optional: true)
                e.toOne("elsewhere", farName, optional: true)
            }
            m.entity(farName) { e in e.attribute("text", .string) }
        }
        // The layout holds Note alone (as a store of one configuration would).
        let layout = LMDBLayout(model: model, entities: model.entities.filter { $0.name == "Note" }, indexEverything: false)
        let codec = RowCodec(layout: layout, storeIdentifier: "S")
        // (References name rows of the same store: the coordinator refuses others.)
        let far = ObjectID(entityName: farName, storeIdentifier: "S", primaryKey: 9)
        let id = ObjectID(entityName: "Note", storeIdentifier: "S", primaryKey: 1)
        let row = RowSnapshot(objectID: id, version: 3, attributes: [.string("hello"), .data(Data([1, 2, 3]))], toOne: [far])
        var buffer = RowBuffer(capacity: 16)
        withUnsafePointer(to: row) { codec.encode($0, into: &buffer) }
        let decoded = try codec.decode(buffer.bytes, primaryKey: 1)
        #expect(decoded.version == 3)
        #expect(Array(decoded.attributes) == [.string("hello"), .data(Data([1, 2, 3]))])
        #expect(decoded.toOne[0] == far)
        #expect(decoded.toOne[0]?.entityName == far.entityName)
    }

    @Test("a reference by name to an entity outside its to-one's destination is refused as damage")
    func referenceByNameOutsideTheDestination() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Note") { e in
                e.attribute("text", .string)
                e.toOne("elsewhere", "Far", optional: true)
            }
            m.entity("Far") { e in e.attribute("text", .string) }
            m.entity("Other") { e in e.attribute("text", .string) }
        }
        let layout = LMDBLayout(model: model, entities: model.entities.filter { $0.name == "Note" }, indexEverything: false)
        let codec = RowCodec(layout: layout, storeIdentifier: "S")
        let id = ObjectID(entityName: "Note", storeIdentifier: "S", primaryKey: 1)
        for (name, refused) in [("Far", false), ("Other", true)] {
            let row = RowSnapshot(objectID: id, version: 1, attributes: [.string("x")], toOne: [ObjectID(entityName: name, storeIdentifier: "S", primaryKey: 2)])
            var buffer = RowBuffer(capacity: 16)
            withUnsafePointer(to: row) { codec.encode($0, into: &buffer) }
            if refused {
                #expect(throws: ByteReader.Truncated.self, "\(name)") { _ = try codec.decode(buffer.bytes, primaryKey: 1) }
            } else {
                #expect(try codec.decode(buffer.bytes, primaryKey: 1).toOne[0]?.entityName == name)
            }
        }
    }
}
