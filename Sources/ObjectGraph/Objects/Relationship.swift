import OrderedCollections

/// A Swift type that can hold a relationship's value: `Destination?` for to-one,
/// `Set<Destination>` for to-many, `OrderedSet<Destination>` for ordered to-many.
public protocol RelationshipValue {
    /// Whether the type holds many objects.
    static var isToMany: Bool { get }
    /// Builds the value from the objects the relationship holds.
    static func make(from objects: [ManagedObject]) -> Self?
    /// Builds a to-one value from its destination (`nil` for none) without an array.
    static func make(single object: ManagedObject?) -> Self?
    /// Builds a to-many value from `count` objects that `objects` hands, one at a time, to the
    /// closure it is given (which answers `false` to stop early); `nil` when one does not fit.
    /// Each object is handed over owned, so a collection stores the reference it was given
    /// (borrowed, every member was retained once more to be stored and released after).
    static func make(count: Int, _ objects: ((consuming ManagedObject) -> Bool) -> Void) -> Self?
    /// The objects the value holds, in order.
    var relationshipObjects: [ManagedObject] { get }
    /// A to-one value's destination (`nil` for none) without an array.
    var singleRelationshipObject: ManagedObject? { get }
}

extension RelationshipValue {
    /// Through ``make(from:)``; to-one types answer directly.
    @inlinable
    public static func make(single object: ManagedObject?) -> Self? { make(from: object.map { [$0] } ?? []) }

    /// The first of ``relationshipObjects``; to-one types answer directly.
    @inlinable
    public var singleRelationshipObject: ManagedObject? { relationshipObjects.first }

    /// Through ``make(from:)``, the objects gathered first; the collections answer directly.
    @inlinable
    public static func make(count: Int, _ objects: ((consuming ManagedObject) -> Bool) -> Void) -> Self? {
        var gathered: [ManagedObject] = []
        gathered.reserveCapacity(count)
        objects { object in gathered.append(object); return true }
        return make(from: gathered)
    }
}

extension Optional: RelationshipValue where Wrapped: ManagedObject {
    /// To-one.
    @inlinable
    public static var isToMany: Bool { false }
    /// The first object, cast to `Wrapped`.
    @inlinable
    public static func make(from objects: [ManagedObject]) -> Wrapped?? {
        guard let first = objects.first else { return .some(nil) }
        return (first as? Wrapped).map { .some($0) }
    }
    /// The object, cast to `Wrapped`.
    @inlinable
    public static func make(single object: ManagedObject?) -> Wrapped?? {
        guard let object else { return .some(nil) }
        return (object as? Wrapped).map { .some($0) }
    }
    /// Zero or one object.
    @inlinable
    public var relationshipObjects: [ManagedObject] { self.map { [$0] } ?? [] }
    /// The object.
    @inlinable
    public var singleRelationshipObject: ManagedObject? { self }
}

extension Set: RelationshipValue where Element: ManagedObject {
    /// To-many.
    @inlinable
    public static var isToMany: Bool { true }
    /// The objects, cast to `Element`.
    @inlinable
    public static func make(from objects: [ManagedObject]) -> Set<Element>? {
        make(count: objects.count) { add in for object in objects where !add(object) { return } }
    }
    /// The objects handed over one at a time, cast to `Element`.
    @inlinable
    public static func make(count: Int, _ objects: ((consuming ManagedObject) -> Bool) -> Void) -> Set<Element>? {
        var result = Set<Element>(minimumCapacity: count)
        var fits = true
        objects { object in
            // Checked, then moved in: a conditional cast retained the result and released the
            // original, and `insert` hands the member back retained (released at once when
            // ignored), atomic updates per member.
            guard object is Element else { fits = false; return false }
            result.update(with: unsafeDowncast(consume object, to: Element.self))
            return true
        }
        return fits ? result : nil
    }
    /// The members.
    @inlinable
    public var relationshipObjects: [ManagedObject] { Array(self) }
}

