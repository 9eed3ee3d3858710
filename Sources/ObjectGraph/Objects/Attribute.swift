/// Declares a typed attribute on a ``ManagedObject`` subclass, without repeating its name:
///
/// ```swift
/// final class Chat: ManagedObject {
///     @Attribute var title: String
///     @Attribute var createdAt: Date?
///     @Attribute("body") var text: String   // a different model name
/// }
/// ```
/// Reading fires the object's fault; writing records the change (and is checked at save).
/// Both must happen on the context's queue; elsewhere the process stops with a message naming
/// the object and thread. A declared type that cannot hold the model's type (an `Int` for a
/// string attribute) is a programming error reported the same way at first access.
@propertyWrapper
public struct Attribute<Value: AttributeValueConvertible>: ManagedPropertyWrapper {
    var nameToken: UInt32

    /// An attribute named like the property.
    public init() { self.nameToken = 0 }
    /// An attribute with an explicit model name.
    public init(_ name: String) { self.nameToken = PropertyWrapperNames.token(for: name) }

    /// Unavailable: the value lives in the enclosing object.
    @available(*, unavailable, message: "@Attribute can only be used in ManagedObject subclasses")
    public var wrappedValue: Value {
        get { fatalError("unreachable") }
        set { fatalError("unreachable") }
    }

    // Inlinable so that client code specializes it for its concrete `Value`: unspecialized,
    // every read looked `Optional<Value>`'s generic metadata up at run time. The body only
    // calls the non-generic entry points below.
    /// The value, read from and written to the enclosing object.
    @inlinable
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Attribute<Value>>
    ) -> Value {
        get {
            let value = object.readWrappedAttributeValue(storageKeyPath) { resolve(object, storageKeyPath) }
            if let converted = Value.fromAttributeValue(value) { return converted }
            return unrepresentable(value, of: object.wrappedAttribute(storageKeyPath) { resolve(object, storageKeyPath) }, in: object)
        }
        set {
            object.writeWrappedAttribute(storageKeyPath, newValue.attributeValue) { resolve(object, storageKeyPath) }
        }
    }

    /// Finds the attribute behind a wrapper: called once per entity and key path, on a miss
    /// of the entity's resolution cache (an object's entity never changes).
    @usableFromInline
    static func resolve<Object: ManagedObject>(_ object: Object, _ storage: ReferenceWritableKeyPath<Object, Attribute<Value>>) -> AttributeDescription {
        let name = PropertyWrapperNames.name(of: storage, in: object)
        guard let attribute = object.entity.attribute(named: name) else {
            ManagedObject.trap("\(Object.self) declares @Attribute var \(name), but entity \(object.entity.name) has no attribute '\(name)'")
        }
        return attribute
    }

    /// A stored value the declared type cannot hold: a key-path probe's placeholder, or a
    /// programming error reported with the attribute's name.
    @usableFromInline
    static func unrepresentable(_ stored: AttributeValue, of attribute: AttributeDescription, in object: ManagedObject) -> Value {
        // A key-path probe's prototype, of a type its placeholder does not fit.
        if let placeholder = KeyPathProbe.fallback(Value.self, for: object) { return placeholder }
        ManagedObject.trap("\(object.entity.name).\(attribute.name) holds a \(stored.kindName) value (\(attribute.type.rawValue) attribute), which @Attribute var \(attribute.name): \(Value.self) cannot represent")
    }
}

extension ManagedObject {
    /// The attribute behind a wrapper's storage key path (for messages about its value);
    /// `resolve` runs only when the entity has not resolved `storage` yet.
    @usableFromInline
    final func wrappedAttribute(_ storage: AnyKeyPath, resolve: () -> AttributeDescription) -> AttributeDescription {
        entity.attributeWrappers.property(for: storage, resolve: resolve)
    }

    /// The value behind a wrapper's storage key path, for ``Attribute``'s inlined getter: a
    /// loaded object read inside its context's block (the common case) is answered by slot,
    /// without taking a reference to the attribute; anything else takes ``readAttribute(_:)``.
    @usableFromInline
    final func readWrappedAttributeValue(_ storage: AnyKeyPath, resolve: () -> AttributeDescription) -> AttributeValue {
        if !isFaultStorage && isHeldByCurrentThread {
            return withWrappedAttribute(storage, resolve: resolve) { attributeValues[$0.slot] }
        }
        return withWrappedAttribute(storage, resolve: resolve) { readAttribute($0) }
    }

    /// Writes the attribute behind a wrapper's storage key path, for ``Attribute``'s inlined accessor.
    @usableFromInline
    final func writeWrappedAttribute(_ storage: AnyKeyPath, _ value: AttributeValue, resolve: () -> AttributeDescription) {
        withWrappedAttribute(storage, resolve: resolve) { writeAttribute($0, value) }
    }

    /// `body` with the attribute behind a wrapper's storage key path, lent: the entity's cache
    /// and the attribute are not loaded into references of their own (the entity holds both
    /// for the object's life), which retained and released the cache and the attribute at
    /// every typed read and write (perf: two of each per object of a fetch reading two
    /// attributes).
    @inline(__always)
    final func withWrappedAttribute<R>(_ storage: AnyKeyPath, resolve: () -> AttributeDescription, _ body: (AttributeDescription) -> R) -> R {
        Unmanaged.passUnretained(entity.attributeWrappers)._withUnsafeGuaranteedRef { cache in
            cache.withProperty(for: storage, resolve: resolve, body)
        }
    }

    /// Reads an attribute for a typed accessor; programming errors stop with a message.
    func readAttribute(_ attribute: AttributeDescription) -> AttributeValue {
        // A loaded object read inside its context's block: the common case, checked without
        // touching the context. A main-queue context used directly on the main queue takes the
        // full path below.
        if !isFaultStorage && isHeldByCurrentThread { return attributeValues[attribute.slot] }
        let inContext: Void? = withContext("reading", attribute.name) { try $0.fulfillFaultIfNeeded(self) }
        if inContext == nil && isFaultStorage {
            // Never reached in ordinary use; a `#Predicate` key-path probe reads here.
            if let placeholder = KeyPathProbe.recordAttribute(attribute, of: self) { return placeholder }
            ManagedObject.trap("reading \(objectID).\(attribute.name): the object is not in a context (deleted and saved, or its context was reset) and has no values")
        }
        return attributeValues[attribute.slot]
    }

    /// Writes an attribute for a typed accessor. A value outside its integer width is kept
    /// and reported by validation at save (a thrown error), rather than stopping here.
    func writeAttribute(_ attribute: AttributeDescription, _ value: AttributeValue) {
        let inContext: Void? = withContext("setting", attribute.name) { try $0.setAttribute(self, attribute, value, lenient: true) }
        if inContext == nil {
            ManagedObject.trap("setting \(objectID).\(attribute.name): the object is not in a context")
        }
    }
}
