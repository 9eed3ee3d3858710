import Foundation
import ObjectGraph
import ObjectGraphInMemory
import OrderedCollections
import Testing

/// A list of members in relationship order: a `RelationshipValue` of the app's own, which the
/// typed accessor builds through the protocol's default `make(count:_:)` (gathering the
/// objects, then `make(from:)`).
struct Roster: RelationshipValue {
    var objects: [ManagedObject]
    static var isToMany: Bool { true }
    static func make(from objects: [ManagedObject]) -> Roster? {
        objects.allSatisfy { $0 is Crew } ? Roster(objects: objects) : nil
    }
    var relationshipObjects: [ManagedObject] { objects }
}

final class Crew: ManagedObject {
    @Attribute var name: String
    @Relationship var ships: Set<Ship>
}

final class Ship: ManagedObject {
    @Attribute var name: String
    @Relationship var crew: Set<Crew>
    @Relationship var watch: OrderedSet<Crew>
    @Relationship("watch") var watchRoster: Roster
}

/// The typed to-many accessors build their `Set`, `OrderedSet` or app-defined value from the
/// members as they are reached: each must hold exactly the members key-value access reports —
/// stored ones after a fault, unsaved additions and removals, an ordered relationship's order.
@Suite("Typed to-many accessors")
struct TypedToManyTests {
    static func build(_ m: ModelBuilder) {
        m.entity("Crew", as: Crew.self) { e in
            e.attribute("name", .string)
            e.toMany("ships", "Ship", inverse: "crew")
            e.toMany("watches", "Ship", inverse: "watch")
        }
        m.entity("Ship", as: Ship.self) { e in
            e.attribute("name", .string)
            e.toMany("crew", "Crew", inverse: "ships")
            e.toMany("watch", "Crew", inverse: "watches", ordered: true)
        }
    }

    static func names(_ objects: some Sequence<Crew>) -> [String] { objects.map(\.name) }

    @Test func setsOrderedSetsAndAnAppValueHoldTheMembersStoredAndUnsaved() throws {
        let (container, context) = try makeContext(Self.build)
        let shipID = try context.performAndWait { () -> ObjectID in
            let ship = Ship(context: context)
            ship.name = "Pequod"
            for name in ["Ahab", "Ishmael", "Queequeg", "Starbuck"] {
                let crew = Crew(context: context)
                crew.name = name
                ship.$crew.add(crew)
                ship.$watch.add(crew)
            }
            // Before any save: the members as added, the watch in order.
            #expect(Set(Self.names(ship.crew)) == ["Ahab", "Ishmael", "Queequeg", "Starbuck"])
            #expect(Self.names(ship.watch) == ["Ahab", "Ishmael", "Queequeg", "Starbuck"])
            try context.save()
            return ship.objectID
        }
        let fresh = container.newBackgroundContext()
        try fresh.performAndWait {
            let ship = try #require(try fresh.existingObject(with: shipID) as? Ship)
            // Faulted in from the store.
            #expect(Set(Self.names(ship.crew)) == ["Ahab", "Ishmael", "Queequeg", "Starbuck"])
            #expect(Self.names(ship.watch) == ["Ahab", "Ishmael", "Queequeg", "Starbuck"])
            #expect(Self.names(ship.watchRoster.objects.compactMap { $0 as? Crew }) == ["Ahab", "Ishmael", "Queequeg", "Starbuck"])
            // Unsaved changes: one removed, one added, the watch reordered.
            let ahab = try #require(ship.crew.first { $0.name == "Ahab" })
            ship.$crew.remove(ahab)
            let flask = Crew(context: fresh)
            flask.name = "Flask"
            ship.$crew.add(flask)
            ship.$watch.move(from: 3, to: 0)
            ship.$watch.insert(flask, at: 2)
            #expect(Set(Self.names(ship.crew)) == ["Ishmael", "Queequeg", "Starbuck", "Flask"])
            #expect(Self.names(ship.watch) == ["Starbuck", "Ahab", "Flask", "Ishmael", "Queequeg"])
            #expect(Self.names(ship.watchRoster.objects.compactMap { $0 as? Crew }) == ["Starbuck", "Ahab", "Flask", "Ishmael", "Queequeg"])
            // The typed values agree with key-value access, object for object.
            let stored = try #require(try ship.value(forKey: "crew") as? Set<ManagedObject>)
            #expect(Set(ship.crew.map(ObjectIdentifier.init)) == Set(stored.map(ObjectIdentifier.init)))
            let ordered = try #require(try ship.value(forKey: "watch") as? OrderedSet<ManagedObject>)
            #expect(ship.watch.map(ObjectIdentifier.init) == ordered.map(ObjectIdentifier.init))
            // A new member's inverse holds the ship; an empty relationship gives empty values.
            #expect(Set(flask.ships.map(\.name)) == ["Pequod"] && flask.watches.count == 1)
            let idle = Crew(context: fresh)
            idle.name = "Idle"
            #expect(idle.ships.isEmpty && idle.watches.isEmpty)
        }
    }

    @Test("an ordered edit through a handle on an unordered relationship, or a move from or to an index that is no member's, stops the process with a message (it marked the relationship changed for nothing, or was ignored)", arguments: [0, 1, 2])
    func misusedOrderedEditsStopWithAMessage(_ misuse: Int) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [misuse] in
            let (_, context) = try makeContext(Self.build)
            context.performAndWait {
                let ship = Ship(context: context)
                ship.name = "Pequod"
                let crew = Crew(context: context)
                crew.name = "Ahab"
                ship.$watch.add(crew)
                switch misuse {
                case 0: ship.$crew.insert(crew, at: 0)
                case 1: ship.$watch.move(from: 1, to: 0)
                default: ship.$watch.move(from: 0, to: 5)
                }
            }
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains(misuse == 0 ? "the relationship is not ordered" : "index out of range (1 member)"), "\(text)")
    }
}

/// Two declarations naming one relationship, of different arity: the second is a programming
/// error that stops with a message at its first use (they share one resolved entry).
final class Lookout: ManagedObject {
    @Relationship("watch") var watchList: OrderedSet<Crew>
    @Relationship("watch") var lookout: Crew?
}

extension TypedToManyTests {
    @Test func aToOneDeclarationOfAToManyNamedTwiceStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, context) = try makeContext { m in
                m.entity("Crew", as: Crew.self) { e in
                    e.attribute("name", .string)
                    e.toMany("watches", "Ship", inverse: "watch")
                }
                m.entity("Ship", as: Lookout.self) { e in
                    e.toMany("watch", "Crew", inverse: "watches", ordered: true)
                }
            }
            context.performAndWait {
                let ship = Lookout(context: context)
                let crew = Crew(context: context)
                crew.name = "Ahab"
                ship.$watchList.add(crew)
                _ = ship.watchList
                ship.lookout = crew
            }
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("Lookout.watch is declared as Optional<Crew>, but"), "\(text)")
        #expect(text.contains("is to-many"), "\(text)")
    }
}

extension Crew {
    /// The ships this crew member keeps watch on, through key-value access.
    var watches: [ManagedObject] { (try? value(forKey: "watches") as? Set<ManagedObject>).map { Array($0) } ?? [] }
}
