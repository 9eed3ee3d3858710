@testable import ObjectGraph
import Testing

@Suite("Unretained iteration")
struct UnretainedIterationTests {
    final class Box {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    struct Stop: Error {}

    @Test("every element of an array or a slice is visited once, in order, and errors stop the walk")
    func visitsInOrder() throws {
        let boxes = (0..<40).map(Box.init)
        var seen: [Int] = []
        boxes.forEachUnretained { seen.append($0.value) }
        #expect(seen == Array(0..<40))
        seen = []
        boxes[5..<12].forEachUnretained { seen.append($0.value) }
        #expect(seen == Array(5..<12))
        seen = []
        #expect(throws: Stop.self) {
            try boxes.forEachUnretained { box in
                if box.value == 3 { throw Stop() }
                seen.append(box.value)
            }
        }
        #expect(seen == [0, 1, 2])
    }

    @Test("elements stay alive while the variable they came from is emptied, and kept ones outlive it")
    func elementsOutliveChangesToTheSource() {
        var boxes = (0..<100).map(Box.init)
        weak let first = boxes[0]
        var kept: [Box] = []
        var sum = 0
        boxes.forEachUnretained { box in
            // Replacing the variable's buffer leaves the one being walked intact.
            boxes = []
            sum += box.value
            if box.value.isMultiple(of: 10) { kept.append(box) }
        }
        #expect(sum == (0..<100).reduce(0, +))
        #expect(kept.map(\.value) == Array(stride(from: 0, to: 100, by: 10)))
        #expect(first != nil, "an element the body kept is still retained")
        kept = []
        #expect(first == nil, "and released once nothing holds it")
    }

    @Test("an element read unretained by index is the element, while the array grows around the loop")
    func unretainedByIndex() {
        var boxes = [Box(0)]
        var index = 0
        var visited: [Int] = []
        while index < boxes.count {
            let value = boxes.unretained(at: index)._withUnsafeGuaranteedRef { $0.value }
            visited.append(value)
            if value < 20 { boxes.append(Box(value + 1)) }
            index += 1
        }
        #expect(visited == Array(0...20))
    }
}
