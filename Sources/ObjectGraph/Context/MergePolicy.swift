/// How a context's ``ManagedObjectContext/save()`` resolves optimistic-locking conflicts:
/// objects it changed (or deleted) that another context saved since they were read.
///
/// The store detects conflicts through each row's version. With any policy but ``error`` the
/// context re-reads the stored rows, resolves every conflict as the policy says, and retries the
/// save once with the new versions; a conflict on the retry (a third writer) is thrown.
///
/// Choices where Core Data is vague, applied the same on every store:
/// - an object the context **updated** whose record was **deleted** by the other save: the
///   deletion wins under every policy but ``error``; the context's changes to it are dropped,
///   references to it from the context's other changes are cleared, and the object becomes
///   inaccessible (``ObjectGraphError/Code/objectNotFound`` when its fault fires);
/// - an object the context **deleted** that the other save **changed**: the delete wins, and its
///   delete rules are applied again to what the store holds now (so a message added to a chat
///   by the other save is cascaded too, never left pointing at a deleted chat); an object only a
///   cascade deleted here is deleted again only if the cascade still reaches it in the stored
///   row (a message the other save moved to a chat not deleted here stays there, its other
///   relationships as the store holds them);
/// - to-many memberships are changes relative to what was read, so both saves' additions and
///   removals are kept; the policies decide attribute and to-one values.
public enum MergePolicy: Sendable, Hashable, CustomStringConvertible {
    /// Throw ``MergeConflictError`` (the default, Core Data's `NSErrorMergePolicy`).
    case error
    /// Property by property, values changed by the other save win; the context's other changes
    /// are kept (`NSMergeByPropertyStoreTrumpMergePolicy`).
    case storeTrumps
    /// Property by property, the context's changed values win; values it did not change take
    /// the other save's values (`NSMergeByPropertyObjectTrumpMergePolicy`).
    case objectTrumps
    /// The context's whole object is written over the stored row (`NSOverwriteMergePolicy`).
    case overwrite
    /// The context's changes to conflicting objects are discarded in favour of the stored
    /// values (`NSRollbackMergePolicy`).
    case rollback

    /// The policy's name.
    public var description: String {
        switch self {
        case .error: return "error"
        case .storeTrumps: return "storeTrumps"
        case .objectTrumps: return "objectTrumps"
        case .overwrite: return "overwrite"
        case .rollback: return "rollback"
        }
    }
}

/// A save failed because other saves changed or deleted objects the context changed since it
/// read them (optimistic locking), and the merge policy did not resolve it.
///
/// Lists every conflicting object with the properties on which the context and the store now
/// disagree, with both values and the value the context had read.
public struct MergeConflictError: Error, Sendable, CustomStringConvertible {
    /// One conflicting object.
    public struct ObjectConflict: Sendable, CustomStringConvertible {
        /// The object.
        public var objectID: ObjectID
        /// The row version the context had read.
        public var readVersion: Int64?
        /// The stored version now; `nil` when another save deleted the record.
        public var storedVersion: Int64?
        /// Whether the context was deleting the object (rather than changing it).
        public var contextDeletes: Bool
        /// The properties whose context value differs from the stored value.
        public var properties: [PropertyConflict]

        /// "Chat/p1 (read v1, stored v2): title context "a" store "b"".
        public var description: String {
            let versions = "read v\(readVersion.map(String.init) ?? "?"), stored \(storedVersion.map { "v\($0)" } ?? "deleted")"
            let what = contextDeletes ? " deleted here" : ""
            let properties = self.properties.isEmpty ? "" : ": " + self.properties.map(\.description).joined(separator: ", ")
            return "\(objectID) (\(versions))\(what)\(properties)"
        }
    }

    /// One property on which the context and the store disagree.
    public struct PropertyConflict: Sendable, CustomStringConvertible {
        /// The property's name.
        public var key: String
        /// The value in the context (what its save would write).
        public var contextValue: ConflictValue
        /// The value in the store now.
        public var storedValue: ConflictValue
        /// The value the context had read.
        public var readValue: ConflictValue

        /// "title: context "a", store "b" (read "x")".
        public var description: String { "\(key): context \(contextValue), store \(storedValue) (read \(readValue))" }
    }

    /// A property value in a conflict: an attribute's value or a to-one destination.
    public enum ConflictValue: Sendable, Hashable, CustomStringConvertible {
        /// An attribute value.
        case attribute(AttributeValue)
        /// A to-one relationship's destination (`nil` for none).
        case object(ObjectID?)

        /// The value, for messages.
        public var description: String {
            switch self {
            case .attribute(let value): return "\(value)"
            case .object(let id): return id.map { "\($0)" } ?? "nil"
            }
        }
    }

    /// Every conflicting object.
    public let conflicts: [ObjectConflict]
    /// The policy that was in effect.
    public let policy: MergePolicy
    /// The store's conflict error.
    public let underlying: StoreError

    /// The code shared with the store's error (``StoreError/Code/conflict``, Core Data's 133020).
    public var code: StoreError.Code { .conflict }

    /// A sentence naming the objects and properties.
    public var description: String {
        "merge conflict (policy \(policy)): \(conflicts.count) object\(conflicts.count == 1 ? "" : "s") changed by another save since they were read: "
            + conflicts.map(\.description).joined(separator: "; ")
    }
}
