import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Testing

/// `delete(_:)` of an object not in the context does nothing only for one whose row another
/// save deleted (the conformance scenarios merge.deletingAnObject…IsDone); every other such
/// object still stops the process, as a misuse.
@Suite("Deleting an object its context let go")
struct DeleteLetGoObjectTests {
    /// Let go by a reset: nothing says its row is gone, and the row is still stored.
    @Test func objectOfAResetContextStopsTheProcess() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (context, pet) = try ConcurrencyFixture.petOutsideItsQueue()
            context.performAndWait {
                context.reset()
                context.delete(pet)
            }
        }
        #expect(ConcurrencyFixture.text(result).contains("belongs to another context (or none)"))
    }

    /// Held by another live context: deleting it here is a mistake, whatever that context does.
    @Test func objectOfAnotherLiveContextStopsTheProcess() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (context, pet) = try ConcurrencyFixture.petOutsideItsQueue()
            let other = ManagedObjectContext(coordinator: context.coordinator)
            other.performAndWait { other.delete(pet) }
            withExtendedLifetime(context) {}
        }
        #expect(ConcurrencyFixture.text(result).contains("belongs to another context (or none)"))
    }

    /// Deleted and saved in its own context: still stops the process (its context let it go
    /// after its own save; only a row another save deleted is taken as done).
    @Test func objectDeletedBySavingItsOwnContextStopsTheProcess() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (context, pet) = try ConcurrencyFixture.petOutsideItsQueue()
            try context.performAndWait {
                context.delete(pet)
                try context.save()
                context.delete(pet)
            }
        }
        #expect(ConcurrencyFixture.text(result).contains("belongs to another context (or none)"))
    }
}
