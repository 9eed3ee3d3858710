@testable import ObjectGraph
import Testing

/// The keys and sets that replace hashed lookups on every fetch and count.
@Suite("Lookup keys")
struct LookupKeyTests {
    final class Probe {}
    final class Other {}

    @Test("identity keys are equal exactly when the objects or classes are the same")
    func identityKeysCompareByIdentity() {
        let first = Probe(), second = Probe()
        #expect(IdentityKey(first) == IdentityKey(first))
        #expect(IdentityKey(first) != IdentityKey(second))
        #expect(IdentityKey(Probe.self) == IdentityKey(Probe.self))
        #expect(IdentityKey(Probe.self) != IdentityKey(Other.self))
        // A table keyed by identity finds every one of many objects, and no stranger.
        let objects = (0..<1000).map { _ in Probe() }
        var table: [IdentityKey: Int] = [:]
        for (offset, object) in objects.enumerated() { table[IdentityKey(object)] = offset }
        #expect(table.count == objects.count)
        #expect(objects.enumerated().allSatisfy { table[IdentityKey($1)] == $0 })
        #expect(table[IdentityKey(Probe())] == nil)
        // Hashed as part of another value, equal keys hash alike.
        var a = Hasher(), b = Hasher()
        a.combine(IdentityKey(first)); b.combine(IdentityKey(first))
        #expect(a.finalize() == b.finalize())
    }

    @Test("a token set holds exactly its tokens, scanned when short and halved when long", arguments: [0, 1, 5, 16, 17, 200])
    func tokenSetsHoldTheirTokens(count: Int) {
        // Odd tokens, given unsorted and with a repeat.
        let tokens = (0..<count).map { UInt32($0 * 2 + 1) }
        let set = TokenSet(tokens.reversed() + tokens.prefix(1))
        for token in tokens { #expect(set.contains(token)) }
        for absent in [UInt32(0), 2, UInt32(count * 2 + 1), UInt32(count * 2 + 2), .max] {
            #expect(!set.contains(absent))
        }
    }

    @Test("the model finds the entity bound to a class, and none for another class")
    func modelFindsEntitiesByClass() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Note", as: BoundNote.self) { e in e.attribute("text", .string, optional: true) }
            m.entity("Tag") { e in e.attribute("label", .string, optional: true) }
        }
        #expect(model.entity(for: BoundNote.self)?.name == "Note")
        #expect(model.entity(for: ManagedObject.self) == nil)
        #expect(model.entity(for: UnboundNote.self) == nil)
    }
}

final class BoundNote: ManagedObject {}
final class UnboundNote: ManagedObject {}
