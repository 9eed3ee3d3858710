import Foundation
import Synchronization

/// Finds which model properties a Swift key path such as `\Student.name` reads.
///
/// Typed properties are computed (``Attribute`` and ``Relationship`` use the
/// `_enclosingInstance` subscript), and Linux key paths carry no names (`_kvcKeyPathString` is
/// `nil` without Objective-C), so the only robust way to learn the name is to *read* the key
/// path and watch. The probe creates unregistered **prototype** objects (no context, still
/// faults) and applies the key path to one. A typed accessor on an object that has no context
/// and no values would normally stop the process; exactly there — on a path that ordinary use
/// never takes successfully — the accessor asks whether the object is a prototype of a running
/// probe, records the property it resolved, and returns a placeholder instead of stopping.
/// Ordinary property access pays nothing: the check sits only on that failure path.
///
/// Placeholders: a distinctive value of the attribute's type (`"ObjectGraph.probe.1"`, `7`,
/// the reference date plus 7 s, …), and a different one on a second read, so that a computed
/// property which merely *reads* a stored one (`name.uppercased()`) is told apart from the
/// stored property itself: only the latter returns each placeholder unchanged. When the
/// declared Swift type refuses a placeholder, the attribute's default value or a value decoded
/// from an empty description of the type is used instead (and remembered). A to-one
/// relationship gets a prototype of the destination entity (so `\Message.chat?.title` can be
/// followed further); a to-many one gets no members.
///
/// A probe is used by one thread, the one translating a predicate; it is `@unchecked
/// Sendable` only so that the registry can hand it back to that thread's accessors.
final class KeyPathProbe: @unchecked Sendable {
    /// One typed property read during a probe.
    struct Access {
        /// The object read (a prototype).
        let object: ObjectIdentifier
        /// The property read.
        let property: EntityDescription.Property
        /// What the accessor was given: the attribute placeholder in stored form (updated when
        /// the accessor had to build a value of its own), or `.null` for relationships.
        var placeholder: AttributeValue
        /// The destination prototype handed out for a to-one relationship.
        let destination: ManagedObject?
    }

    /// Running probes by prototype identity. Entries live only while a probe runs.
    private static let registry = Guarded<[ObjectIdentifier: KeyPathProbe]>([:])

    let model: ManagedObjectModel
    private var prototypes: [String: ManagedObject] = [:]
    private(set) var accesses: [Access] = []

    init(model: ManagedObjectModel) { self.model = model }

    /// Unregisters every prototype; call when the translation is over.
    func finish() {
        let ids = prototypes.values.map { ObjectIdentifier($0) }
        Self.registry.withLock { registry in
            for id in ids { registry[id] = nil }
        }
        prototypes = [:]
    }

    /// The prototype of `entity`: an instance of its class that belongs to no context.
    func prototype(of entity: EntityDescription) -> ManagedObject {
        if let existing = prototypes[entity.name] { return existing }
        let object = entity.managedClass.init(entity: entity, insertInto: nil)
        // A prototype must stay a fault for the accessors to ask the probe (an initializer
        // override that set a value gave it values, see ManagedObject+Uninserted.swift).
        if !object.isFaultStorage { ManagedObject.refault(object) }
        prototypes[entity.name] = object
        Self.registry.withLock { $0[ObjectIdentifier(object)] = self }
        return object
    }

    /// Which set of placeholders accessors get (0 or 1).
    private(set) var round = 0

    /// Reads `keyPath` from `prototype` once per placeholder set, returning each value with
    /// the typed properties read.
    func read<Root, Value>(_ keyPath: KeyPath<Root, Value>, from prototype: Root) -> [(value: Value, accesses: [Access])] {
        defer {
            accesses = []
            round = 0
        }
        return (0...1).map { pass in
            round = pass
            accesses = []
            let value = prototype[keyPath: keyPath]
            return (value, accesses)
        }
    }

    // MARK: Accessor hooks (reached only for objects with no context and no values)

    private static func probe(for object: ManagedObject) -> KeyPathProbe? {
        registry.withLock { $0[ObjectIdentifier(object)] }
    }

