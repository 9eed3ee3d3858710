import OrderedCollections

/// Fetching: store results merged with the context's unsaved changes, uniqued into objects.
extension ManagedObjectContext {
    /// The objects matching `request`, in order.
    ///
    /// With ``FetchRequest/includesPendingChanges`` (the default), unsaved inserts, changes and
    /// deletes of the fetched entity are reflected exactly as a save would reflect them.
    public func fetch<T: ManagedObject>(_ request: FetchRequest<T>) throws -> [T] {
        try checkQueue("fetch(\(request.entityName ?? String(describing: T.self)))")
        if let resolved = resolvingHandedOverIDs(in: request) { return try fetch(resolved) }
        if !request.includesPropertyValues, let faulting = try withoutPropertyValues(request) { return try fetch(faulting) }
        var (entity, answer) = try executeFetch(request)
        let installs = !answer.rows.isEmpty && !request.returnsObjectsAsFaults
        let ids = installs ? [] : answer.ids
        // Taken out of the answer, so that the rows array is not shared (moving rows out of
        // a shared array would copy it first).
        var rows: [RowSnapshot] = []
        if installs { swap(&rows, &answer.rows) }
        let count = installs ? rows.count : ids.count
        // Gathered as `[ManagedObject]`, whose appends are specialized here, and handed back as
        // `[T]` below: appending to the generic `[T]` went through the unspecialized
        // `Array.append`, 75 instructions a row of a 100,000-row fetch (callgrind).
        var objects: [ManagedObject] = []
        objects.reserveCapacity(count)
        // Entries of objects released since the last sweep go first, when the answer would
        // cross the threshold. The objects created here stay alive in `objects`, so no sweep
        // runs while they are registered (it would only walk them again and again); the
        // threshold is put back afterwards, or a run of fetches would raise it for ever and
        // the registry would keep every dead entry (and resize for them).
        // A registry no larger than the answer is swept too (a walk no longer than the fetch):
        // when the app let go of everything (a loop fetching one chat's messages after
        // another), the fetch then registers into an empty registry (below).
        if registry.count + count > sweepThreshold || (!registry.isEmpty && registry.count <= count) { sweepReleasedObjects() }
        let threshold = sweepThreshold
        // Into an empty registry, no fetched object can be registered already: the objects
        // are registered without looking their IDs up (see ObjectRegistry.appendUnindexed).
        let unregistered = registry.isEmpty
        if unregistered { registry.reserveUnindexed(count) } else { registry.reserveCapacity(registry.count + count) }
        var faults: [ManagedObject] = []
        // Objects the fetch found already loaded, for `shouldRefreshRefetchedObjects`.
        var refetched: [ManagedObject] = []
        do {
            sweepThreshold = .max
            defer { sweepThreshold = threshold }
            if installs {
                // Each row moves into its object (leaving an empty row behind) instead of
                // being copied: a copy retained the row's arrays once more, and freeing the
                // row array afterwards walked all of it again to release them.
                // (Swapped through the subscript, not in a closure over the buffer: appending
                // to the generic result array inside a closure looked up its metadata per row.)
                // Rows the coordinator's cache keeps too are copied instead: moving one out of
                // the shared array would first copy all of it (2% of fetching each chat's
                // messages, perf).
                let shared = answer.rowsAreShared
                // Change tracking is suspended for the loop's awakeFromFetch calls (see
                // awake(_:)) once, not per object: nothing else in the loop sets values.
                awakingFromFetch += 1
                defer { awakingFromFetch -= 1 }
                for position in rows.indices {
                    let id = rows[position].objectID
                    let object = unregistered ? unindexedFault(id) : registeredOrFault(id)
                    if object.isFaultStorage {
                        statisticsStorage.faultsFired += 1
                        if request.shouldRefreshRefetchedObjects { rereadLoadedMembers(ofFault: object) }
                        if shared {
                            object.install(rows[position])
                        } else {
                            var snapshot = RowSnapshot(objectID: id, version: 0, attributes: AttributeValues(), toOne: ToOneValues())
                            swap(&snapshot, &rows[position])
                            object.install(consume snapshot)
                        }
                        object.awakeFromFetch()
                    } else if request.shouldRefreshRefetchedObjects {
                        refetched.append(object)
                    }
                    guard object is T else { throw Self.wrongClass(object, T.self, entity) }
                    objects.append(consume object)
                }
            } else {
                for id in ids {
                    let object = unregistered ? unindexedFault(id) : registeredOrFault(id)
                    if object.isFaultStorage {
                        if request.shouldRefreshRefetchedObjects { rereadLoadedMembers(ofFault: object) }
                        if !request.returnsObjectsAsFaults { faults.append(object) }
                    } else if request.shouldRefreshRefetchedObjects {
                        refetched.append(object)
                    }
                    guard object is T else { throw Self.wrongClass(object, T.self, entity) }
                    objects.append(consume object)
                }
            }
        }
        if !faults.isEmpty { try fulfillFaults(faults) }
        if !refetched.isEmpty { try refreshRefetched(refetched) }
        let prefetching = try request.relationshipKeyPathsForPrefetching.map { try prefetchSteps($0, from: entity) }
        if request.fetchBatchSize > 0 && request.returnsObjectsAsFaults {
            // Core Data's batch faulting: touching one object loads its whole batch, and the
            // batch's prefetched relationships.
            var start = 0
            while start < objects.count {
                let ids = objects[start..<min(objects.count, start + request.fetchBatchSize)].map(\.objectID)
                let group = BatchGroup(ids: ids, prefetching: prefetching)
                for id in group.ids { batchGroups[id] = group }
                start += request.fetchBatchSize
            }
        } else {
            for steps in prefetching { try prefetch(steps, from: objects) }
        }
        // Every element was checked to be a `T` above, and an array of class references has
        // one representation whatever the class (the standard library reinterprets such
        // buffers the same way when it casts arrays of classes).
        return unsafeBitCast(objects, to: [T].self)
    }

