import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Testing

/// A class whose wrapped properties are found by their Swift names, except one named
/// explicitly; declared in an order where the explicit one sits between the others.
final class Badge: ManagedObject {
    @Attribute var title: String
    @Attribute("code") var shortCode: String?
    @Attribute var level: Int32
    @Relationship var holder: Holder?
}

final class Holder: ManagedObject {
    @Attribute var name: String
    @Relationship var badges: Set<Badge>
}

/// Typed properties resolve to the model's properties: by the declared name, or by the explicit
/// one. Finding a declared name writes a probe into the wrapper's explicit-name field for the
/// search; it must be gone afterwards, or the next lookup would take it for a model name.
@Suite("Property wrapper names")
struct WrapperNameTests {
    static func build(_ m: ModelBuilder) {
        m.entity("Badge", as: Badge.self) { e in
            e.attribute("title", .string)
            e.attribute("code", .string, optional: true)
            e.attribute("level", .integer32)
            e.toOne("holder", "Holder", inverse: "badges")
        }
        m.entity("Holder", as: Holder.self) { e in
            e.attribute("name", .string)
            e.toMany("badges", "Badge", inverse: "holder")
        }
    }

    @Test func declaredAndExplicitNamesReachTheirModelProperties() throws {
        let (_, context) = try makeContext(Self.build)
        try context.performAndWait {
            let holder = Holder(context: context)
            holder.name = "Ada"
            var badges: [Badge] = []
            for index in 0..<3 {
                let badge = Badge(context: context)
                badge.title = "title \(index)"
                badge.shortCode = "c\(index)"
                badge.level = Int32(index * 10)
                badge.holder = holder
                badges.append(badge)
            }
            try context.save()
            for (index, badge) in badges.enumerated() {
                // Through the model's names: each typed write landed in its own attribute.
                #expect(try string(badge, "title") == "title \(index)")
                #expect(try string(badge, "code") == "c\(index)")
                #expect(try badge.value(forKey: "level") as? Int64 == Int64(index * 10))
                #expect(badge.title == "title \(index)")
                #expect(badge.shortCode == "c\(index)")
                #expect(badge.holder === holder)
            }
            #expect(holder.badges.count == 3)
        }
    }

    @Test func aDiscoveredNameLeavesNoProbeBehind() throws {
        let (_, context) = try makeContext(Self.build)
        try context.performAndWait { () throws in
            let first = Badge(context: context)
            first.title = "first"
            // Discovery ran on `first`; a wrapper left holding the probe would make `first`'s
            // `title` resolve, on a later miss, to a model property named after the probe.
            let mirror = Mirror(reflecting: first)
            for child in mirror.children {
                let text = String(describing: child.value)
                #expect(!text.contains("objectgraph-probe"), "\(child.label ?? "?") still holds \(text)")
            }
            let second = Badge(context: context)
            second.title = "second"
            second.level = 7
            #expect(first.title == "first")
            #expect(second.title == "second")
            #expect(try second.value(forKey: "level") as? Int64 == 7)
        }
    }
}