    /// For a prototype: records the attribute and returns its placeholder; otherwise `nil`.
    static func recordAttribute(_ attribute: AttributeDescription, of object: ManagedObject) -> AttributeValue? {
        guard let probe = probe(for: object) else { return nil }
        let placeholder = placeholder(of: attribute.type, round: probe.round)
        probe.accesses.append(Access(object: ObjectIdentifier(object), property: .attribute(attribute), placeholder: placeholder, destination: nil))
        return placeholder
    }

    /// For a prototype whose declared type refuses the placeholder (a custom convertible type,
    /// a non-optional transformable value): the attribute's default value, the other
    /// placeholder, or a value decoded from an empty description of `Value`; `nil` when none
    /// fits or `object` is no prototype.
    static func fallback<Value: AttributeValueConvertible>(_ type: Value.Type, for object: ManagedObject) -> Value? {
        guard let probe = probe(for: object),
              let index = probe.accesses.lastIndex(where: { $0.object == ObjectIdentifier(object) }),
              case .attribute(let attribute) = probe.accesses[index].property
        else { return nil }
        let candidates = [attribute.defaultValue, placeholder(of: attribute.type, round: 1 - probe.round)]
        guard let value = candidates.lazy.compactMap({ Value.fromAttributeValue($0) }).first ?? anyStandIn(Value.self, in: probe.model) else { return nil }
        probe.accesses[index].placeholder = value.attributeValue
        return value
    }

    /// The value a non-optional `Value` reads from `attribute` on an inaccessible fault its
    /// context deleted: the type's empty value, the attribute's default, or one made up from
    /// empty values; `nil` when none fits.
    static func emptyValue<Value: AttributeValueConvertible>(_ type: Value.Type, of attribute: AttributeDescription) -> Value? {
        let candidates = [attribute.type.emptyValue, attribute.defaultValue].compactMap { $0 }
        return candidates.lazy.compactMap { Value.fromAttributeValue($0) }.first ?? madeUp(Value.self)
    }

    /// A value of `Value` made without a stored one: an enumeration's first case, or one decoded
    /// from empty values; `nil` when neither works.
    private static func madeUp<Value>(_ type: Value.Type) -> Value? {
        func firstCase<C: CaseIterable>(_ type: C.Type) -> Any? { type.allCases.first }
        if let iterable = type as? any CaseIterable.Type, let first = firstCase(iterable) as? Value { return first }
        if let decodable = type as? any Decodable.Type { return (try? decodable.init(from: PlaceholderDecoder())) as? Value }
        return nil
    }

    /// Whether a probe reading a wrapper of type `Value` in `model` can be answered (see
    /// ``fallback(_:for:)``): a placeholder of some attribute type converts to it, or some
    /// attribute's default does, or one can be made up. When none can, reading the wrapper on
    /// a prototype would stop the process, so a `#Predicate` reading it is refused first.
    /// (Types that are not attribute values — objects, relationship collections, IDs — are
    /// not read through a wrapper of this kind.)
    static func canStandIn<Value>(for type: Value.Type, in model: ManagedObjectModel) -> Bool {
        guard let convertible = type as? any AttributeValueConvertible.Type else { return true }
        return anyStandIn(convertible, in: model) != nil
    }

    /// A `Value` from any placeholder, any attribute's default in `model`, or made up: what
    /// ``fallback(_:for:)`` answers when the attribute's own candidates do not fit, so that
    /// ``canStandIn(for:in:)`` holding means the fallback succeeds.
    private static func anyStandIn<Value: AttributeValueConvertible>(_ type: Value.Type, in model: ManagedObjectModel) -> Value? {
        for attributeType in AttributeType.allCases {
            for round in 0...1 {
                if let value = Value.fromAttributeValue(placeholder(of: attributeType, round: round)) { return value }
            }
        }
        for entity in model.entities {
            for attribute in entity.attributes {
                if let value = Value.fromAttributeValue(attribute.defaultValue) { return value }
            }
        }
        return madeUp(Value.self)
    }