    /// `request` (which includes no property values) as a fetch of faults — `nil` when it is
    /// one already — refusing prefetching, which would load values. A fetch of faults asks
    /// the store for IDs only and loads no unregistered object (see
    /// ``FetchRequest/includesPropertyValues``).
    private func withoutPropertyValues<T: ManagedObject>(_ request: FetchRequest<T>) throws -> FetchRequest<T>? {
        if let keyPath = request.relationshipKeyPathsForPrefetching.first {
            throw ObjectGraphError(.invalidFetch, key: keyPath, "a fetch of \(request.entityName ?? String(describing: T.self)) that includes no property values cannot prefetch '\(keyPath)': prefetching loads values; set includesPropertyValues or leave relationshipKeyPathsForPrefetching empty")
        }
        guard !request.returnsObjectsAsFaults else { return nil }
        var faulting = request
        faulting.returnsObjectsAsFaults = true
        return faulting
    }

    /// A fetched object that is not of the class the request asked for. (Not a nested
    /// function appending to the generic result array: that looked up the array type's
    /// metadata at every call.)
    private static func wrongClass(_ object: ManagedObject, _ expected: Any.Type, _ entity: EntityDescription) -> ObjectGraphError {
        ObjectGraphError(.wrongValueType, objectID: object.objectID, "fetched \(object.objectID) is a \(type(of: object)), not \(expected); bind \(entity.name) to \(expected) or fetch ManagedObject")
    }

    /// The objects matching `request` as a lazily loaded collection: IDs now, objects a batch
    /// of ``FetchRequest/fetchBatchSize`` at a time (500 when it is 0), with memory bounded
    /// by the batch size however many objects match.
    public func fetchBatched<T: ManagedObject>(_ request: FetchRequest<T>) throws -> BatchedFetchResults<T> {
        try checkQueue("fetchBatched(_:)")
        if let resolved = resolvingHandedOverIDs(in: request) { return try fetchBatched(resolved) }
        var idsOnly = request
        idsOnly.returnsObjectsAsFaults = true
        let (entity, answer) = try executeFetch(idsOnly)
        let ids = answer.ids
        // Checked now, so a wrong key path is thrown here rather than met by an element read.
        let prefetching = try request.relationshipKeyPathsForPrefetching.map { try prefetchSteps($0, from: entity) }
        // Unsaved matches are held by the result, under their temporary IDs (see BatchedFetchResults).
        var inserted: [ObjectID: ManagedObject] = [:]
        if !insertedStorage.isEmpty {
            for id in ids where id.isTemporary { inserted[id] = registeredLive(id) }
        }
        return BatchedFetchResults(
            context: self, objectIDs: ids, inserted: inserted, batchSize: request.fetchBatchSize > 0 ? request.fetchBatchSize : 500,
            refreshesRefetched: request.shouldRefreshRefetchedObjects, prefetching: prefetching)
    }

