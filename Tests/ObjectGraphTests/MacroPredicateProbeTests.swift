import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Testing

/// A state kept as its raw string; not `CaseIterable`, and no empty value decodes to it.
enum ProbeTicketState: String, AttributeValueConvertible, Codable, Sendable, Equatable {
    case open, closed
    var attributeValue: AttributeValue { .string(rawValue) }
    static func fromAttributeValue(_ value: AttributeValue) -> ProbeTicketState? {
        if case .string(let raw) = value { return ProbeTicketState(rawValue: raw) }
        return nil
    }
}

/// A transformable enumeration with all its cases listed.
enum ProbeMood: String, TransformableValue, CaseIterable { case happy, sad }

/// A transformable value holding a UUID, which no empty string decodes to.
struct ProbeBadge: TransformableValue, Equatable { var id: UUID }

final class ProbeTicket: ManagedObject {
    @Attribute var state: ProbeTicketState
    @Attribute var mood: ProbeMood
    @Attribute var badge: ProbeBadge
}

/// `#Predicate`s over wrappers whose value type the key-path probe cannot build from a stored
/// placeholder: translated when some value can stand in, refused with a typed error when none
/// can — never a stop of the process (reading such a wrapper on the probe's prototype trapped).
@Suite("#Predicate over wrapper types without placeholders")
struct MacroPredicateProbeTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("ProbeTicket", as: ProbeTicket.self) { e in
                e.attribute("state", .string)
                e.transformable("mood", ProbeMood.self, optional: false)
                e.transformable("badge", ProbeBadge.self, optional: false)
            }
        }
    }

    @Test("a RawRepresentable enum with no value to stand in is refused with invalidFetch")
    func enumWithoutStandInIsRefused() throws {
        let open = ProbeTicketState.open
        do {
            _ = try FetchPredicate(#Predicate<ProbeTicket> { $0.state == open }, model: try Self.model())
            Issue.record("translated a predicate whose key path could not be probed")
        } catch let error as ObjectGraphError {
            #expect(error.code == .invalidFetch)
            #expect(error.message.contains("ProbeTicketState"))
        }
    }

    @Test("a CaseIterable transformable enum and a struct holding a UUID translate, and the fetch answers as Swift does")
    func standInsTranslate() throws {
        let model = try Self.model()
        let container = try PersistentContainer(model: model, stores: [.inMemory()])
        let context = container.newBackgroundContext()
        let badge = ProbeBadge(id: UUID())
        try context.performAndWait {
            for (state, mood) in [(ProbeTicketState.open, ProbeMood.happy), (.closed, .sad), (.open, .sad)] {
                let ticket = ProbeTicket(context: context)
                ticket.state = state
                ticket.mood = mood
                ticket.badge = mood == .happy ? badge : ProbeBadge(id: UUID())
            }
            try context.save()
            let sad = ProbeMood.sad
            let moods = try context.fetch(FetchRequest<ProbeTicket>(predicate: #Predicate<ProbeTicket> { $0.mood == sad }))
            #expect(moods.count == 2 && moods.allSatisfy { $0.mood == .sad })
            let badges = try context.fetch(FetchRequest<ProbeTicket>(predicate: #Predicate<ProbeTicket> { $0.badge == badge }))
            #expect(badges.map(\.mood) == [.happy])
        }
    }
}
