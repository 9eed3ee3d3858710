/// How a context's ``ManagedObjectContext/save()`` resolves optimistic-locking conflicts —
/// objects it changed (or deleted) that another context saved since they were read — and
/// uniqueness-constraint conflicts (see "Uniqueness constraints" below).
///
/// The store detects conflicts through each row's version. With any policy but ``error`` the
/// context re-reads the stored rows, resolves every conflict as the policy says, and retries the
/// save once with the new versions; a conflict on the retry (a third writer) is thrown.
///
/// Choices where Core Data is vague, applied the same on every store:
/// - an object the context **updated** whose record was **deleted** by the other save: the
///   deletion wins under every policy but ``error``; the context's changes to it are dropped,
///   references to it from the context's other changes are cleared, and the object becomes
///   inaccessible (when its fault fires it becomes a deleted object with empty values, or
///   fails with ``ObjectGraphError/Code/objectNotFound``: see
///   ``ManagedObjectContext/shouldDeleteInaccessibleFaults``);
/// - an object the context **deleted** that the other save **changed**: the delete wins, and its
///   delete rules are applied again to what the store holds now (so a message added to a chat
///   by the other save is cascaded too, never left pointing at a deleted chat); an object only a
///   cascade deleted here is deleted again only if the cascade still reaches it in the stored
///   row (a message the other save moved to a chat not deleted here stays there, its other
///   relationships as the store holds them);
/// - to-many memberships are changes relative to what was read, so both saves' additions and
///   removals are kept; the policies decide attribute and to-one values, and the order of an
///   ordered to-many (a property of its owner): ``rollback`` takes the stored order,
///   ``storeTrumps`` takes it if the other save reordered the members this context reordered,
///   the others keep this context's order (members only the other save added follow it).
///
/// ## Uniqueness constraints
///
/// The policies also resolve uniqueness-constraint conflicts (Core Data's
/// `NSConstraintConflict`, `resolve(constraintConflicts:)`): an **inserted** object whose
/// constrained values a stored row already uses, or an object inserted before it in the same
/// save, is merged into that object ("upsert") instead of failing the save with code 1551.
/// Under ``error`` the save throws ``ValidationError`` (1551) naming the object, the
/// constraint and the values, as before. Applied the same on every store:
/// - **who survives**: the stored row, with its ``ObjectID`` and its managed object in the
///   context (registered, or a new one); between two unsaved objects, the one inserted first.
///   The survivor plays the store's part, the merged-away object ("loser") the in-memory one;
/// - **attributes and to-ones**: ``objectTrumps`` puts each value the loser was given (not a
///   default it was left with) on the survivor, keeping the survivor's other values;
///   ``storeTrumps`` keeps the survivor's values and fills only those that are nil;
///   ``overwrite`` puts every value of the loser, defaults and nils included, on the survivor;
///   ``rollback`` keeps the survivor's values and drops the loser's;
/// - **relationships are never lost**: to-many memberships of the loser (one-to-many,
///   many-to-many, many-to-nil) are added to the survivor's under every policy; every object
///   that named the loser — through an inverse or a relationship without one — names the
///   survivor instead, inverses kept paired, at the loser's position in ordered ones. A
///   one-to-one partner the policy does not keep is let go (its to-one cleared), as any
///   one-to-one reassignment does;
/// - **undo**: with an undo stack, the merges are a group of their own; undone (the save
///   keeps the history), the loser is an unsaved insert again, merged again by the next save;
/// - **the loser** leaves the context: it is not stored, not registered, and becomes
///   inaccessible like a deleted and saved object. ``ContextDidSave/mergedIDs`` maps its ID to
///   the survivor's; the save lists the survivor as updated (or inserted, between two new
///   objects) and ``objectGraphObjectsDidChange`` lists the loser as deleted;
/// - **a stored row another save changed** since this context read it is read again before
///   the merge (and optimistic locking still guards the write), so the policy merges into the
///   row as stored now;
/// - **sub-entities**: a constraint of a parent covers its sub-entities, so a Pupil may merge
///   into a stored Person or the reverse. Properties are matched by name; a loser holding a
///   value or a relationship the survivor's entity has no place for cannot be merged, and the
///   save throws 1551 saying so (nothing is dropped silently);
/// - **races**: the store's write re-checks the constraints; a save that finds a row another
///   save stored after its validation validates again and merges into that row, so racing
///   upserts through one coordinator or several end in one row;
/// - **nested contexts**: constraints are checked by the root context's save, under the
///   root's policy, as Core Data's coordinator checks them; a child's save into its parent
///   checks none, so what a child (or two siblings) inserted is merged, or refused, there;
/// - only inserted objects are merged away: a stored object changed to collide with another
///   stored row is refused (1551) under every policy, since resolving it would delete a row.
/// A save with other validation errors merges nothing and throws them all; a merge whose
/// result breaks a rule (a required value the loser left nil, under ``overwrite``) throws, and
/// the context keeps the merge. The survivor gets no ``ManagedObject/willSave()`` call for
/// the merge (willSave ran before validation). A model without constraints does none of this.
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
