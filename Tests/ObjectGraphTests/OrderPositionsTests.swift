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
}
