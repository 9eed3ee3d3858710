/// The `willSave` pass of a save.
extension ManagedObjectContext {
    /// Calls ``ManagedObject/willSave()`` exactly once on every object this save stores, then
    /// applies the delete rules of what those calls deleted.
    ///
    /// `willSave` may insert, change or delete other objects, whose deletions may cascade:
    /// every such object is stored by this save too, so it gets its own `willSave` — in
    /// rounds, until a round reaches no object not called yet. (One pass over the lists as
    /// they were before the first call stored objects inserted in a `willSave`, or deleted by
    /// a deleted object's `willSave` or by a cascade from it, with a `didSave` but never a
    /// `willSave`.) An object is called at most once per save, so a `willSave` that changes its
    /// own object ends, where Core Data calls it again until the values settle.
    func callWillSave() throws {
        // Each object called, flagged while the save runs: flags are cleared whatever the
        // outcome, so a failed save calls them all again next time.
        var called: [ManagedObject] = []
        defer { called.forEachUnretained { $0.isWillSaveCalledStorage = false } }
        func collect(_ object: ManagedObject) {
            guard !object.isWillSaveCalledStorage else { return }
            object.isWillSaveCalledStorage = true
            called.append(object)
        }
        while true {
            let start = called.count
            insertedStorage.forEachUnretained(collect)
            for object in updatedStorage.values { collect(object) }
            deletedStorage.forEachUnretained(collect)
            guard called.count > start else { return }
            // By index: `called` grows while objects of the next round are collected, never
            // while this round runs (willSave only changes the context's lists).
            for index in start..<called.count { called.unretained(at: index)._withUnsafeGuaranteedRef { $0.willSave() } }
            try processPendingChanges()
        }
    }
}
