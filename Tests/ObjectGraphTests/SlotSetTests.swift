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
}
