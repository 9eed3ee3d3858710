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
        // The first round calls the lists as they stand, through copies sharing their storage
        // (the calls may change the context's lists, never the copies, which hold every object
        // lent from them unretained).
        let entriesBefore = listEntries
        let insertedNow = insertedStorage
        let updatedNow = Array(updatedStorage.values)
        let deletedNow = deletedStorage
        insertedNow.forEachUnretained { $0.willSave() }
        updatedNow.forEachUnretained { $0.willSave() }
        deletedNow.forEachUnretained { $0.willSave() }
        try processPendingChanges()
        // Almost always nothing entered the lists: then every object was called, and no
        // object was touched again. (Flagging and unflagging each object of a 100,000-object
        // insert, to find none new, cost two more passes over their memory: +3% on LMDB.)
        guard listEntries != entriesBefore else { return }
        // Each called object is flagged until the save's pass ends, whatever the outcome, so a
        // failed save calls them all again next time.
        var later: [ManagedObject] = []
        defer {
            insertedNow.forEachUnretained { $0.isWillSaveCalledStorage = false }
            updatedNow.forEachUnretained { $0.isWillSaveCalledStorage = false }
            deletedNow.forEachUnretained { $0.isWillSaveCalledStorage = false }
            later.forEachUnretained { $0.isWillSaveCalledStorage = false }
        }
        insertedNow.forEachUnretained { $0.isWillSaveCalledStorage = true }
        updatedNow.forEachUnretained { $0.isWillSaveCalledStorage = true }
        deletedNow.forEachUnretained { $0.isWillSaveCalledStorage = true }
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

    /// Grows exactly when an object entered the inserted, updated or deleted objects.
    var listEntries: (inserted: Int, updated: Int, deleted: Int) {
        (insertedStorage.entries, updatedEntries, deletedStorage.entries)
    }
}
