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
        // Each called object is flagged while the save runs, and the flags are cleared whatever
        // the outcome, so a failed save calls them all again next time. The first round's
        // objects are the lists as they stand (copies sharing their storage, which also keep
        // them alive for the clearing): collecting every object into an array of its own took
        // a reference to each of 100,000 inserted objects only to clear a bit.
        let insertedNow = insertedStorage
        let updatedNow = Array(updatedStorage.values)
        let deletedNow = deletedStorage
        var later: [ManagedObject] = []
        defer {
            insertedNow.forEachUnretained { $0.isWillSaveCalledStorage = false }
            updatedNow.forEachUnretained { $0.isWillSaveCalledStorage = false }
            deletedNow.forEachUnretained { $0.isWillSaveCalledStorage = false }
            later.forEachUnretained { $0.isWillSaveCalledStorage = false }
        }
        // (The copies hold every object, which are lent from them unretained; the calls may
        // change the context's lists, never the copies.)
        func call(_ object: ManagedObject) {
            guard !object.isWillSaveCalledStorage else { return }
            object.isWillSaveCalledStorage = true
            object.willSave()
        }
        insertedNow.forEachUnretained(call)
        updatedNow.forEachUnretained(call)
        deletedNow.forEachUnretained(call)
        try processPendingChanges()
        while true {
            // Objects the calls so far made part of the save, not called yet.
            let start = later.count
            func collect(_ object: ManagedObject) {
                guard !object.isWillSaveCalledStorage else { return }
                object.isWillSaveCalledStorage = true
                later.append(object)
            }
            insertedStorage.forEachUnretained(collect)
            for object in updatedStorage.values { collect(object) }
            deletedStorage.forEachUnretained(collect)
            guard later.count > start else { return }
            // By index: `later` grows only while a round is collected, never while it runs.
            for index in start..<later.count { later.unretained(at: index)._withUnsafeGuaranteedRef { $0.willSave() } }
            try processPendingChanges()
        }
    }
}