    /// The IDs of the objects matching `request`, in order.
    public func fetchObjectIDs<T: ManagedObject>(_ request: FetchRequest<T>) throws -> [ObjectID] {
        try checkQueue("fetchObjectIDs(_:)")
        if let resolved = resolvingHandedOverIDs(in: request) { return try fetchObjectIDs(resolved) }
        return try executeFetch(request).answer.ids
    }

    /// The number of objects `fetch(request)` would return: matching objects (pending changes
    /// included as for fetch), after the offset, at most the limit.
    public func count<T: ManagedObject>(for request: FetchRequest<T>) throws -> Int {
        try checkQueue("count(for:)")
        if let resolved = resolvingHandedOverIDs(in: request) { return try count(for: resolved) }
        try processPendingChanges()
        let entity = try fetchEntity(of: request)
        if request.includesPendingChanges, try pendingChangesMatter(request, entity: entity) {
            return try executeFetch(request).answer.ids.count
        }
        // `toOne == object` with nothing else asked: the store's own count when it keeps the
        // relationship's members, before any store request is built.
        if request.predicateIsFinal && request.sortKeys.isEmpty && request.fetchOffset == 0 && request.fetchLimit == 0,
           let form = StoreFetchRequest.ToOneComparison(request.predicate, on: entity), form.op == .equal,
           let counted = try coordinator.countRows(
               of: entity, includesSubentities: request.includesSubentities, where: form.relationship, is: form.object) {
            statisticsStorage.storeRoundTrips += 1
            return counted
        }
        var storeRequest = try makeStoreRequest(request, entity: entity)
        storeRequest.resultType = .count
        statisticsStorage.storeRoundTrips += 1
        return try coordinator.count(storeRequest)
    }

    func fetchEntity<T: ManagedObject>(of request: FetchRequest<T>) throws -> EntityDescription {
        if let name = request.entityName { return try model.requireEntity(name) }
        if let entity = model.entity(for: T.self) { return entity }
        throw ObjectGraphError(.unknownEntity, "the fetch request names no entity and \(T.self) is not bound to one")
    }

    func makeStoreRequest<T: ManagedObject>(_ request: FetchRequest<T>, entity: EntityDescription) throws -> StoreFetchRequest {
        let predicate = request.predicateIsFinal ? request.predicate : try request.effectivePredicate(for: entity, in: model)
        var storeRequest = StoreFetchRequest(
            entity: entity, includesSubentities: request.includesSubentities, predicate: predicate,
            sortKeys: request.sortKeys, offset: request.fetchOffset,
            limit: request.fetchLimit > 0 ? request.fetchLimit : nil,
            resultType: request.returnsObjectsAsFaults ? .objectIDs : .snapshots)
        // Checked here, so unknown keys and type mismatches are rejected before any store is
        // asked; the stores that evaluate in Swift reuse the compiled form kept.
        try storeRequest.validate(in: model)
        return storeRequest
    }

    /// Whether unsaved changes could alter the answer to `request`: changes to objects of the
    /// fetched entity, or to objects of an entity its predicate or sort keys read through
    /// relationships (`schoolClass.title`, `ANY subjects.name`) — a class renamed without
    /// saving changes which students match `schoolClass.title == …`.
    func pendingChangesMatter<T: ManagedObject>(_ request: FetchRequest<T>, entity: EntityDescription) throws -> Bool {
        if insertedStorage.isEmpty && updatedStorage.isEmpty && deletedStorage.isEmpty { return false }
        if hasPendingChanges(in: entity, includesSubentities: request.includesSubentities) { return true }
        return try hasPendingChanges(inTokens: relatedEntityTokens(makeStoreRequest(request, entity: entity)))
    }

