@testable import ObjectGraph
import Testing

@Suite("Slot sets")
struct SlotSetTests {
    @Test("inserts, removals and membership agree with Set<Int>, in and beyond the first word")
    func agreesWithSet() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            var slots = SlotSet()
            var reference = Set<Int>()
            for _ in 0..<200 {
                let slot = Int.random(in: 0..<200, using: &generator)
                if Bool.random(using: &generator) {
                    slots.insert(slot)
                    reference.insert(slot)
                } else {
                    slots.remove(slot)
                    reference.remove(slot)
                }
            }
            #expect(Array(slots) == reference.sorted(), "iteration is every member, ascending")
            for slot in 0..<260 { #expect(slots.contains(slot) == reference.contains(slot)) }
            #expect(slots.isEmpty == reference.isEmpty)
        }
    }

    @Test("emptiness and equality ignore words that were allocated and cleared")
    func emptinessAndEquality() {
        var slots: SlotSet = [3, 130]
        #expect(!slots.isEmpty)
        #expect(slots == [130, 3])
        #expect(slots != [3])
        slots.remove(130)
        #expect(slots == [3], "a cleared high word equals no high word")
        slots.remove(3)
        #expect(slots.isEmpty)
        #expect(slots == [])
        #expect(!slots.contains(-1))
        #expect(Array(SlotSet()) == [])
        #expect(Array([63, 64, 0] as SlotSet) == [0, 63, 64])
    }

    @Test("subsets, across the one-word and the high-word range")
    func subsets() {
        let small: SlotSet = [1, 5]
        #expect(small.isSubset(of: [1, 5, 9]))
        #expect(small.isSubset(of: small))
        #expect(!small.isSubset(of: [1]))
        #expect(SlotSet().isSubset(of: []))
        #expect(SlotSet().isSubset(of: small))
        let high: SlotSet = [2, 200]
        #expect(high.isSubset(of: [2, 70, 200]))
        #expect(!high.isSubset(of: [2, 70]), "slot 200 is in a word the other set never allocated")
        #expect(!high.isSubset(of: [2]))
        var cleared: SlotSet = [4, 300]
        cleared.remove(300)
        #expect(cleared.isSubset(of: [4]), "a cleared high word holds nothing")
        #expect(!([4] as SlotSet).isSubset(of: [300]))
    }
}
