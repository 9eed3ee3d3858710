import Foundation
import ObjectGraph
import OrderedCollections

/// A model-based random walk through undo across saves: random edits of the conformance
/// model in a context with an undo stack, with saves, undos, redos, refreshes and rollbacks in
/// between, each applied to a reference graph too (``WalkGraph``). The reference keeps the
/// graph as it was before each undo group, so after any undo or redo the context must show
/// exactly the graph of that point; after each save a fresh context must read the same graph
/// from the store; and the context's inserted, deleted and updated objects must be what differs
/// from what the walk last saved.
final class UndoWalk {
    /// One step, by walk key (the keys of inserted objects are part of the step, so a shortened
    /// list of steps replays the same objects).
    enum Step: CustomStringConvertible {
        case insert(Int, String)
        case delete(Int)
        case set(Int, String, Int)
        case setToOne(Int, String, Int?)
        case add(Int, String, Int, at: Int?)
        case remove(Int, String, Int)
        case move(Int, String, from: Int, to: Int)
        case process, check, save, undo, redo, refreshAll, rollback, reset

        var description: String {
            switch self {
            case .insert(let key, let entity): return "insert #\(key) \(entity)"
            case .delete(let key): return "delete #\(key)"
            case .set(let key, let name, let n): return "#\(key).\(name) = \(n)"
            case .setToOne(let key, let name, let target): return "#\(key).\(name) = \(target.map { "#\($0)" } ?? "nil")"
            case .add(let key, let name, let member, let index): return "#\(key).\(name) += #\(member)\(index.map { " at \($0)" } ?? "")"
            case .remove(let key, let name, let member): return "#\(key).\(name) -= #\(member)"
            case .move(let key, let name, let from, let to): return "#\(key).\(name) move \(from) → \(to)"
            case .process: return "process"
            case .check: return "check"
            case .save: return "save"
            case .undo: return "undo"
            case .redo: return "redo"
            case .refreshAll: return "refreshAll"
            case .rollback: return "rollback"
            case .reset: return "reset"
            }
        }
    }

    let env: ScenarioEnvironment
    let context: ManagedObjectContext
    private(set) var reference = WalkGraph()
    private var stored = WalkGraph()
    private var undoStates: [WalkGraph] = []
    private var redoStates: [WalkGraph] = []
    /// The graph when the open undo group recorded its first change (`nil`: nothing recorded).
    private var groupStart: WalkGraph?
    private var objects: [Int: ManagedObject] = [:]
    private var keys: [ObjectIdentifier: Int] = [:]
    /// The steps applied so far.
    private(set) var steps: [Step] = []

    /// The parent of a walk in a child context: each save of the walk's context is followed
    /// by one of the parent, so the store holds what the walk saved.
    let parent: ManagedObjectContext?

    init(_ env: ScenarioEnvironment, inChildContext: Bool) {
        self.env = env
        parent = inChildContext ? env.newContext("undo walk parent") : nil
        context = parent?.newChildContext() ?? env.newContext("undo walk")
        context.undoStack = ContextUndoStack()
    }

    // MARK: Steps

