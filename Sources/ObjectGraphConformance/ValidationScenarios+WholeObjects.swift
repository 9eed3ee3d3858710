import Foundation
import ObjectGraph

/// A class's own checks of whole objects (Core Data's overridable `validateForInsert()`,
/// `validateForUpdate()` and `validateForDelete()`): called by every save on the objects it
/// stores, their violations joining the model's in one error.
extension ValidationScenarios {
    static let wholeObjects: [ConformanceScenario] = [
        ConformanceScenario("validation.wholeObject.overridesRunAtSave") { env in
            let day: TimeInterval = 86_400
            let start = Date(timeIntervalSinceReferenceDate: 800_000_000)
            let context = env.newContext()
            let id = try context.performAndWait { () throws -> ObjectID in
                let stay = Booking(context: context)
                stay.guest = "Ada"; stay.nights = 2
                stay.checkIn = start; stay.checkOut = start - day
                // No nights: super stops the override before it reads the missing value.
                let unsound = Booking(context: context)
                unsound.guest = "Bob"
                let inserted = try checkThrows(ValidationError.self, "a check-out before the check-in") { try context.save() }
                try check(violation(inserted, .dateTooSoon, stay.objectID, "checkOut"), "the override's violation: \(inserted)")
                try checkEqual(inserted.violations.filter { $0.objectID == unsound.objectID }.map(\.code), [.missingMandatoryProperty], "the model's violation, once: \(inserted)")
                try checkEqual(stay.checks, ["insert"], "asked as an insert")
                try checkEqual(unsound.checks, ["insert"], "the unsound booking is asked too")
                stay.checkOut = start + day * 2
                unsound.nights = 1
                try context.save()
                stay.checkOut = start
                let updated = try checkThrows(ValidationError.self, "a check-out on the check-in") { try context.save() }
                try checkEqual(updated.violations.map(\.code), [.dateTooSoon], "only the override's violation: \(updated)")
                try checkEqual(stay.checks.last, "update", "asked as an update")
                let asked = try checkThrows(ValidationError.self, "validateForUpdate on demand") { try stay.validateForUpdate() }
                try checkEqual(asked.violations.map(\.code), [.dateTooSoon], "the override on demand")
                stay.checkOut = start + day
                stay.locked = true
                try context.save()
                context.delete(stay)
                let refused = try checkThrows(ValidationError.self, "deleting a locked booking") { try context.save() }
                try checkEqual(refused.violations.map(\.code), [.managedObjectValidation], "one violation: \(refused)")
                try checkEqual(refused.violations.first?.objectID, stay.objectID, "of the booking")
                try checkEqual(refused.violations.first?.key, "", "of the whole object")
                try checkEqual(refused.violations.first?.underlying as? BookingLocked, BookingLocked(guest: "Ada"), "the override's error is attached")
                try checkEqual(stay.checks.last, "delete", "asked as a deletion")
                context.rollback()
                return stay.objectID
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let stay = try fresh.existingObject(with: id) as? Booking
                try checkEqual(stay?.checkOut, start + day, "the last valid check-out was stored")
                try checkEqual(stay?.locked, true, "the refused deletion stored nothing")
                try checkEqual(try fresh.count(for: FetchRequest<ManagedObject>(entityName: "Booking")), 2, "both bookings")
                stay?.locked = false
                if let stay { fresh.delete(stay) }
                try fresh.save()
                try checkEqual(try fresh.count(for: FetchRequest<ManagedObject>(entityName: "Booking")), 1, "an unlocked booking is deleted")
            }
        },
    ]
}
