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
    /// The objects the value holds, in order.
    var relationshipObjects: [ManagedObject] { get }
}

extension RelationshipValue {
    /// Through ``make(from:)``; to-one types answer directly.
    @inlinable
    public static func make(single object: ManagedObject?) -> Self? { make(from: object.map { [$0] } ?? []) }
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
}

extension Set: RelationshipValue where Element: ManagedObject {
    /// To-many.
    @inlinable
    public static var isToMany: Bool { true }
    /// The objects, cast to `Element`.
    @inlinable
    public static func make(from objects: [ManagedObject]) -> Set<Element>? {
        var result = Set<Element>(minimumCapacity: objects.count)
        for object in objects {
            guard let typed = object as? Element else { return nil }
            result.insert(typed)
        }
        return result
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
        var result = OrderedSet<Element>(minimumCapacity: objects.count)
        for object in objects {
            guard let typed = object as? Element else { return nil }
            result.append(typed)
        }
        return result
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
    var nameToken: UInt32

    /// A relationship named like the property.
    public init() { self.nameToken = 0 }
    /// A relationship with an explicit model name.
    public init(_ name: String) { self.nameToken = PropertyWrapperNames.token(for: name) }

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
        get {
            let read = object.readWrappedRelationship(storageKeyPath) { resolve(object, storageKeyPath) }
            let value = read.relationship.isToMany ? Value.make(from: read.objects) : Value.make(single: read.single)
            if let value { return value }
            return mismatched(read.relationship, in: object)
        }
        set {
            object.writeWrappedRelationship(storageKeyPath, newValue.relationshipObjects) { resolve(object, storageKeyPath) }
        }
    }

    /// A handle that edits the relationship in place (`chat.$messages.add(m)`).
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        projected projectedKeyPath: ReferenceWritableKeyPath<Object, RelationshipHandle>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Relationship<Value>>
    ) -> RelationshipHandle {
        get { RelationshipHandle(object: object, relationship: object.entity.relationshipWrappers.property(for: storageKeyPath) { resolve(object, storageKeyPath) }) }
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

    /// Finds the relationship behind a wrapper: called once per entity and key path, on a
    /// miss of the entity's resolution cache.
    @usableFromInline
    static func resolve<Object: ManagedObject>(_ object: Object, _ storage: ReferenceWritableKeyPath<Object, Relationship<Value>>) -> RelationshipDescription {
        let name = PropertyWrapperNames.name(of: storage, in: object)
        guard let relationship = object.entity.relationship(named: name) else {
            ManagedObject.trap("\(Object.self) declares @Relationship var \(name), but entity \(object.entity.name) has no relationship '\(name)'")
        }
        guard relationship.isToMany == Value.isToMany else {
            ManagedObject.trap("\(Object.self).\(name) is declared as \(Value.self), but \(relationship) is \(relationship.isToMany ? "to-many" : "to-one")")
        }
        return relationship
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
    /// Inserts `member` at `index` of an ordered relationship (moving it if present).
    public func insert(_ member: ManagedObject, at index: Int) { edit { try $0.addToMany(object, relationship, member, at: index) } }
    /// Moves the member at `from` to `to` in an ordered relationship.
    public func move(from: Int, to: Int) {
        let members = objects
        guard members.indices.contains(from) else { return }
        edit { try $0.moveToMany(object, relationship, members[from], to: to) }
    }

    private func edit(_ body: (ManagedObjectContext) throws -> Void) {
        let inContext: Void? = object.withContext("editing", relationship.name, body)
        if inContext == nil {
            ManagedObject.trap("editing \(object.objectID).\(relationship.name): the object is not in a context")
        }
    }
}

extension ManagedObject {
    /// The relationship behind a wrapper's storage key path and its destinations, for
    /// ``Relationship``'s inlined accessor: `single` for a to-one (no array is built), `objects`
    /// for a to-many. `resolve` runs only when the entity has not resolved `storage` yet.
    @usableFromInline
    final func readWrappedRelationship(
        _ storage: AnyKeyPath, resolve: () -> RelationshipDescription
    ) -> (relationship: RelationshipDescription, single: ManagedObject?, objects: [ManagedObject]) {
        let relationship = entity.relationshipWrappers.property(for: storage, resolve: resolve)
        if relationship.isToMany { return (relationship, nil, readRelationship(relationship)) }
        return (relationship, readToOne(relationship), [])
    }

    /// Replaces the destinations of the relationship behind a wrapper's storage key path.
    @usableFromInline
    final func writeWrappedRelationship(_ storage: AnyKeyPath, _ objects: [ManagedObject], resolve: () -> RelationshipDescription) {
        // Lent, as ``withWrappedAttribute(_:resolve:_:)`` lends an attribute.
        Unmanaged.passUnretained(entity.relationshipWrappers)._withUnsafeGuaranteedRef { cache in
            cache.withProperty(for: storage, resolve: resolve) { writeRelationship($0, objects) }
        }
    }

    /// The destination of a to-one relationship for typed accessors.
    func readToOne(_ relationship: RelationshipDescription) -> ManagedObject? {
        let destination: ManagedObject?? = withContext("reading", relationship.name) { context in
            try context.fulfillFaultIfNeeded(self)
            return toOneValues[relationship.slot].map(context.reachedObject)
        }
        if let destination { return destination }
        if let objects = KeyPathProbe.recordRelationship(relationship, of: self) { return objects.first }
        ManagedObject.trap("reading \(objectID).\(relationship.name): the object is not in a context")
    }

    /// The destinations of a relationship for typed accessors.
    func readRelationship(_ relationship: RelationshipDescription) -> [ManagedObject] {
        let destinations = withContext("reading", relationship.name) { context in
            if relationship.isToMany { return try relatedObjects(relationship, context: context) }
            try context.fulfillFaultIfNeeded(self)
            return toOneValues[relationship.slot].map { [context.reachedObject($0)] } ?? []
        }
        if let destinations { return destinations }
        // Never reached in ordinary use; a `#Predicate` key-path probe reads here.
        if let objects = KeyPathProbe.recordRelationship(relationship, of: self) { return objects }
        ManagedObject.trap("reading \(objectID).\(relationship.name): the object is not in a context")
    }

    /// Replaces a relationship's destinations for typed accessors.
    func writeRelationship(_ relationship: RelationshipDescription, _ objects: [ManagedObject]) {
        let inContext: Void? = withContext("setting", relationship.name) { context in
            if relationship.isToMany {
                try context.replaceToMany(self, relationship, with: objects)
            } else {
                try context.setToOne(self, relationship, objects.first)
            }
        }
        if inContext == nil {
            ManagedObject.trap("setting \(objectID).\(relationship.name): the object is not in a context")
        }
    }
}