extension OrderedSet: RelationshipValue where Element: ManagedObject {
    /// Ordered to-many.
    @inlinable
    public static var isToMany: Bool { true }
    /// The objects in order, cast to `Element`.
    @inlinable
    public static func make(from objects: [ManagedObject]) -> OrderedSet<Element>? {
        make(count: objects.count) { add in for object in objects where !add(object) { return } }
    }
    /// The objects handed over one at a time, in order, cast to `Element`.
    @inlinable
    public static func make(count: Int, _ objects: ((consuming ManagedObject) -> Bool) -> Void) -> OrderedSet<Element>? {
        var result = OrderedSet<Element>(minimumCapacity: count)
        var fits = true
        objects { object in
            // (Checked, then moved in, as in `Set`'s.)
            guard object is Element else { fits = false; return false }
            result.append(unsafeDowncast(consume object, to: Element.self))
            return true
        }
        return fits ? result : nil
    }
    /// The members in order.
    @inlinable
    public var relationshipObjects: [ManagedObject] { Array(self) }
}

/// Declares a typed relationship on a ``ManagedObject`` subclass:
///
/// ```swift
/// final class Chat: ManagedObject {
///     @Relationship var messages: Set<Message>
///     @Relationship var pinned: OrderedSet<Message>
/// }
/// final class Message: ManagedObject {
///     @Relationship var chat: Chat?
/// }
/// chat.$messages.add(message)      // one insert, inverse maintained, no set diffing
/// ```
/// Assigning a whole collection replaces the members (removals and additions, inverses
/// maintained). The projected value (`$messages`) edits in place.
@propertyWrapper
public struct Relationship<Value: RelationshipValue>: ManagedPropertyWrapper {
    /// What identifies the declaration in its class (see ``WrapperToken``).
    @usableFromInline let token: UInt32

    /// A relationship named like the property. Leave `line` and `column` to their defaults:
    /// the position of the declaration identifies it on every access (see ``WrapperToken``).
    @inlinable
    public init(line: UInt = #line, column: UInt = #column) { self.token = WrapperToken.declaration(line: line, column: column) }
    /// A relationship with an explicit model name.
    public init(_ name: String) { self.token = PropertyWrapperNames.token(for: name) }

    /// Unavailable: the value lives in the enclosing object.
    @available(*, unavailable, message: "@Relationship can only be used in ManagedObject subclasses")
    public var wrappedValue: Value {
        get { fatalError("unreachable") }
        set { fatalError("unreachable") }
    }

    /// Unavailable: the handle is built from the enclosing object.
    @available(*, unavailable, message: "@Relationship can only be used in ManagedObject subclasses")
    public var projectedValue: RelationshipHandle {
        get { fatalError("unreachable") }
        set { fatalError("unreachable") }
    }

    // Inlinable for the reason given at `Attribute`'s accessor.
    /// The destination(s), read from and written to the enclosing object.
    @inlinable
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Relationship<Value>>
    ) -> Value {
        @inline(__always) get {
            let token = object[keyPath: storageKeyPath].token
            if Value.isToMany {
                // Built from the members as they are reached, without gathering them into an
                // array first; outside a context (a key-path probe, an object its context let
                // go, or a programming error) the general path below answers.
                var value: Value? = nil
                object.withWrappedMembers(Object.self, token, declared: Value.self) { relationship, count, objects in
                    value = Value.make(count: count, objects) ?? mismatched(relationship, in: object)
                }
                if let value { return value }
            }
            let read = object.readWrappedRelationship(Object.self, token, declared: Value.self)
            let value = read.relationship.isToMany ? Value.make(from: read.objects) : Value.make(single: read.single)
            if let value { return value }
            return mismatched(read.relationship, in: object)
        }
        @inline(__always) set {
            let token = object[keyPath: storageKeyPath].token
            // A to-one is set without an array of its one destination: making and freeing
            // it, and retaining the destination into it, were a sixth of setting
            // `message.chat` (atomic updates included).
            if Value.isToMany {
                object.writeWrappedRelationship(Object.self, token, declared: Value.self, newValue.relationshipObjects)
            } else {
                object.writeWrappedToOne(Object.self, token, declared: Value.self, newValue.singleRelationshipObject)
            }
        }
    }