    /// The entities (name tokens, with their sub-entities) whose objects the predicate or the
    /// sort keys of `storeRequest` read besides the evaluated object: the destinations of
    /// relationship steps, and the members a SUBQUERY or an aggregate reads. Empty when they
    /// read only the evaluated object's own values (its attributes, its foreign keys, its
    /// members' IDs).
    func relatedEntityTokens(_ storeRequest: StoreFetchRequest) throws -> Set<UInt32> {
        if storeRequest.predicate == nil && storeRequest.sortKeys.isEmpty { return [] }
        let compiled = try storeRequest.compiled(in: model)
        var tokens = Set<UInt32>()
        for key in compiled.sort.keys { addRelatedEntityTokens(of: key.path, to: &tokens) }
        func add(_ operand: CompiledOperand) {
            switch operand {
            case .keyPath(let path): addRelatedEntityTokens(of: path, to: &tokens)
            case .list(let items): items.forEach(add)
            case .subqueryCount(let collection, let inner):
                addRelatedEntityTokens(of: collection, to: &tokens)
                if case .relationship(let members) = collection.terminal { tokens.formUnion(model.destinationEntity(of: members).hierarchyTokens) }
                add(inner)
            case .constant, .object, .evaluatedObject: break
            }
        }
        func add(_ predicate: CompiledPredicate) {
            switch predicate {
            case .constant: break
            case .and(let parts), .or(let parts): parts.forEach(add)
            case .not(let inner): add(inner)
            case .comparison(let comparison): add(comparison.left); add(comparison.right)
            }
        }
        if let predicate = compiled.predicate { add(predicate) }
        return tokens
    }

    /// Adds the entities `path` reads objects of: each step's destination, with its
    /// sub-entities (a to-one may name an object of any of them).
    func addRelatedEntityTokens(of path: ResolvedKeyPath, to tokens: inout Set<UInt32>) {
        for step in path.steps { tokens.formUnion(model.destinationEntity(of: step).hierarchyTokens) }
    }

    /// Whether an object of an entity among `tokens` is inserted, updated or deleted here.
    func hasPendingChanges(inTokens tokens: Set<UInt32>) -> Bool {
        guard !tokens.isEmpty else { return false }
        return insertedStorage.contains { tokens.contains($0.objectID.entityToken) }
            || updatedStorage.keys.contains { tokens.contains($0.entityToken) }
            || deletedStorage.contains { tokens.contains($0.objectID.entityToken) }
    }

    func hasPendingChanges(in entity: EntityDescription, includesSubentities: Bool) -> Bool {
        // (Nothing pending, the usual case, is answered before the entity's names are taken.)
        if insertedStorage.isEmpty && updatedStorage.isEmpty && deletedStorage.isEmpty { return false }
        return hasPendingChanges(inTokens: includesSubentities ? entity.hierarchyTokens : [entity.nameToken])
    }

