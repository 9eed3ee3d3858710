import Foundation
import ObjectGraph

/// An object's own validation (`validate(_:forKey:)` for its `validatedKeys`, Core Data's
/// `validate<Key>(_:)`): when it runs, and how what it throws is reported.
extension ValidationScenarios {
    static let custom: [ConformanceScenario] = [
        ConformanceScenario("validation.custom.refusesAtInsertAndUpdateWithTheModelsErrors") { env in
            let context = env.newContext()
            try context.performAndWait {
                // A refused name and, on another object, a broken model rule: one error for both.
                let probe = Probe(context: context); probe.name = "forbidden"
                let student = Student(context: context); student.name = "Old"; student.age = 200
                let error = try checkThrows(ValidationError.self, "saving an insert the object refuses") { try context.save() }
                try check(violation(error, .managedObjectValidation, probe.objectID, "name"), "1550 on the probe's name: \(error)")
                try check(violation(error, .numberTooLarge, student.objectID, "age"), "the model's violation in the same error: \(error)")
                let refused = error.violations.first { $0.code == .managedObjectValidation }
                try checkEqual(refused?.underlying as? ProbeNameRefused, ProbeNameRefused(name: "forbidden"), "the object's own error is attached")
                try checkEqual(probe.validatedNames, ["forbidden"], "asked once, with the name's Swift value")
                probe.name = "allowed"
                student.age = 20
                try context.save()
                try checkEqual(probe.validatedNames.last, "allowed", "asked again at the next save")
                probe.name = "forbidden"
                let update = try checkThrows(ValidationError.self, "saving an update the object refuses") { try context.save() }
                try checkEqual(update.codes, [.managedObjectValidation], "only the object's own violation")
                probe.name = "strict"
                let own = try checkThrows(ValidationError.self, "an object throwing a ValidationError") { try context.save() }
                try check(violation(own, .stringPatternMatching, probe.objectID, "name"), "its violations are reported as they are: \(own)")
                try checkEqual(own.violations.count, 1, "once")
            }
        },
        ConformanceScenario("validation.custom.onDemandAndNotForDeletedObjects") { env in
            let context = env.newContext()
            let id = try context.performAndWait {
                let probe = Probe(context: context)
                probe.name = "fine"
                try context.save()
                let asked = try checkThrows(ValidationError.self, "validateValue of a refused name") { try probe.validateValue("forbidden", forKey: "name") }
                try check(violation(asked, .managedObjectValidation, probe.objectID, "name"), "1550: \(asked)")
                try checkEqual(probe.name, "fine", "validateValue sets nothing")
                try probe.validateValue("also fine", forKey: "name")
                let required = try checkThrows(ValidationError.self, "validateValue of nil") { try probe.validateValue(nil, forKey: "name") }
                try checkEqual(required.codes, [.missingMandatoryProperty], "the model's rule first; the object is not asked about a broken value")
                try checkEqual(probe.validatedNames.filter { $0.hasPrefix("<") }, [], "nil never reached the object's validation")
                probe.name = "forbidden"
                let update = try checkThrows(ValidationError.self, "validateForUpdate") { try probe.validateForUpdate() }
                try checkEqual(update.codes, [.managedObjectValidation], "validateForUpdate asks the object too")
                let before = probe.validatedNames.count
                context.delete(probe)
                try context.save()
                try checkEqual(probe.validatedNames.count, before, "a deleted object is not asked")
                return probe.objectID
            }
            let fresh = env.newContext()
            try fresh.performAndWait {
                let gone = try checkThrows(ObjectGraphError.self, "the deletion was saved") { _ = try fresh.existingObject(with: id) }
                try checkEqual(gone.code, .objectNotFound, "the record is gone")
            }
        },
        ConformanceScenario("validation.custom.refusalWithoutViolationsStillRefuses") { env in
            // A hook throwing a ValidationError with no violation refused the value all the
            // same: it is reported as any other error it throws (1550, the error attached).
            let context = env.newContext()
            try context.performAndWait {
                let probe = Probe(context: context); probe.name = "silent"
                let error = try checkThrows(ValidationError.self, "saving a name refused without violations") { try context.save() }
                try check(violation(error, .managedObjectValidation, probe.objectID, "name"), "1550 on the probe's name: \(error)")
                try check(error.violations.first?.underlying is ValidationError, "the empty error is attached")
                probe.name = "fine"
                try context.save()
                let asked = try checkThrows(ValidationError.self, "validateValue of the same name") { try probe.validateValue("silent", forKey: "name") }
                try checkEqual(asked.codes, [.managedObjectValidation], "validateValue reports it the same way")
            }
        },
    ]
}