    // Inlinable, so that reading the token is a load of the field (see WrapperToken).
    /// A handle that edits the relationship in place (`chat.$messages.add(m)`).
    @inlinable
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        projected projectedKeyPath: ReferenceWritableKeyPath<Object, RelationshipHandle>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Relationship<Value>>
    ) -> RelationshipHandle {
        @inline(__always) get {
            let token = object[keyPath: storageKeyPath].token
            return RelationshipHandle(object: object, relationship: object.wrappedRelationship(Object.self, token, declared: Value.self))
        }
        set {}
    }

    /// Destinations the declared type cannot hold: an empty value for a key-path probe's
    /// prototype, or a programming error reported with the relationship's name.
    @usableFromInline
    static func mismatched(_ relationship: RelationshipDescription, in object: ManagedObject) -> Value {
        // A key-path probe's destination prototype whose class the declared type does not fit.
        if KeyPathProbe.isPrototype(object), let empty = Value.make(from: []) { return empty }
        ManagedObject.trap("\(object.entity.name).\(relationship.name) holds objects that are not \(Value.self)")
    }
}

/// Edits one relationship of one object in place; obtained as `object.$relationship`.
///
/// Like the object, a handle must be used on its context's queue.
public struct RelationshipHandle {
    /// The source object.
    public let object: ManagedObject
    /// The relationship.
    public let relationship: RelationshipDescription

    @usableFromInline
    init(object: ManagedObject, relationship: RelationshipDescription) {
        self.object = object
        self.relationship = relationship
    }

    /// The members (destinations), in order for ordered relationships.
    public var objects: [ManagedObject] { object.readRelationship(relationship) }
    /// How many members there are.
    public var count: Int { objects.count }
    /// Whether `member` is a member.
    public func contains(_ member: ManagedObject) -> Bool { objects.contains(member) }

    /// Adds `member` (at the end of ordered relationships); the inverse follows.
    public func add(_ member: ManagedObject) { edit { try $0.addToMany(object, relationship, member) } }
    /// Removes `member`; the inverse follows.
    public func remove(_ member: ManagedObject) { edit { try $0.removeFromToMany(object, relationship, member) } }
    /// Inserts `member` at `index` of an ordered relationship (moving it if present). An
    /// unordered relationship, or an index outside `0...count`, is a programming error that
    /// stops the process with a message, as an array's insert does (the key-value
    /// `insert(_:at:in:)` throws instead).
    public func insert(_ member: ManagedObject, at index: Int) {
        requireOrdered("insert(_:at:)")
        edit { try $0.addToMany(object, relationship, member, at: index) }
    }
    /// Moves the member at `from` to `to` in an ordered relationship. An unordered
    /// relationship, or an index that is not a member's, stops the process with a message
    /// (it was ignored, or the move clamped to the ends).
    public func move(from: Int, to: Int) {
        requireOrdered("move(from:to:)")
        let members = objects
        guard members.indices.contains(from), members.indices.contains(to) else {
            ManagedObject.trap("moving \(from) → \(to) in \(object.objectID).\(relationship.name): index out of range (\(members.count) member\(members.count == 1 ? "" : "s"))")
        }
        edit { try $0.moveToMany(object, relationship, members[from], to: to) }
    }

    /// Stops the process when the relationship has no order for `operation` to keep: it
    /// marked an unordered relationship changed for nothing.
    private func requireOrdered(_ operation: String) {
        guard relationship.isOrdered else {
            ManagedObject.trap("\(operation) on \(object.objectID).\(relationship.name): the relationship is not ordered (use add(_:))")
        }
    }

    private func edit(_ body: (ManagedObjectContext) throws -> Void) {
        let inContext: Void? = object.withContext("editing", relationship.name, body)
        if inContext == nil { object.outsideContext(setting: relationship) }
    }
}

extension ManagedObject {
    /// The relationship behind the wrapper `declaringClass` declares with `token`, of the
    /// declared type `declared` (checked when it is first resolved).
    @usableFromInline
    final func wrappedRelationship(_ declaringClass: ManagedObject.Type, _ token: UInt32, declared: any RelationshipValue.Type) -> RelationshipDescription {
        withWrappedRelationship(declaringClass, token, declared: declared) { $0 }
    }

