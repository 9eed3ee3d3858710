import ObjectGraph
import Testing

@Suite("Ordered positions with gaps")
struct OrderPositionsTests {
    static func ids(_ count: Int) -> [ObjectID] {
        (1...count).map { ObjectID(entityName: "Track", storeIdentifier: "S", primaryKey: Int64($0)) }
    }

    static func apply(_ plan: [ObjectID: Int64], to existing: [ObjectID: Int64]) -> [ObjectID: Int64] {
        existing.merging(plan) { _, new in new }
    }

    @Test("an insert in the middle writes one position and keeps the order")
    func insertInMiddle() {
        let tracks = Self.ids(5)
        let existing = Dictionary(uniqueKeysWithValues: tracks.prefix(4).enumerated().map { ($1, Int64($0) * 1024) })
        let order = [tracks[0], tracks[1], tracks[4], tracks[2], tracks[3]]
        let plan = OrderPositions.plan(order: order, existing: existing)
        #expect(plan.count == 1)
        let positions = Self.apply(plan, to: existing)
        #expect(order.map { positions[$0]! } == order.map { positions[$0]! }.sorted())
    }

    @Test("a move writes one position; a full reversal keeps a longest run")
    func moves() {
        let tracks = Self.ids(6)
        let existing = Dictionary(uniqueKeysWithValues: tracks.enumerated().map { ($1, Int64($0) * 1024) })
        let moved = [tracks[5]] + tracks[0..<5]
        let plan = OrderPositions.plan(order: moved, existing: existing)
        #expect(plan.count == 1)
        let reversed = Array(tracks.reversed())
        let reversal = OrderPositions.plan(order: reversed, existing: existing)
        let positions = Self.apply(reversal, to: existing)
        #expect(reversed.map { positions[$0]! } == reversed.map { positions[$0]! }.sorted())
        #expect(reversal.count == 5, "only one member can keep its place")
    }

    @Test("when a gap is used up, the list is renumbered and stays ordered")
    func exhaustedGap() {
        let tracks = Self.ids(4)
        let existing: [ObjectID: Int64] = [tracks[0]: 0, tracks[1]: 1]
        let order = [tracks[0], tracks[2], tracks[3], tracks[1]]
        let positions = Self.apply(OrderPositions.plan(order: order, existing: existing), to: existing)
        #expect(Set(order.map { positions[$0]! }).count == 4)
        #expect(order.map { positions[$0]! } == order.map { positions[$0]! }.sorted())
    }

    @Test("random reorderings always produce strictly increasing positions")
    func randomized() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let tracks = Self.ids(Int.random(in: 1...30, using: &generator))
            var existing: [ObjectID: Int64] = [:]
            for (index, id) in tracks.enumerated() where Bool.random(using: &generator) { existing[id] = Int64(index) * Int64.random(in: 1...2048, using: &generator) }
            let order = tracks.shuffled(using: &generator)
            let positions = Self.apply(OrderPositions.plan(order: order, existing: existing.filter { order.contains($0.key) }), to: existing)
            let sequence = order.map { positions[$0] ?? .min }
            #expect(zip(sequence, sequence.dropFirst()).allSatisfy { $0 < $1 }, "\(sequence)")
        }
    }

    @Test("by index: members whose positions still increase all keep them, joiners are placed between, and a longest run is kept otherwise")
    func byIndex() {
        // An append, an insert and a removal leave the present positions increasing.
        #expect(OrderPositions.plan(positions: [0, 1024, 2048, nil]) == [nil, nil, nil, 3072])
        #expect(OrderPositions.plan(positions: [0, nil, 1024, 2048]) == [nil, 512, nil, nil])
        #expect(OrderPositions.plan(positions: [0, 2048]) == [nil, nil])
        #expect(OrderPositions.plan(positions: [nil, nil]) == [-2048, -1024])
        // A move: the run 0, 1024, 3072 is kept, the moved member goes between 1024 and 3072.
        #expect(OrderPositions.plan(positions: [0, 1024, 4096, 3072]) == [nil, nil, 2048, nil])
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let current: [Int64?] = (0..<Int.random(in: 0...30, using: &generator)).map { _ in
                Bool.random(using: &generator) ? nil : Int64.random(in: -5_000...5_000, using: &generator)
            }
            let planned = OrderPositions.plan(positions: current)
            let result = zip(current, planned).map { $1 ?? $0 ?? .min }
            #expect(zip(result, result.dropFirst()).allSatisfy { $0 < $1 }, "\(current) → \(planned)")
            // Unless the list was renumbered, as many keep their positions as the longest run.
            let kept = zip(current, planned).filter { $0 != nil && $1 == nil }.count
            let renumbered = planned.enumerated().allSatisfy { $1 == nil || $1 == Int64($0) * OrderPositions.gap }
            #expect(renumbered || kept == OrderPositions.longestIncreasing(current).count, "\(current) → \(planned)")
        }
    }

    @Test("positions near either end of Int64 (a damaged file's) renumber the list instead of trapping on overflow")
    func extremePositions() {
        let cases: [[Int64?]] = [
            [0, .max, nil],          // an append after the largest position
            [nil, .min, 0],          // an insert before the smallest
            [.min, nil, .max],       // a gap wider than Int64 holds
            [.min + 1, nil],
            [nil, .max - 1],
        ]
        for current in cases {
            let planned = OrderPositions.plan(positions: current)
            let result = zip(current, planned).map { $1 ?? $0 ?? .min }
            #expect(zip(result, result.dropFirst()).allSatisfy { $0 < $1 }, "\(current) → \(planned)")
        }
    }
}
