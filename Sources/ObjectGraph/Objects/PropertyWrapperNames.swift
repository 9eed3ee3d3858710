import Foundation
import Synchronization

/// What ``Attribute`` and ``Relationship`` share: an explicit name's interned token (0 for
/// none), which also serves as the probe that finds the declared name when there is none.
///
/// It is the wrapper's only stored field, and every object carries one per wrapped property:
/// as a `String?` it was 16 bytes each, and a message of three wrapped properties took 208
/// bytes of memory instead of 176 (a separate probe field would add a word more).
protocol ManagedPropertyWrapper {
    var nameToken: UInt32 { get set }
}

/// Finds the Swift property name behind a wrapper's storage key path, once per key path.
///
/// Key paths do not expose names, so the resolver writes a unique token into the wrapper
/// through the key path and looks for it among the object's reflected children (`_title` →
/// `title`). The answer is cached per key path, so this runs once per property per process.
enum PropertyWrapperNames {
    /// Key paths are immutable objects, safe to share; they are just not marked `Sendable`.
    private struct Key: Hashable, @unchecked Sendable {
        let path: AnyKeyPath
    }

    private static let cache = Guarded<[Key: String]>([:])
    /// Probe tokens count up from here; interned names never get this far.
    private static let probeBase: UInt32 = 0x8000_0000
    private static let tokens = Atomic<UInt32>(probeBase)

    /// The token of an explicit name. A wrapper is initialized with every object of its class,
    /// faults included, so the names already seen are found without a lock: the interned
    /// table's lock and hashing were a cost per named property of every object.
    static func token(for name: String) -> UInt32 {
        if let found = explicitNames.withValue(for: name, { $0 }) { return found }
        return explicitNames.add(name, InternedNames.shared.token(for: name))
    }

    /// Explicit names seen so far, and their tokens.
    private static let explicitNames = PublishedTable<String, UInt32>()

    static func name<Object: ManagedObject, Wrapper: ManagedPropertyWrapper>(
        of storage: ReferenceWritableKeyPath<Object, Wrapper>, in object: Object
    ) -> String {
        let explicit = object[keyPath: storage].nameToken
        if explicit != 0 { return InternedNames.shared.name(of: explicit) }
        if let known = cache.withLock({ $0[Key(path: storage)] }) { return known }
        // The wrapper has no explicit name (checked above): a unique one is written in for the
        // search, and taken out again.
        let token = tokens.add(1, ordering: .relaxed).newValue
        object[keyPath: storage].nameToken = token
        defer { object[keyPath: storage].nameToken = 0 }
        var mirror: Mirror? = Mirror(reflecting: object)
        while let current = mirror {
            for child in current.children {
                guard let wrapper = child.value as? any ManagedPropertyWrapper, wrapper.nameToken == token,
                      let label = child.label else { continue }
                let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
                cache.withLock { $0[Key(path: storage)] = name }
                return name
            }
            mirror = current.superclassMirror
        }
        ManagedObject.trap("could not find the property name of a wrapper in \(Object.self)")
    }
}

/// The property each wrapper storage key path of one entity resolves to, so an object's
/// first access to a property costs one lookup by key-path identity rather than a name
/// search (fetching 100k objects otherwise resolves every property 100k times).
///
/// Key paths written in source are instantiated once and cached by the runtime, so their
/// identity is stable; the table keeps its key paths alive so an identity is never reused
/// while it is cached. **Threading contract:** safe from any thread (see ``PublishedTable``);
/// an entity has a handful of wrapped properties, so the table stays tiny.
final class WrapperResolutionCache<Property: AnyObject & Sendable>: Sendable {
    private let table = PublishedTable<ObjectIdentifier, Property>()

    /// The cached property for `path`, or `resolve()`'s answer, cached.
    func property(for path: AnyKeyPath, resolve: () -> Property) -> Property {
        if let found = table.withValue(for: ObjectIdentifier(path), { $0 }) { return found }
        return table.add(ObjectIdentifier(path), resolve(), keeping: path)
    }

    /// `answer` applied to the cached property for `path` (to `resolve()`'s answer, cached, on
    /// a miss). The property is only borrowed: a typed read that needs just its slot takes no
    /// reference to it.
    @inline(__always)
    func withProperty<Answer>(for path: AnyKeyPath, resolve: () -> Property, _ answer: (Property) -> Answer) -> Answer {
        if let found = table.withValue(for: ObjectIdentifier(path), answer) { return found }
        return answer(table.add(ObjectIdentifier(path), resolve(), keeping: path))
    }
}