    /// `body` with the relationship behind the wrapper `declaringClass` declares with `token`,
    /// lent as ``withWrappedAttribute(_:_:_:)`` lends an attribute (returned, it was retained
    /// and released around every typed access).
    @inline(__always)
    final func withWrappedRelationship<R>(
        _ declaringClass: ManagedObject.Type, _ token: UInt32, declared: any RelationshipValue.Type, _ body: (RelationshipDescription) -> R
    ) -> R {
        let key = WrapperResolutionCache<RelationshipDescription>.Key(declaringClass: ObjectIdentifier(declaringClass), token: token)
        return Unmanaged.passUnretained(entity.relationshipWrappers)._withUnsafeGuaranteedRef { cache in
            cache.withProperty(for: key, resolve: { resolveWrappedRelationship(declaringClass, token, declared: declared) }) { relationship in
                // Checked at every access, not only when resolved: two declarations of one
                // class naming the same relationship share a cache entry, and a to-one setter
                // of a to-many (the typed accessors choose their path by the declared type)
                // wrote to an unrelated to-one slot.
                if relationship.isToMany != declared.isToMany { declaredArityMismatch(declaringClass, token, declared, relationship) }
                return body(relationship)
            }
        }
    }

    /// The relationship behind a wrapper and its destinations, for ``Relationship``'s inlined
    /// accessor: `single` for a to-one (no array is built), `objects` for a to-many.
    @usableFromInline
    final func readWrappedRelationship(
        _ declaringClass: ManagedObject.Type, _ token: UInt32, declared: any RelationshipValue.Type
    ) -> (relationship: RelationshipDescription, single: ManagedObject?, objects: [ManagedObject]) {
        let relationship = wrappedRelationship(declaringClass, token, declared: declared)
        if relationship.isToMany { return (relationship, nil, readRelationship(relationship)) }
        return (relationship, readToOne(relationship), [])
    }

    /// Calls `body` with the to-many relationship behind the wrapper `declaringClass` declares
    /// with `token`, the number of its members and a function that hands each member object,
    /// in order, to the closure it is given (until that answers `false`): the typed accessor
    /// builds its collection from them directly, where gathering them into an array first was
    /// a third of reading a student's ten subjects. Does nothing outside a context.
    ///
    /// The relationship is lent, and the members are read without copying the relationship's
    /// whole state: between them, five atomic reference-count updates per read of
    /// `student.subjects` (perf: each takes a few nanoseconds here, the time of dozens of
    /// instructions).
    @usableFromInline
    final func withWrappedMembers(
        _ declaringClass: ManagedObject.Type, _ token: UInt32, declared: any RelationshipValue.Type,
        _ body: (RelationshipDescription, Int, ((consuming ManagedObject) -> Bool) -> Void) -> Void
    ) {
        withWrappedRelationship(declaringClass, token, declared: declared) { relationship in
            _ = withContext("reading", relationship.name) { context in
                try context.loadToManyIfNeeded(self, relationship)
                let members = loadedMembers(relationship.slot) ?? []
                body(relationship, members.count) { add in
                    for id in members where !add(context.reachedObject(id)) { return }
                }
            }
        }
    }

    /// Replaces the destinations of the relationship behind a wrapper.
    @usableFromInline
    final func writeWrappedRelationship(_ declaringClass: ManagedObject.Type, _ token: UInt32, declared: any RelationshipValue.Type, _ objects: [ManagedObject]) {
        withWrappedRelationship(declaringClass, token, declared: declared) { writeRelationship($0, objects) }
    }

    /// Sets the destination of the to-one relationship behind a wrapper.
    @usableFromInline
    final func writeWrappedToOne(_ declaringClass: ManagedObject.Type, _ token: UInt32, declared: any RelationshipValue.Type, _ destination: ManagedObject?) {
        withWrappedRelationship(declaringClass, token, declared: declared) { writeToOne($0, destination) }
    }

