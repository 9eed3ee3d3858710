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

    @Test func eachWrapperHoldsATokenOfItsOwn() throws {
        let (_, context) = try makeContext(Self.build)
        try context.performAndWait { () throws in
            let first = Badge(context: context)
            first.title = "first"
            // Wrappers without an explicit name hold their declaration's position (2^31 and
            // up), distinct within the class; the named one holds its name's interned token.
            var tokens: [String: UInt32] = [:]
            for child in Mirror(reflecting: first).children {
                guard let label = child.label,
                      let token = Mirror(reflecting: child.value).children.first(where: { $0.label == "token" })?.value as? UInt32 else { continue }
                tokens[label] = token
            }
            #expect(tokens.keys.sorted() == ["_holder", "_level", "_shortCode", "_title"])
            #expect(Set(tokens.values).count == 4)
            for (label, token) in tokens {
                #expect((token < 0x8000_0000) == (label == "_shortCode"), "\(label) holds token \(token)")
            }
            let second = Badge(context: context)
            second.title = "second"
            second.level = 7
            #expect(first.title == "first")
            #expect(second.title == "second")
            #expect(try second.value(forKey: "level") as? Int64 == 7)
        }
    }

    /// Explicit names are interned when a wrapper is made (with every object, faults too), and
    /// found again without the table's lock: objects made on several threads at once, of a
    /// class with an explicit name, all reach the same model property.
    @Test func explicitNamesResolveFromManyThreads() async throws {
        let (container, _) = try makeContext(Self.build)
        let codes = await withTaskGroup(of: [String?].self) { group in
            for thread in 0..<4 {
                group.addTask {
                    let context = container.newBackgroundContext()
                    return context.performAndWait {
                        (0..<50).map { index in
                            let badge = Badge(context: context)
                            badge.shortCode = "t\(thread)-\(index)"
                            return try? string(badge, "code")
                        }
                    }
                }
            }
            var all: [String?] = []
            for await codes in group { all += codes }
            return all
        }
        #expect(codes.count == 200)
        #expect(Set(codes.compactMap { $0 }).count == 200)
    }
}
