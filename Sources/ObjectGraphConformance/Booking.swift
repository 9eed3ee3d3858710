import Foundation
import ObjectGraph

/// A hotel booking whose class checks itself as a whole, as Core Data subclasses do by
/// overriding `validateForInsert()`, `validateForUpdate()` and `validateForDelete()`: the
/// check-out must follow the check-in, and a locked booking cannot be deleted.
public final class Booking: ManagedObject {
    /// Required guest name.
    @Attribute public var guest: String
    /// Required number of nights, at least 1.
    @Attribute public var nights: Int16
    /// Optional check-in date.
    @Attribute public var checkIn: Date?
    /// Optional check-out date; must follow ``checkIn`` when both are set.
    @Attribute public var checkOut: Date?
    /// Whether the booking refuses to be deleted (default false).
    @Attribute public var locked: Bool
    /// The whole-object checks called on this instance, in order ("insert", "update", "delete").
    public private(set) var checks: [String] = []

    /// Checks the model's rules (`super`), then the dates.
    public override func validateForInsert() throws {
        checks.append("insert")
        try super.validateForInsert()
        try checkStay()
    }

    /// Checks the model's rules (`super`), then the dates.
    public override func validateForUpdate() throws {
        checks.append("update")
        try super.validateForUpdate()
        try checkStay()
    }

    /// Checks the deny rules (`super`), then refuses a locked booking.
    public override func validateForDelete() throws {
        checks.append("delete")
        try super.validateForDelete()
        if locked { throw BookingLocked(guest: guest) }
    }

    private func checkStay() throws {
        // `nights` is required and non-optional here: reading it while nil would stop the
        // process, so this runs only after `super` found the properties sound.
        guard nights > 0 else { return }
        if let checkIn, let checkOut, checkOut <= checkIn {
            throw ValidationError(violations: [.init(
                code: .dateTooSoon, objectID: objectID, key: "checkOut",
                message: "Booking.checkOut must follow checkIn")])
        }
    }
}

/// Thrown by ``Booking/validateForDelete()`` for a locked booking.
public struct BookingLocked: Error, Equatable, Sendable {
    /// The booking's guest.
    public let guest: String
}