    /// Finds the relationship behind a wrapper: once per entity and declaration, on a miss of
    /// the entity's cache.
    private func resolveWrappedRelationship(_ declaringClass: ManagedObject.Type, _ token: UInt32, declared: any RelationshipValue.Type) -> RelationshipDescription {
        let name = PropertyWrapperNames.name(of: token, declaredIn: declaringClass, in: self)
        guard let relationship = entity.relationship(named: name) else {
            ManagedObject.trap("\(declaringClass) declares @Relationship var \(name), but entity \(entity.name) has no relationship '\(name)'")
        }
        guard relationship.isToMany == declared.isToMany else { declaredArityMismatch(declaringClass, token, declared, relationship) }
        return relationship
    }

    private func declaredArityMismatch(_ declaringClass: ManagedObject.Type, _ token: UInt32, _ declared: any RelationshipValue.Type, _ relationship: RelationshipDescription) -> Never {
        let name = PropertyWrapperNames.name(of: token, declaredIn: declaringClass, in: self)
        ManagedObject.trap("\(declaringClass).\(name) is declared as \(declared), but \(relationship) is \(relationship.isToMany ? "to-many" : "to-one")")
    }

    /// The destination of a to-one relationship for typed accessors.
    func readToOne(_ relationship: RelationshipDescription) -> ManagedObject? {
        let destination: ManagedObject?? = withContext("reading", relationship.name) { context in
            try context.fulfillFaultForAccess(self)
            return toOneValues[relationship.slot].map(context.reachedObject)
        }
        if let destination { return destination }
        if let objects = KeyPathProbe.recordRelationship(relationship, of: self) { return objects.first }
        // Out of its context there is none to hand the destination out from: an object that
        // left it reads no destination (as Core Data's deleted and saved objects do), where it
        // stopped the process though its attributes still read.
        if leftItsContext { return nil }
        // Not inserted yet: relationships are kept by a context, so it has none.
        if isUninserted { return nil }
        ManagedObject.trap("reading \(objectID).\(relationship.name): the object is not in a context (its context is gone)")
    }

    /// The destinations of a relationship for typed accessors.
    func readRelationship(_ relationship: RelationshipDescription) -> [ManagedObject] {
        let destinations = withContext("reading", relationship.name) { context in
            if relationship.isToMany { return try relatedObjects(relationship, context: context) }
            try context.fulfillFaultForAccess(self)
            return toOneValues[relationship.slot].map { [context.reachedObject($0)] } ?? []
        }
        if let destinations { return destinations }
        // A `#Predicate` key-path probe reads here.
        if let objects = KeyPathProbe.recordRelationship(relationship, of: self) { return objects }
        // An object that left its context reads no members (see readToOne).
        if leftItsContext || isUninserted { return [] }
        ManagedObject.trap("reading \(objectID).\(relationship.name): the object is not in a context (its context is gone)")
    }

    /// Replaces a relationship's destinations for typed accessors.
    func writeRelationship(_ relationship: RelationshipDescription, _ objects: [ManagedObject]) {
        guard relationship.isToMany else { return writeToOne(relationship, objects.first) }
        let inContext: Void? = withContext("setting", relationship.name) { try $0.replaceToMany(self, relationship, with: objects) }
        // (Setting none on an object not inserted yet, which has none, is done.)
        if inContext == nil && !(isUninserted && objects.isEmpty) { outsideContext(setting: relationship) }
    }

    /// Sets a to-one relationship for typed accessors.
    func writeToOne(_ relationship: RelationshipDescription, _ destination: ManagedObject?) {
        let inContext: Void? = withContext("setting", relationship.name) { try $0.setToOne(self, relationship, destination) }
        if inContext == nil && !(isUninserted && destination == nil) { outsideContext(setting: relationship) }
    }

    /// Stops for a relationship set outside a context: a programming error behind a setter
    /// that cannot throw (``setValue(_:forKey:)`` throws the same reason).
    func outsideContext(setting relationship: RelationshipDescription) -> Never {
        if isUninserted { ManagedObject.trap("\(uninsertedRelationshipError(relationship))") }
        ManagedObject.trap("setting \(objectID).\(relationship.name): the object is not in a context (deleted and saved, reset, or its context gone)")
    }
}
