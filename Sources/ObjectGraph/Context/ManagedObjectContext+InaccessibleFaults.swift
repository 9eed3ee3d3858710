import Foundation

/// Inaccessible faults: objects whose record another context or process deleted after this
/// context got them. Reading one is not a programming error — it is what concurrent work
/// looks like — so by default (``ManagedObjectContext/shouldDeleteInaccessibleFaults``, as in
/// Core Data) the read turns the object into a deleted object with empty values instead of
/// stopping the process.
extension ManagedObjectContext {
    /// Loads a fault's values for a read made through the object's accessors. A fault whose
    /// record is gone becomes a deleted object of this context with empty values when
    /// ``shouldDeleteInaccessibleFaults`` is on; otherwise the read fails with
    /// ``ObjectGraphError/Code/objectNotFound``.
    ///
    /// Only the accessors come here: the context's own work (delete rules, merges, nested
    /// saves, uniqueness probes) calls ``fulfillFaultIfNeeded(_:)`` and handles a missing record
    /// in its own way.
    func fulfillFaultForAccess(_ object: ManagedObject) throws {
        guard object.isFaultStorage else { return }
        do {
            try fulfillFaultIfNeeded(object)
        } catch let error as ObjectGraphError where error.code == .objectNotFound {
            guard shouldDeleteInaccessibleFaultsStorage, !object.objectID.isTemporary, object.belongs(to: self) else { throw error }
            deleteInaccessibleFault(object)
        }
    }

    /// Turns `object`, registered here with no record behind it, into a deleted object with
    /// empty values: attributes `nil`, to-ones `nil`, to-manys empty. It joins the deleted
    /// objects without going through ``delete(_:)``: nothing is recorded for undo, no delete
    /// rule runs (it relates to nothing), no hook is called, and the save discards it
    /// (``ManagedObject/isVanishedStorage``) instead of storing a deletion.
    private func deleteInaccessibleFault(_ object: ManagedObject) {
        let entity = object.entity
        object.install(RowSnapshot(
            objectID: object.objectID, version: -1,
            attributes: AttributeValues([AttributeValue](repeating: .null, count: entity.attributes.count)),
            toOne: ToOneValues(repeating: nil, count: entity.toOneRelationships.count)))
        for slot in object.toManyStates.indices { object.toManyStates[slot].load(stored: []) }
        object.isVanishedStorage = true
        // Its recorded states leave the undo stack, as a merged deletion's do: replayed, a
        // state from before the record went put the object back as a live, unchanged object
        // with the old values and no record, which the save then passed over in silence.
        undoStackStorage?.forget([object.objectID])
        guard !object.isDeletedStorage else { return }
        if object.isUpdatedStorage {
            updatedStorage.removeValue(forKey: object.objectID)
            object.isUpdatedStorage = false
        }
        object.isDeletedStorage = true
        deletedStorage.insert(object)
    }
}

extension AttributeType {
    /// The value a non-optional typed accessor reads from an attribute of this type that holds
    /// `nil` on an inaccessible fault the context deleted (see
    /// ``ManagedObjectContext/shouldDeleteInaccessibleFaults``): zero, empty, `false`, the
    /// reference date, the all-zero UUID, the file URL of the root directory (the URL a value
    /// made up from empty values holds: there is no empty URL); `nil` for transformables, whose
    /// empty value depends on their type (see `KeyPathProbe.emptyValue`).
    var emptyValue: AttributeValue? {
        switch self {
        case .integer16, .integer32, .integer64: return .integer(0)
        case .double, .float: return .double(0)
        case .decimal: return .decimal(0)
        case .string: return .string("")
        case .boolean: return .bool(false)
        case .date: return .date(Date(timeIntervalSinceReferenceDate: 0))
        case .binaryData: return .data(Data())
        case .uuid: return .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        // Without one, a non-optional `URL` property stopped the process at the read that
        // was meant to let the app carry on.
        case .uri: return .uri(URL(fileURLWithPath: "/"))
        case .transformable: return nil
        }
    }
}
