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

    /// An object keeps its changed slots past 63 apart from the first word (boxed, see
    /// `ManagedObject.changedAttributeSlots`): changes there are reported, saved and rolled
    /// back like any other, for attributes and to-ones alike.
    @Test("an entity with more than 64 attributes and to-ones tracks changes in its high slots")
    func objectsTrackHighSlots() throws {
        let (container, context) = try makeContext { m in
            m.entity("Wide") { e in
                for index in 0..<70 { e.attribute("a\(index)", .integer64, optional: true) }
                for index in 0..<66 { e.toOne("r\(index)", "Target") }
            }
            m.entity("Target") { e in e.attribute("name", .string) }
        }
        let wideID: ObjectID = try context.performAndWait {
            let wide = try context.insertObject(entityName: "Wide")
            let target = try context.insertObject(entityName: "Target")
            try target.setValue("t", forKey: "name")
            try context.save()
            #expect(try wide.changedValues().isEmpty)
            try wide.setValue(Int64(1), forKey: "a1")
            try wide.setValue(Int64(69), forKey: "a69")
            try wide.setValue(target, forKey: "r65")
            #expect(Set(try wide.changedValues().keys) == ["a1", "a69", "r65"])
            try context.save()
            #expect(try wide.changedValues().isEmpty)
            try wide.setValue(Int64(68), forKey: "a68")
            try wide.setValue(nil, forKey: "r65")
            #expect(Set(try wide.changedValues().keys) == ["a68", "r65"])
            context.rollback()
            #expect(try wide.changedValues().isEmpty)
            #expect(try wide.value(forKey: "a68") == nil)
            #expect(try wide.value(forKey: "r65") as? ManagedObject === target)
            return wide.objectID
        }
        let other = container.newBackgroundContext()
        try other.performAndWait { () throws in
            let wide = other.object(with: wideID)
            #expect(try wide.value(forKey: "a69") as? Int64 == 69)
            #expect(try wide.value(forKey: "a1") as? Int64 == 1)
            #expect(try wide.value(forKey: "a68") == nil)
            #expect(try (wide.value(forKey: "r65") as? ManagedObject)?.value(forKey: "name") as? String == "t")
        }
    }
}
