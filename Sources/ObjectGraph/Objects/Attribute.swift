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
    /// What identifies the declaration in its class (see ``WrapperToken``).
    @usableFromInline let token: UInt32

    /// An attribute named like the property. Leave `line` and `column` to their defaults: the
    /// position of the declaration identifies it on every access (see ``WrapperToken``).
    @inlinable
    public init(line: UInt = #line, column: UInt = #column) { self.token = WrapperToken.declaration(line: line, column: column) }
    /// An attribute with an explicit model name.
    public init(_ name: String) { self.token = PropertyWrapperNames.token(for: name) }

    /// Unavailable: the value lives in the enclosing object.
    @available(*, unavailable, message: "@Attribute can only be used in ManagedObject subclasses")
    public var wrappedValue: Value {
        get { fatalError("unreachable") }
        set { fatalError("unreachable") }
    }

    // Inlinable so that client code specializes it for its concrete `Value`: unspecialized,
    // every read looked `Optional<Value>`'s generic metadata up at run time. The body only
    // calls the non-generic entry points below, and uses the storage key path for nothing but
    // the token, which inlined here is a load of the field (see WrapperToken).
    /// The value, read from and written to the enclosing object.
    @inlinable
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Attribute<Value>>
    ) -> Value {
        @inline(__always) get {
            let token = object[keyPath: storageKeyPath].token
            let value = object.readWrappedAttributeValue(Object.self, token)
            if let converted = Value.fromAttributeValue(value) { return converted }
            return unrepresentable(value, of: object.wrappedAttribute(Object.self, token), in: object)
        }
        @inline(__always) set {
            object.writeWrappedAttribute(Object.self, object[keyPath: storageKeyPath].token, newValue.attributeValue)
        }
    }

    /// A stored value the declared type cannot hold: a key-path probe's placeholder, or a
    /// programming error reported with the attribute's name.
    @usableFromInline
    static func unrepresentable(_ stored: AttributeValue, of attribute: AttributeDescription, in object: ManagedObject) -> Value {
        // A key-path probe's prototype, of a type its placeholder does not fit.
        if let placeholder = KeyPathProbe.fallback(Value.self, for: object) { return placeholder }
        // An inaccessible fault the context deleted holds nil everywhere, as does a fault that
        // left its context unread; a non-optional type reads its empty value (see
        // ManagedObjectContext.shouldDeleteInaccessibleFaults).
        if object.isVanishedStorage || (object.leftItsContext && object.isFaultStorage),
           let empty = KeyPathProbe.emptyValue(Value.self, of: attribute) { return empty }
        ManagedObject.trap("\(object.entity.name).\(attribute.name) holds a \(stored.kindName) value (\(attribute.type.rawValue) attribute), which @Attribute var \(attribute.name): \(Value.self) cannot represent")
    }
}

extension ManagedObject {
    /// The attribute behind the wrapper `declaringClass` declares with `token` (for messages
    /// about its value).
    @usableFromInline
    final func wrappedAttribute(_ declaringClass: ManagedObject.Type, _ token: UInt32) -> AttributeDescription {
        withWrappedAttribute(declaringClass, token) { $0 }
    }

    /// The value behind a wrapper, for ``Attribute``'s inlined getter: a loaded object read
    /// inside its context's block (the common case) is answered by slot, without taking a
    /// reference to the attribute; anything else takes ``readAttribute(_:)``.
    @usableFromInline
    final func readWrappedAttributeValue(_ declaringClass: ManagedObject.Type, _ token: UInt32) -> AttributeValue {
        if !isFaultStorage && isHeldByCurrentThread {
            return withWrappedAttribute(declaringClass, token) { attributeValues[$0.slot] }
        }
        return withWrappedAttribute(declaringClass, token) { readAttribute($0) }
    }

    /// Writes the attribute behind a wrapper, for ``Attribute``'s inlined setter.
    @usableFromInline
    final func writeWrappedAttribute(_ declaringClass: ManagedObject.Type, _ token: UInt32, _ value: AttributeValue) {
        withWrappedAttribute(declaringClass, token) { writeAttribute($0, value) }
    }

    /// `body` with the attribute behind the wrapper `declaringClass` declares with `token`
    /// (resolved by name on the entity's first access to it), lent: the entity's cache and
    /// the attribute are not loaded into references of their own (the entity holds both for
    /// the object's life), which retained and released the cache and the attribute at every
    /// typed read and write (perf: two of each per object of a fetch reading two attributes).
    @inline(__always)
    final func withWrappedAttribute<R>(_ declaringClass: ManagedObject.Type, _ token: UInt32, _ body: (AttributeDescription) -> R) -> R {
        let key = WrapperResolutionCache<AttributeDescription>.Key(declaringClass: ObjectIdentifier(declaringClass), token: token)
        return Unmanaged.passUnretained(entity.attributeWrappers)._withUnsafeGuaranteedRef { cache in
            cache.withProperty(for: key, resolve: { resolveWrappedAttribute(declaringClass, token) }, body)
        }
    }

    /// Finds the attribute behind a wrapper: once per entity and declaration, on a miss of
    /// the entity's cache (an object's entity never changes).
    private func resolveWrappedAttribute(_ declaringClass: ManagedObject.Type, _ token: UInt32) -> AttributeDescription {
        let name = PropertyWrapperNames.name(of: token, declaredIn: declaringClass, in: self)
        guard let attribute = entity.attribute(named: name) else {
            ManagedObject.trap("\(declaringClass) declares @Attribute var \(name), but entity \(entity.name) has no attribute '\(name)'")
        }
        return attribute
    }

    /// Reads an attribute for a typed accessor; programming errors stop with a message.
    func readAttribute(_ attribute: AttributeDescription) -> AttributeValue {
        // A loaded object read inside its context's block: the common case, checked without
        // touching the context. A main-queue context used directly on the main queue takes the
        // full path below.
        if !isFaultStorage && isHeldByCurrentThread { return attributeValues[attribute.slot] }
        let inContext: Void? = withContext("reading", attribute.name) { try $0.fulfillFaultForAccess(self) }
        if inContext == nil && isFaultStorage {
            // A `#Predicate` key-path probe reads here.
            if let placeholder = KeyPathProbe.recordAttribute(attribute, of: self) { return placeholder }
            // A fault that left its context unread (deleted by a save here, or by another
            // context's save merged here, or its context reset) is what a list holding objects
            // meets after a background delete: it reads empty, as a deleted object read in its
            // context does, instead of stopping the process.
            if leftItsContext { return .null }
            // Not inserted yet: its own values (see ManagedObject+Uninserted.swift).
            if isUninserted { return uninsertedAttribute(attribute) }
            ManagedObject.trap("reading \(objectID).\(attribute.name): the object is not in a context (its context is gone) and has no values")
        }
        return attributeValues[attribute.slot]
    }

    /// Writes an attribute for a typed accessor. A value outside its integer width is kept
    /// and reported by validation at save (a thrown error), rather than stopping here.
    func writeAttribute(_ attribute: AttributeDescription, _ value: AttributeValue) {
        let inContext: Void? = withContext("setting", attribute.name) { try $0.setAttribute(self, attribute, value, lenient: true) }
        guard inContext == nil else { return }
        guard isUninserted else {
            ManagedObject.trap("setting \(objectID).\(attribute.name): the object is not in a context (deleted and saved, reset, or its context gone)")
        }
        do { try setUninsertedAttribute(attribute, value, lenient: true) } catch {
            ManagedObject.trap("setting \(objectID).\(attribute.name): \(error)")
        }
    }
}