    /// For a prototype: records the relationship and returns the objects the accessor should
    /// see (a destination prototype for to-one, none for to-many); otherwise `nil`.
    static func recordRelationship(_ relationship: RelationshipDescription, of object: ManagedObject) -> [ManagedObject]? {
        guard let probe = probe(for: object) else { return nil }
        let destination = relationship.isToMany ? nil : probe.prototype(of: probe.model.destinationEntity(of: relationship))
        probe.accesses.append(Access(object: ObjectIdentifier(object), property: .relationship(relationship), placeholder: .null, destination: destination))
        return destination.map { [$0] } ?? []
    }

    /// Whether `object` is a prototype of a running probe.
    static func isPrototype(_ object: ManagedObject) -> Bool { probe(for: object) != nil }

    /// A placeholder of an attribute type; the two rounds' differ, and neither is a value
    /// common transformations (case changes, negation, `abs`) leave unchanged.
    static func placeholder(of type: AttributeType, round: Int) -> AttributeValue {
        let first = round == 0
        switch type {
        case .integer16, .integer32, .integer64: return .integer(first ? 7 : -3)
        case .double, .float: return .double(first ? 7.25 : -3.5)
        case .decimal: return .decimal(first ? 7.25 : -3.5)
        case .string: return .string(first ? "ObjectGraph.probe.1" : "OBJECTGRAPH.PROBE.2")
        case .boolean: return .bool(first)
        case .date: return .date(Date(timeIntervalSinceReferenceDate: first ? 7 : -3))
        case .binaryData: return .data(Data(first ? [7] : [3, 5]))
        case .uuid: return .uuid(UUID(uuid: (first ? 7 : 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        case .uri: return .uri(URL(fileURLWithPath: first ? "/objectgraph-probe-1" : "/OBJECTGRAPH-PROBE-2"))
        case .transformable: return .null
        }
    }
}

/// Decodes an "empty" value of any `Decodable` type: zero numbers, empty strings and
/// collections, absent optionals. Types whose initializer rejects such values throw.
private struct PlaceholderDecoder: Decoder {
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Keyed<Key>(codingPath: codingPath))
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { Unkeyed(codingPath: codingPath) }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(codingPath: codingPath) }

    static func zero<T: Decodable>(_ type: T.Type, codingPath: [any CodingKey]) throws -> T {
        switch type {
        case is String.Type: return "" as! T
        case is Bool.Type: return false as! T
        // (Decoded from an empty string these throw; any value of theirs will do.)
        case is UUID.Type: return UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) as! T
        case is Date.Type: return Date(timeIntervalSinceReferenceDate: 0) as! T
        case is URL.Type: return URL(fileURLWithPath: "/") as! T
        case is Data.Type: return Data() as! T
        case let numeric as any (Numeric & Decodable).Type: return numeric.zeroValue as! T
        default: return try T(from: PlaceholderDecoder(codingPath: codingPath))
        }
    }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        var codingPath: [any CodingKey]
        var allKeys: [Key] { [] }
        func contains(_ key: Key) -> Bool { true }
        func decodeNil(forKey key: Key) throws -> Bool { true }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try PlaceholderDecoder.zero(type, codingPath: codingPath + [key])
        }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            KeyedDecodingContainer(Keyed<NestedKey>(codingPath: codingPath + [key]))
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { Unkeyed(codingPath: codingPath + [key]) }
        func superDecoder() throws -> any Decoder { PlaceholderDecoder(codingPath: codingPath) }
        func superDecoder(forKey key: Key) throws -> any Decoder { PlaceholderDecoder(codingPath: codingPath + [key]) }
    }

    struct Unkeyed: UnkeyedDecodingContainer {
        var codingPath: [any CodingKey]
        var count: Int? { 0 }
        var isAtEnd: Bool { true }
        var currentIndex: Int { 0 }
        private var end: DecodingError {
            DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath, debugDescription: "a placeholder has no elements"))
        }
        mutating func decodeNil() throws -> Bool { true }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { throw end }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> { throw end }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw end }
        mutating func superDecoder() throws -> any Decoder { throw end }
    }

    struct Single: SingleValueDecodingContainer {
        var codingPath: [any CodingKey]
        func decodeNil() -> Bool { false }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try PlaceholderDecoder.zero(type, codingPath: codingPath) }
    }
}

private extension Numeric {
    static var zeroValue: Self { 0 }
}