    /// Applies `step` to the context and the reference and checks them; false (nothing done)
    /// when the step does not apply to the reference as it is (a shortened replay).
    @discardableResult
    func apply(_ step: Step) throws -> Bool {
        guard applies(step) else { return false }
        steps.append(step)
        switch step {
        case .insert(let key, let entity):
            record()
            let object = try context.insertObject(entityName: entity)
            objects[key] = object
            keys[ObjectIdentifier(object)] = key
            reference.insert(key, entity: entity)
            for attribute in WalkSchema.entity(entity).attributes where attribute.kind == .string {
                try object.setValue(reference.objects[key]!.values[attribute.name], forKey: attribute.name)
            }
        case .delete(let key):
            record()
            context.delete(objects[key]!)
            reference.delete(key)
        case .set(let key, let name, let n):
            record()
            let attribute = WalkSchema.entity(reference.objects[key]!.entity).attributes.first { $0.name == name }!
            try objects[key]!.setValue(attribute.value(n), forKey: name)
            reference.objects[key]!.values[name] = WalkGraph.show(attribute.value(n))
        case .setToOne(let key, let name, let target):
            record()
            try objects[key]!.setValue(target.map { objects[$0]! }, forKey: name)
            reference.setToOne(key, relationship(key, name), target)
        case .add(let key, let name, let member, let index):
            record()
            if let index { try objects[key]!.insert(objects[member]!, at: index, in: name) } else { try objects[key]!.add(objects[member]!, to: name) }
            reference.add(member, to: key, relationship(key, name), at: index)
        case .remove(let key, let name, let member):
            record()
            try objects[key]!.remove(objects[member]!, from: name)
            reference.remove(member, from: key, relationship(key, name))
        case .move(let key, let name, let from, let to):
            record()
            try objects[key]!.move(from: from, to: to, in: name)
            reference.move(in: key, relationship(key, name), from: from, to: to)
        case .process:
            closeGroup()
            try context.processPendingChanges()
            try verify(reading: false)
        case .check:
            closeGroup()
            try context.processPendingChanges()
            try verify(reading: true)
        case .save:
            closeGroup()
            try context.save()
            if let parent { try parent.performAndWait { try parent.save() } }
            stored = reference
            try verify(reading: false)
            try check(!context.hasChanges, "nothing is left to save after a save")
            try verifyStore()
        case .undo:
            closeGroup()
            try context.undo()
            if let state = undoStates.popLast() {
                redoStates.append(reference)
                reference = state
            }
            try verify(reading: false)
        case .redo:
            closeGroup()
            try context.redo()
            if let state = redoStates.popLast() {
                undoStates.append(reference)
                reference = state
            }
            try verify(reading: false)
        case .refreshAll:
            closeGroup()
            try context.processPendingChanges()
            context.refreshAllObjects()
            try verify(reading: false)
        case .rollback:
            context.rollback()
            reference = stored
            undoStates = []
            redoStates = []
            groupStart = nil
            try verify(reading: false)
        case .reset:
            // Every object let go and fetched again as a fault, with an empty history: the
            // saves and undos that follow start from objects never read.
            var keyByID: [ObjectID: Int] = [:]
            for key in stored.objects.keys { keyByID[objects[key]!.objectID] = key }
            context.reset()
            reference = stored
            undoStates = []
            redoStates = []
            groupStart = nil
            for entity in WalkSchema.entities {
                for object in try context.fetch(FetchRequest<ManagedObject>(entityName: entity.name)) {
                    guard let key = keyByID[object.objectID] else {
                        throw ScenarioFailure(message: "the store holds \(object.objectID), which the walk never saved", file: #filePath, line: #line)
                    }
                    objects[key] = object
                    keys[ObjectIdentifier(object)] = key
                }
            }
        }
        return true
    }

    private func relationship(_ key: Int, _ name: String) -> WalkRelationship {
        WalkSchema.relationship(reference.objects[key]!.entity, name)
    }

    /// A change opens the undo group if none is open (and, as in the stack, forgets the redos).
    private func record() {
        guard groupStart == nil else { return }
        groupStart = reference
        redoStates = []
    }

    private func closeGroup() {
        guard let start = groupStart else { return }
        undoStates.append(start)
        groupStart = nil
    }

    /// Whether `step` is a real change of the reference as it is (the walk makes no step that
    /// changes nothing: the stack would record a group the reference does not).
    private func applies(_ step: Step) -> Bool {
        let graph = reference
        func live(_ key: Int) -> WalkObject? { graph.objects[key] }
        switch step {
        case .insert(let key, _): return objects[key] == nil
        case .delete(let key): return live(key).map { WalkSchema.entity($0.entity).deletable } ?? false
        case .set(let key, let name, let n):
            guard let object = live(key), let attribute = WalkSchema.entity(object.entity).attributes.first(where: { $0.name == name }) else { return false }
            return object.values[name] != WalkGraph.show(attribute.value(n))
        case .setToOne(let key, let name, let target):
            guard let object = live(key), object.toOne[name] != target else { return false }
            return target.map { live($0)?.entity == relationship(key, name).destination } ?? true
        case .add(let key, let name, let member, let index):
            guard let object = live(key), let members = object.toMany[name], !members.contains(member),
                  live(member)?.entity == relationship(key, name).destination else { return false }
            return index.map { $0 <= members.count } ?? true
        case .remove(let key, let name, let member): return live(key)?.toMany[name]?.contains(member) ?? false
        case .move(let key, let name, let from, let to):
            guard let members = live(key)?.toMany[name] else { return false }
            return from != to && members.indices.contains(from) && members.indices.contains(to)
        default: return true
        }
    }

    // MARK: Checks

    /// The graph the context shows, read through key-value access.
    func read(_ context: ManagedObjectContext, objects: [(key: Int, object: ManagedObject)], keyOf: (ManagedObject) -> Int?) throws -> WalkGraph {
        var graph = WalkGraph()
        for (key, object) in objects {
            let entity = WalkSchema.entity(object.entity.name)
            var shown = WalkObject(entity: entity.name)
            for attribute in entity.attributes { shown.values[attribute.name] = WalkGraph.show(try object.value(forKey: attribute.name)) }
            func walkKey(_ related: ManagedObject) throws -> Int {
                guard let found = keyOf(related) else {
                    throw ScenarioFailure(message: "#\(key).\(entity.name) refers to \(related.objectID), which the walk does not know", file: #filePath, line: #line)
                }
                return found
            }
            for relationship in entity.relationships {
                let value = try object.value(forKey: relationship.name)
                if relationship.isOrdered {
                    shown.toMany[relationship.name] = try (value as! OrderedSet<ManagedObject>).map(walkKey)
                } else if relationship.isToMany {
                    shown.toMany[relationship.name] = try (value as! Set<ManagedObject>).map(walkKey).sorted()
                } else if let target = value as? ManagedObject {
                    shown.toOne[relationship.name] = try walkKey(target)
                }
            }
            graph.objects[key] = shown
        }
        return graph
    }

    private func liveObjects() -> [(key: Int, object: ManagedObject)] {
        objects.filter { $0.value.managedObjectContext === context && !$0.value.isDeleted }.map { ($0.key, $0.value) }
    }

    /// The context's change sets are what differs from the graph last saved, and (`reading`)
    /// the context shows the reference graph. Reading fires every fault, so it is a step of
    /// its own: the steps between two readings meet objects and relationships still faults.
    private func verify(reading: Bool) throws {
        if reading {
            let shown = try read(context, objects: liveObjects()) { self.keys[ObjectIdentifier($0)] }
            guard shown == reference else {
                throw ScenarioFailure(message: "the context shows (vs the reference):\n  " + shown.differences(from: reference).joined(separator: "\n  "), file: #filePath, line: #line)
            }
        }
        func walkKeys(_ set: Set<ManagedObject>) -> Set<Int> { Set(set.map { keys[ObjectIdentifier($0)] ?? -1 }) }
        let live = Set(reference.objects.keys), saved = Set(stored.objects.keys)
        try checkEqual(walkKeys(context.insertedObjects).sorted(), live.subtracting(saved).sorted(), "inserted objects")
        try checkEqual(walkKeys(context.deletedObjects).sorted(), saved.subtracting(live).sorted(), "deleted objects")
        let changed = live.intersection(saved).filter { reference.objects[$0] != stored.objects[$0] }
        let updated = walkKeys(context.updatedObjects)
        try check(updated.isDisjoint(with: live.subtracting(saved)) && updated.isDisjoint(with: saved.subtracting(live)), "updated objects \(updated.sorted()) include inserted or deleted ones")
        try check(changed.isSubset(of: updated), "changed objects \(changed.subtracting(updated).sorted()) are not among the updated objects \(updated.sorted())")
        if reference != stored { try check(context.hasChanges, "the context differs from the store but has no changes") }
        try checkEqual(context.undoStack?.undoCount, undoStates.count, "groups to undo")
        try checkEqual(context.undoStack?.canRedo, !redoStates.isEmpty, "something to redo")
    }

    /// A fresh context reads the reference graph from the store.
    private func verifyStore() throws {
        var byID: [ObjectID: Int] = [:]
        for (key, object) in liveObjects() { byID[object.objectID] = key }
        let reader = env.newContext("undo walk reader")
        let read = try reader.performAndWait {
            var found: [(key: Int, object: ManagedObject)] = []
            for entity in WalkSchema.entities {
                for object in try reader.fetch(FetchRequest<ManagedObject>(entityName: entity.name)) {
                    guard let key = byID[object.objectID] else {
                        throw ScenarioFailure(message: "the store holds \(object.objectID), which the context does not show", file: #filePath, line: #line)
                    }
                    found.append((key, object))
                }
            }
            return try self.read(reader, objects: found) { byID[$0.objectID] }
        }
        guard read == reference else {
            throw ScenarioFailure(message: "a fresh context reads from the store (vs the reference):\n  " + read.differences(from: reference).joined(separator: "\n  "), file: #filePath, line: #line)
        }
    }

    // MARK: Random steps

    /// A random step that applies to the reference as it is.
    func randomStep(_ random: inout SeededRandom) -> Step {
        let live = reference.objects.keys.sorted()
        func pick<T>(_ items: [T]) -> T? { items.isEmpty ? nil : items[random.next(items.count)] }
        func insert() -> Step { .insert((objects.keys.max() ?? 0) + 1, pick(WalkSchema.entities.map(\.name))!) }
        func of(_ entity: String) -> [Int] { live.filter { reference.objects[$0]!.entity == entity } }
        // Undos and redos come in runs, across saves, so that states recorded several saves
        // back are put back.
        if let last = steps.last, random.next(10) < 5 {
            switch last {
            case .undo: return random.next(4) == 0 ? .save : .undo
            case .redo: return random.next(4) == 0 ? .save : .redo
            default: break
            }
        }
        let roll = live.count < 4 ? 0 : random.next(100)
        var step: Step?
        switch roll {
        case ..<18: return insert()
        case ..<25: step = pick(live.filter { WalkSchema.entity(reference.objects[$0]!.entity).deletable }).map { .delete($0) }
        case ..<38:
            if let key = pick(live), let attribute = pick(WalkSchema.entity(reference.objects[key]!.entity).attributes) { step = .set(key, attribute.name, random.next(1000)) }
        case ..<50:
            if let key = pick(live), let relationship = pick(WalkSchema.entity(reference.objects[key]!.entity).relationships.filter { !$0.isToMany }) {
                step = .setToOne(key, relationship.name, random.next(4) == 0 ? nil : pick(of(relationship.destination)))
            }
        case ..<62, ..<70, ..<75:
            guard let key = pick(live), let relationship = pick(WalkSchema.entity(reference.objects[key]!.entity).relationships.filter(\.isToMany)) else { break }
            let members = reference.objects[key]!.toMany[relationship.name]!
            if roll < 62 {
                step = pick(of(relationship.destination).filter { !members.contains($0) }).map {
                    .add(key, relationship.name, $0, at: relationship.isOrdered && random.next(2) == 0 ? random.next(members.count + 1) : nil)
                }
            } else if roll < 70 {
                step = pick(members).map { .remove(key, relationship.name, $0) }
            } else if relationship.isOrdered, members.count > 1 {
                step = .move(key, relationship.name, from: random.next(members.count), to: random.next(members.count))
            }
        case ..<78: return .process
        case ..<82: return .check
        case ..<87: return .save
        case ..<93: return .undo
        case ..<97: return .redo
        case ..<98: return .refreshAll
        case ..<99: return random.next(2) == 0 ? .reset : .rollback
        default: return .rollback
        }
        if let step, applies(step) { return step }
        return insert()
    }
}
