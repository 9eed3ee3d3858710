/// Temporary IDs of a parent's unsaved objects, handed to a child.
///
/// A parent gives its inserted objects permanent IDs as soon as a child looks at them
/// (ManagedObjectContext+Nested), so that every ID a child sees resolves in the whole family.
/// An app that read such an object's ``ManagedObject/objectID`` before that moment holds its
/// temporary ID, and handing it to a child is what Core Data users do to edit a new object in
/// a scratch context: Core Data's child finds the object, as its parent still has it by that
/// ID. Here the child did not ask its parent at all (a temporary ID it did not know named
/// "a temporary ID that was never saved"), and once a child had looked, not even the parent
/// found it by its temporary ID any more. So `object(with:)` and `existingObject(with:)` look
/// a temporary ID this context does not know up in the parent's record of the IDs it changed,
/// and in the parents above it, and so do fetches for the objects their predicates name
/// (`chat == %@` with the parent's new chat matched nothing in a child); the record lasts until the parent's next save, rollback or reset, after
/// which a temporary ID names nothing anywhere, as in a context without children.
extension ManagedObjectContext {
    /// The ID under which `id` can be found here: `id` itself, or for a temporary ID this
    /// context has not registered, the permanent ID its parent (or this context) gave it
    /// because a child looked. Runs on this context's queue; asks the parents on theirs.
    func resolvingHandedOverID(_ id: ObjectID) -> ObjectID {
        guard id.isTemporary, registeredLive(id) == nil else { return id }
        if let permanent = handedOverIDs[id] { return permanent }
        guard let parent = parentStorage,
              let permanent = try? parent.performAndWait({ try parent.permanentIDForChild(id) }) else { return id }
        handedOverIDs[id] = permanent
        return permanent
    }

    /// The permanent ID of the object this context (or a parent above it) knew by the
    /// temporary ID `id`, giving its inserted objects permanent IDs first if `id` is still one
    /// of theirs; `nil` when no context of the family knows `id`. Runs on this context's queue.
    private func permanentIDForChild(_ id: ObjectID) throws -> ObjectID? {
        if let object = registeredLive(id), object.isInsertedStorage {
            try prepareForChild()
            return object.objectID.isTemporary ? nil : object.objectID
        }
        if let permanent = handedOverIDs[id] { return permanent }
        guard let parent = parentStorage else { return nil }
        return try parent.performAndWait { try parent.permanentIDForChild(id) }
    }

    /// `request` with the temporary IDs its predicate names resolved as
    /// ``resolvingHandedOverID(_:)`` resolves them; `nil` when none needs it, and always in a
    /// root context that handed nothing over (the common case). Callers run themselves again
    /// on the answer, so the request is copied only when something changed.
    /// (Inlined, and answering `nil` rather than a request, so that the common case costs one
    /// test: copying the request in the generic, unspecialized entry points instantiated its
    /// type's metadata on every call, about 1,000 instructions per `count(for:)` — a fifth of
    /// LMDB's `count-per-chat`, callgrind.)
    @inline(__always)
    func resolvingHandedOverIDs<T: ManagedObject>(in request: FetchRequest<T>) -> FetchRequest<T>? {
        guard parentStorage != nil || !handedOverIDs.isEmpty, let predicate = request.predicate,
              let resolved = predicate.mappingTemporaryObjectIDs({ resolvingHandedOverID($0) }) else { return nil }
        var copy = request
        copy.predicate = resolved
        return copy
    }
}