    /// The matching IDs in order, with their rows in the same order when the store sent rows
    /// (otherwise `rows` is empty).
    private func executeFetch<T: ManagedObject>(_ request: FetchRequest<T>) throws -> (entity: EntityDescription, answer: PersistentStoreCoordinator.FetchAnswer) {
        try processPendingChanges()
        let entity = try fetchEntity(of: request)
        var storeRequest = try makeStoreRequest(request, entity: entity)
        let ownChanges = request.includesPendingChanges && hasPendingChanges(in: entity, includesSubentities: request.includesSubentities)
        // Changes to the objects the predicate or the order reads through relationships
        // matter too: the store's answer is about their saved values, so every row is then
        // evaluated here, on live objects. (A related object may be of the fetched entity
        // itself: a manager's name for `manager.name == …`.)
        let anyChanges = !(insertedStorage.isEmpty && updatedStorage.isEmpty && deletedStorage.isEmpty)
        let readsRelated = request.includesPendingChanges && anyChanges ? try hasPendingChanges(inTokens: relatedEntityTokens(storeRequest)) : false
        guard ownChanges || readsRelated else {
            statisticsStorage.storeRoundTrips += 1
            return (entity, try coordinator.fetch(storeRequest, installsRows: !request.returnsObjectsAsFaults))
        }
        // Unsaved changes: ask the store for every match, then correct the set in memory.
        let compiled = try storeRequest.compiled(in: model).predicate
        if readsRelated { storeRequest.predicate = nil }
        storeRequest.offset = 0
        storeRequest.limit = nil
        storeRequest.sortKeys = []
        storeRequest.resultType = .objectIDs
        statisticsStorage.storeRoundTrips += 1
        let stored = try coordinator.fetch(storeRequest).ids
        let tokens = request.includesSubentities ? entity.hierarchyTokens : [entity.nameToken]
        let source = ObjectRowSource(context: self)
        let evaluator = PredicateEvaluator(source: source)
        func matches(_ object: ManagedObject) throws -> Bool {
            guard let compiled else { return true }
            return try evaluator.evaluate(compiled, on: object)
        }
        var candidates = OrderedSet<ObjectID>()
        if readsRelated, let compiled {
            // The store matched nothing: each unchanged row is evaluated here, on its stored
            // values and the related objects' unsaved ones (see SavedStateRowSource).
            let unchanged = stored.filter { !isDeletedHere($0) && updatedStorage[$0] == nil }
            candidates.append(contentsOf: try SavedStateRowSource.matching(unchanged, compiled, in: self))
        } else {
            for id in stored where !isDeletedHere(id) && updatedStorage[id] == nil { candidates.append(id) }
        }
        for object in try updatedWithRows(tokens, stored: compiled == nil ? stored : nil) {
            if try matches(object) { candidates.append(object.objectID) }
        }
        for object in insertedStorage where tokens.contains(object.objectID.entityToken) {
            if try matches(object) { candidates.append(object.objectID) }
        }
        var objects = candidates.map(registeredOrFault)
        if !request.sortKeys.isEmpty && !request.includesPropertyValues {
            // Sorted without loading values into the context: candidates with unsaved changes
            // by their values, the others by their stored rows (which is what a fault would load).
            let sort = try CompiledSort.compile(request.sortKeys, for: entity, in: model)
            let saved = SavedStateRowSource(context: self)
            let sorted = try sort.sort(try saved.rows(for: Array(candidates)), using: PredicateEvaluator(source: saved))
            objects = sorted.map { registeredOrFault(saved.objectID(of: $0)) }
        } else if !request.sortKeys.isEmpty {
            try fulfillFaults(objects)
            let sort = try CompiledSort.compile(request.sortKeys, for: entity, in: model)
            objects = try sort.sort(objects, using: evaluator)
        } else {
            objects.sort { ObjectID.storageOrder($0.objectID, $1.objectID) }
        }
        let sliced = PersistentStoreCoordinator.slice(objects, offset: request.fetchOffset, limit: request.fetchLimit > 0 ? request.fetchLimit : nil)
        return (entity, .init(ids: sliced.map(\.objectID), rows: []))
    }

    /// The updated objects of the entities `tokens` whose rows exist.
    ///
    /// An updated object still a fault changed only as the other end of a membership, unread;
    /// its row may be gone (a no-action inverse left naming a deleted row, then pointed
    /// elsewhere, unlinks it from that row's object). A missing row matches nothing: the save
    /// drops such an object, and a fetch listed it (an object whose every read then failed)
    /// or, with a predicate, failed with objectNotFound. `allStored` — every stored ID of the
    /// entities, when the store was asked without a predicate — answers without a read;
    /// otherwise the faults are read in one round trip, as the predicate would read them.
    private func updatedWithRows(_ tokens: Set<UInt32>, stored allStored: [ObjectID]?) throws -> [ManagedObject] {
        var objects: [ManagedObject] = []
        var faults: [ManagedObject] = []
        for (id, object) in updatedStorage where tokens.contains(id.entityToken) {
            if object.isFaultStorage { faults.append(object) } else { objects.append(object) }
        }
        guard !faults.isEmpty else { return objects }
        if let allStored {
            let existing = Set(allStored)
            objects += faults.filter { existing.contains($0.objectID) }
        } else {
            try fulfillFaults(faults.filter { !$0.isInaccessibleStorage })
            objects += faults.filter { !$0.isFaultStorage }
        }
        return objects
    }

