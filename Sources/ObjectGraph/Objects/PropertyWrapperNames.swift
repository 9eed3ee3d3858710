import Foundation

/// What ``Attribute`` and ``Relationship`` share: their token (see ``WrapperToken``).
///
/// It is the wrapper's only stored field, and every object carries one per wrapped property:
/// as a `String?` it was 16 bytes each, and a message of three wrapped properties took 208
/// bytes of memory instead of 176 (a separate probe field would add a word more).
protocol ManagedPropertyWrapper {
    var token: UInt32 { get }
}

/// The model names behind wrappers' tokens.
enum PropertyWrapperNames {
    /// The token of an explicit name. A wrapper is initialized with every object of its class,
    /// faults included, so the names already seen are found without a lock: the interned
    /// table's lock and hashing were a cost per named property of every object.
    static func token(for name: String) -> UInt32 {
        if let found = explicitNames.withValue(for: name, { $0 }) { return found }
        let token = InternedNames.shared.token(for: name)
        // Names are interned once each, and a process holds far fewer than 2^31 of them.
        guard WrapperToken.isName(token) else {
            ManagedObject.trap("the interned name table overflowed into the declaration tokens (\(token) names)")
        }
        return explicitNames.add(name, token)
    }

    /// Explicit names seen so far, and their tokens.
    private static let explicitNames = PublishedTable<String, UInt32>()

    /// The model name of the wrapper of `object` with `token`, declared by `declaringClass`:
    /// its explicit name, or its declared one.
    static func name(of token: UInt32, declaredIn declaringClass: ManagedObject.Type, in object: ManagedObject) -> String {
        if WrapperToken.isName(token) { return InternedNames.shared.name(of: token) }
        return WrapperToken.declaredName(of: token, declaredIn: declaringClass, in: object)
    }
}

/// The property each wrapper of one entity resolves to, by declaring class and token (see
/// ``WrapperToken``), so that a typed access costs one lookup, not a name search (fetching
/// 100k objects otherwise resolves every property 100k times).
///
/// **Threading contract:** safe from any thread (see ``PublishedValue``); an entity has a
/// handful of wrapped properties (one entry each per class that declares them), so the list
/// stays tiny and every list published stays allocated.
final class WrapperResolutionCache<Property: AnyObject & Sendable>: Sendable {
    /// A declaration: the class that declares the wrapper, and its token.
    struct Key: Equatable, Sendable {
        let declaringClass: ObjectIdentifier
        let token: UInt32
    }

    /// A declaration and the property it resolved to, as a pointer: a reference loaded from
    /// the list was retained around any call it was lent to that the optimizer could not see
    /// into (a fault's first typed read), where a pointer is a plain value. ``kept`` holds it.
    struct Entry: @unchecked Sendable {
        let key: Key
        let property: Unmanaged<Property>
    }

    /// The entries, keys and properties side by side in one list read through one published
    /// value: a ``PublishedTable`` (its own object, then separate key and value arrays) put
    /// four more dependent loads in front of every typed read (perf: a stall at each).
    private let entries = PublishedValue<[Entry]>([])
    /// Keeps every property in ``entries`` alive (the entity holds them too).
    private let kept = Guarded<[Property]>([])

    /// The cached property for `key`, or `resolve()`'s answer, cached.
    func property(for key: Key, resolve: () -> Property) -> Property {
        withProperty(for: key, resolve: resolve) { $0 }
    }

    /// `answer` applied to the cached property for `key` (to `resolve()`'s answer, cached, on
    /// a miss). The property is only borrowed: a typed read that needs just its slot takes no
    /// reference to it.
    @inline(__always)
    func withProperty<Answer>(for key: Key, resolve: () -> Property, _ answer: (Property) -> Answer) -> Answer {
        let found = entries.read { list -> Answer? in
            list.withUnsafeBufferPointer { list in
                for entry in list where entry.key == key { return entry.property._withUnsafeGuaranteedRef(answer) }
                return nil
            }
        }
        if let found { return found }
        return resolveAndAnswer(key, resolve, answer)
    }

    /// The miss of ``withProperty(for:resolve:_:)``, out of line (the hit is the hot path).
    @inline(never)
    private func resolveAndAnswer<Answer>(_ key: Key, _ resolve: () -> Property, _ answer: (Property) -> Answer) -> Answer {
        let resolved = resolve()
        // Kept before it is published, so no reader finds a pointer to a freed property.
        kept.withLock { $0.append(resolved) }
        let published = entries.update { list -> Unmanaged<Property> in
            // (Found only when another thread entered `key` since the caller looked.)
            if let entry = list.first(where: { $0.key == key }) { return entry.property }
            let property = Unmanaged.passUnretained(resolved)
            list.append(Entry(key: key, property: property))
            return property
        }
        return published._withUnsafeGuaranteedRef(answer)
    }
}
