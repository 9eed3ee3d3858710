import Foundation
@testable import ObjectGraph
import Testing

/// An inserted object's to-many state reads its additions from its members; every way of
/// changing it must leave the same members, additions and removals as two separate sets did.
@Suite("To-many state")
struct ToManyStateTests {
    static func id(_ key: Int64) -> ObjectID { ObjectID(entityName: "Note", storeIdentifier: "S", primaryKey: key) }

    @Test("an inserted object's additions are its members, through adds and removes")
    func insertedStateMirrorsMembers() {
        var state = ToManyState.inserted
        let added = [state.add(Self.id(1)), state.add(Self.id(2)), state.add(Self.id(3)), state.add(Self.id(2))]
        #expect(added == [true, true, true, false], "the second add of 2 adds nothing")
        let removed = [state.remove(Self.id(1)), state.remove(Self.id(9))]
        #expect(removed == [true, false], "9 was not a member")
        #expect(state.members.map(Array.init) == [Self.id(2), Self.id(3)])
        #expect(Array(state.added) == [Self.id(2), Self.id(3)])
        #expect(state.removed == [Self.id(1)], "a permanent ID removed is recorded for the store")
        let mirrored = state.addMirroring(Self.id(3))
        #expect(!mirrored, "a member of an inserted object needs no recording")
        #expect(state.hasChanges)
    }

    @Test("changing an inserted object's members from outside keeps the additions as they were")
    func outsideChangesSeparateTheAdditions() {
        var state = ToManyState.inserted
        state.add(Self.id(1))
        state.add(Self.id(2))
        // A move reorders the members; the additions stay in the order they were made.
        state.members = [Self.id(2), Self.id(1)]
        #expect(Array(state.added) == [Self.id(1), Self.id(2)])
        state.add(Self.id(3))
        #expect(Array(state.added) == [Self.id(1), Self.id(2), Self.id(3)])
        state.members?.remove(Self.id(3))
        #expect(Array(state.added) == [Self.id(1), Self.id(2), Self.id(3)], "an in-place change separates them too")
        state.added.remove(Self.id(3))
        #expect(state.members.map(Array.init) == [Self.id(2), Self.id(1)])

        var faulted = ToManyState.inserted
        faulted.add(Self.id(4))
        faulted.members = nil
        #expect(Array(faulted.added) == [Self.id(4)], "turning it into a fault keeps the additions")
        faulted.load(stored: [Self.id(5)])
        #expect(faulted.members.map(Array.init) == [Self.id(5), Self.id(4)])
    }

    @Test("a save remaps an inserted object's members and additions together, then forgets the additions")
    func remapAndCommit() throws {
        let temporary = try TemporaryIDMapTests.temporaries(3)
        var state = ToManyState.inserted
        for id in temporary { state.add(id) }
        let permanent = (1...3).map { Self.id(Int64($0) + 100) }
        state.remap(TemporaryIDMap(temporary, to: permanent))
        #expect(state.members.map(Array.init) == permanent)
        #expect(Array(state.added) == permanent)
        #expect(state.removed.isEmpty, "temporary IDs are never recorded as removed")
        state.commit()
        #expect(state.added.isEmpty && !state.hasChanges)
        #expect(state.members.map(Array.init) == permanent, "the members stay")
        state.add(Self.id(7))
        #expect(Array(state.added) == [Self.id(7)], "after the save only new additions count")
    }

    @Test("members appended unhashed read, change, remap and commit exactly as members added one by one")
    func appendedNewMembers() throws {
        let temporary = try TemporaryIDMapTests.temporaries(6)
        var pending = ToManyState.inserted
        var checked = ToManyState.inserted
        for id in temporary.prefix(4) {
            let appended = pending.appendNew(id)
            #expect(appended)
            checked.add(id)
        }
        #expect(pending.hasChanges && pending.members == checked.members && pending.added == checked.added)
        // Every other change first hashes the pending members in.
        let removed = (pending.remove(temporary[1]), checked.remove(temporary[1]))
        #expect(removed.0 && removed.1)
        let readded = (pending.add(temporary[0]), checked.add(temporary[0]))
        #expect(!readded.0 && !readded.1, "a pending member is a member")
        let appended = (pending.appendNew(temporary[4]), pending.appendNew(temporary[5]))
        #expect(appended.0 && appended.1)
        checked.add(temporary[4])
        checked.add(temporary[5])
        #expect(pending.members == checked.members && pending.added == checked.added)
        #expect(!pending.isFault && pending.removed == checked.removed)
        let permanent = (1...6).map { Self.id(Int64($0) + 100) }
        let map = TemporaryIDMap(temporary, to: permanent)
        pending.remap(map)
        checked.remap(map)
        #expect(pending.members.map(Array.init) == [permanent[0], permanent[2], permanent[3], permanent[4], permanent[5]])
        #expect(pending.members == checked.members && pending.added == checked.added)
        pending.commit()
        #expect(!pending.hasChanges && pending.members == checked.members)
    }

    @Test("a member appended twice by mistake is kept once, and appending to anything but a new object's relationship adds as usual")
    func appendedDuplicatesAreDropped() throws {
        let temporary = try TemporaryIDMapTests.temporaries(2)
        var state = ToManyState.inserted
        let appended = [state.appendNew(temporary[0]), state.appendNew(temporary[1]), state.appendNew(temporary[0])]
        #expect(appended == [true, true, true], "appended unchecked, as the caller vouches")
        #expect(state.members.map(Array.init) == temporary)
        let permanent = [Self.id(201), Self.id(202)]
        state.remap(TemporaryIDMap(temporary, to: permanent))
        #expect(state.members.map(Array.init) == permanent)
        var fault = ToManyState.fault
        let recorded = [fault.appendNew(temporary[0]), fault.appendNew(temporary[0])]
        #expect(recorded == [true, false], "recorded on a fault, checked")
        #expect(fault.isFault && Array(fault.added) == [temporary[0]])
    }

    @Test("loading members builds the same set whether or not the stored keys strictly increase")
    func loadingChecksOnlyWhatItMust() {
        let ascending = (1...40).map { Self.id(Int64($0)) }
        #expect(ToManyState.strictlyIncreasing(ascending))
        var state = ToManyState.fault
        state.load(stored: ascending)
        #expect(state.members.map(Array.init) == ascending)
        #expect(state.members?.contains(Self.id(40)) == true, "found through the set's hash table (over 16 members)")
        #expect(state.members?.contains(Self.id(41)) == false)

        // A damaged or ordered list: duplicates and descents are checked, never trusted.
        let repeated = ascending + [Self.id(3), Self.id(2)]
        #expect(!ToManyState.strictlyIncreasing(repeated))
        #expect(!ToManyState.strictlyIncreasing([Self.id(5), Self.id(5)]), "equal keys do not increase")
        var damaged = ToManyState.fault
        damaged.load(stored: repeated)
        #expect(damaged.members?.count == 40, "each member once")
        #expect(damaged.members.map(Array.init) == ascending)

        // Changes recorded on the fault are replayed on top of the stored members.
        var changed = ToManyState.fault
        changed.add(Self.id(100))
        changed.remove(Self.id(1))
        changed.load(stored: ascending)
        #expect(changed.members.map(Array.init) == Array(ascending.dropFirst()) + [Self.id(100)])
    }
}