    /// The relationships `keyPath` (a prefetching key path) walks from `entity`.
    func prefetchSteps(_ keyPath: String, from entity: EntityDescription) throws -> [RelationshipDescription] {
        var steps: [RelationshipDescription] = []
        var currentEntity = entity
        // Empty steps are kept, so that "a..b", ".a", "a." and "" are refused rather than read
        // as the path without them.
        for component in keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init) {
            guard !component.isEmpty else {
                throw ObjectGraphError(.invalidFetch, key: keyPath, "cannot prefetch '\(keyPath)': the key path has an empty step (relationship names joined by single dots)")
            }
            guard let relationship = currentEntity.relationship(named: component) else {
                throw ObjectGraphError(.invalidFetch, key: keyPath, "cannot prefetch '\(keyPath)': \(currentEntity.name) has no relationship '\(component)'")
            }
            steps.append(relationship)
            currentEntity = model.destinationEntity(of: relationship)
        }
        return steps
    }

    /// Loads the destinations of the relationship `steps` for all `objects`: one round trip per step.
    func prefetch(_ steps: [RelationshipDescription], from objects: [ManagedObject]) throws {
        var current = objects
        for relationship in steps {
            // Destinations are told apart by ID (one object per ID in a context) before their
            // objects are looked up: 10,000 students naming 100 subjects looked up a registered
            // object and SipHashed its identity 100,000 times.
            var seen = Set<ObjectID>()
            // In front of the set, a direct-mapped memo of the last ID seen per slot:
            // destinations repeat (10,000 students share 100 subjects), and a repeat is then
            // one compare instead of a hash probe (a twentieth of prefetching them, perf).
            var recent = [ObjectID?](repeating: nil, count: 256)
            func isNew(_ id: ObjectID) -> Bool {
                let slot = Int(truncatingIfNeeded: id.value) & 255
                if recent[slot] == id { return false }
                recent[slot] = id
                return seen.insert(id).inserted
            }
            var nextObjects: [ManagedObject] = []
            if relationship.isToMany {
                try loadToMany(relationship, for: current)
                for object in current {
                    for id in object.loadedMembers(relationship.slot) ?? [] where isNew(id) {
                        nextObjects.append(reachedObject(id))
                    }
                }
            } else {
                try fulfillFaults(current)
                for object in current where !object.isFaultStorage {
                    guard let id = object.toOneValues[relationship.slot], isNew(id) else { continue }
                    nextObjects.append(reachedObject(id))
                }
            }
            try fulfillFaults(nextObjects)
            current = nextObjects
        }
    }
}

/// Reads live objects for the evaluator, so unsaved values count.
struct ObjectRowSource: PredicateRowSource {
    let context: ManagedObjectContext

    func objectID(of row: ManagedObject) -> ObjectID { row.objectID }

    func attribute(_ attribute: AttributeDescription, of row: ManagedObject) throws -> AttributeValue {
        try context.fulfillFaultIfNeeded(row)
        return row.attributeValues[attribute.slot]
    }

    func toOneID(_ relationship: RelationshipDescription, of row: ManagedObject) throws -> ObjectID? {
        try context.fulfillFaultIfNeeded(row)
        return row.toOneValues[relationship.slot]
    }

    /// The destination, `nil` when its record is gone: a no-action delete leaves the to-one
    /// naming it, and the stores, finding no row, evaluate the step as empty; firing the fault
    /// threw instead, so a fetch failed as soon as unsaved changes sent it here.
    func toOne(_ relationship: RelationshipDescription, of row: ManagedObject) throws -> ManagedObject? {
        guard let id = try toOneID(relationship, of: row) else { return nil }
        let destination = context.registeredOrFault(id)
        do {
            try context.fulfillFaultIfNeeded(destination)
        } catch let error as ObjectGraphError where error.code == .objectNotFound && !id.isTemporary {
            return nil
        }
        return destination
    }

    func toMany(_ relationship: RelationshipDescription, of row: ManagedObject) throws -> [ManagedObject] {
        try context.loadToManyIfNeeded(row, relationship)
        return (row.toManyStates[relationship.slot].members ?? []).map(context.registeredOrFault)
    }
}
