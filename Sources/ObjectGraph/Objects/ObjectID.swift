import Foundation
import Synchronization

/// The identity of one record: entity, store and primary key. `Sendable` and `Hashable`, so
/// it can cross threads and contexts where managed objects cannot.
///
/// An object inserted in a context has a *temporary* ID until it is saved; the save gives it a
/// *permanent* one, and the object's ``ManagedObject/objectID`` changes accordingly. The URI
/// form (``uriRepresentation``) is stable for permanent IDs and can be stored and resolved later
/// with ``PersistentStoreCoordinator/objectID(forURI:)``.
///
/// An ID is 16 bytes of plain integers: the entity name and the store identifier are interned
/// process-wide (``ObjectID/Namespace``), so copying, hashing and comparing IDs — which uniquing,
/// change tracking and the row cache do constantly — never touches a string or a reference count.
public struct ObjectID: Sendable, Hashable, CustomStringConvertible {
    /// The interned entity name.
    let entityToken: UInt32
    /// The interned store identifier; ``InternedNames/temporary`` for temporary IDs.
    let storeToken: UInt32
    /// The primary key of a permanent ID, the creation sequence of a temporary one.
    let value: Int64

    init(entityToken: UInt32, storeToken: UInt32, value: Int64) {
        self.entityToken = entityToken
        self.storeToken = storeToken
        self.value = value
    }

    /// A permanent ID, as stores create them. Stores making many IDs should use a
    /// ``Namespace`` instead, which interns the two names once.
    public init(entityName: String, storeIdentifier: String, primaryKey: Int64) {
        self = Namespace(entityName: entityName, storeIdentifier: storeIdentifier).objectID(primaryKey: primaryKey)
    }

    /// A new temporary ID for an object of `entity`.
    static func temporary(entity: EntityDescription) -> ObjectID {
        let sequence = temporaryCounter.add(1, ordering: .relaxed).newValue
        return ObjectID(entityToken: entity.nameToken, storeToken: InternedNames.temporary, value: Int64(bitPattern: sequence))
    }

    /// A process-wide sequence: temporary IDs sort in creation order, which keeps fetches that
    /// include unsaved objects deterministic.
    private static let temporaryCounter = Atomic<UInt64>(0)

    /// Hashes only the key: the entity and store rarely tell two keys apart.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(value)
    }

    /// The hash `Set` and `Dictionary` use. IDs are hashed constantly (registry, change
    /// tracking, row cache: four or five lookups per fetched object), and a full SipHash round
    /// per lookup was a tenth of fetching a chat's messages, measured.
    ///
    /// Keys come in runs (stores number rows in sequence, and fetch, cache and fault them in
    /// that order), so each run of eight keys of an entity (`key >> 3`) shares one aligned
    /// block of eight buckets, placed by mixing the run's number and the entity with the
    /// table's seed (random per process and per table) through a bijective 64-bit finalizer
    /// (MurmurHash3's fmix64); the key's place in its block is its low bits rotated by the
    /// mix, a permutation of the block. A table of 100,000 IDs is megabytes, and with every
    /// key in its own random bucket each lookup was a cache miss: registering the objects of a
    /// 100,000-row fetch took 26 of the context's 40 ms, and 16 ms with blocks (LMDB,
    /// measured). Keys sharing their low bits still spread over every bucket, and the bucket
    /// of a chosen key cannot be predicted. `hash(into:)` stays SipHash for IDs hashed as
    /// parts of other values.
    public func _rawHashValue(seed: Int) -> Int {
        let key = UInt64(bitPattern: value)
        let block = Self.mix(key >> 3 ^ UInt64(entityToken) << 56, seed: seed)
        // The rotation comes from the top bits, which pick no bucket in any table.
        return (block & ~7) | Int((key &+ UInt64(UInt(bitPattern: block)) >> 61) & 7)
    }

    /// MurmurHash3's fmix64 of `key` xor `seed`: a bijection whose every output bit depends on
    /// every input bit. Also hashes managed objects by address (see ``ManagedObject``).
    @inline(__always)
    static func mix(_ key: UInt64, seed: Int) -> Int {
        var x = key ^ UInt64(UInt(bitPattern: seed))
        x ^= x >> 33
        x &*= 0xff51_afd7_ed55_8ccd
        x ^= x >> 33
        x &*= 0xc4ce_b9fe_1a85_ec53
        x ^= x >> 33
        return Int(Int64(bitPattern: x))
    }

    /// The entity of the record (the concrete entity, never an abstract parent).
    public var entityName: String { InternedNames.shared.name(of: entityToken) }

    /// The entity and store of the ID.
    public var namespace: Namespace { Namespace(entityToken: entityToken, storeToken: storeToken) }

    /// Whether the ID is temporary (its object has not been saved yet).
    public var isTemporary: Bool { storeToken == InternedNames.temporary }

    /// The primary key of a permanent ID (unique within the entity's hierarchy in its store).
    public var primaryKey: Int64? { isTemporary ? nil : value }

    /// The identifier of the store that holds the record; `nil` for temporary IDs.
    public var storeIdentifier: String? {
        isTemporary ? nil : InternedNames.shared.name(of: storeToken)
    }

    /// Whether both IDs name the same entity (cheaper than comparing ``entityName``s).
    public func hasSameEntity(as other: ObjectID) -> Bool { entityToken == other.entityToken }

    /// A URI naming the record: `x-objectgraph://STORE/Entity/pKEY` (temporary IDs:
    /// `x-objectgraph://temporary/Entity/tN`, meaningful in their own process only).
    public var uriRepresentation: URL {
        // Every character but the unreserved ASCII ones is percent-encoded, in the store's
        // identifier too (any string a store chooses, or one parsed from a URI): the string is
        // then always a valid URL, which a space or a colon in the host made it not.
        let encodedEntity = Self.uriEncoded(entityName)
        if isTemporary {
            return URL(string: "x-objectgraph://temporary/\(encodedEntity)/t\(UInt64(bitPattern: value))")!
        }
        return URL(string: "x-objectgraph://\(Self.uriEncoded(storeIdentifier ?? ""))/\(encodedEntity)/p\(value)")!
    }

    private static let uriUnreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    private static func uriEncoded(_ part: String) -> String {
        part.addingPercentEncoding(withAllowedCharacters: uriUnreserved) ?? part
    }

    /// Parses a URI made by ``uriRepresentation``; `nil` when it is not one.
    public init?(uri: URL) {
        // Host and path are read percent-encoded and decoded here, part by part, so an encoded
        // "/" in a name does not split it.
        guard uri.scheme == "x-objectgraph", let components = URLComponents(url: uri, resolvingAgainstBaseURL: false),
              let host = components.percentEncodedHost?.removingPercentEncoding, !host.isEmpty else { return nil }
        let parts = components.percentEncodedPath.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count == 2, let entity = String(parts[0]).removingPercentEncoding, !entity.isEmpty else { return nil }
        let last = parts[1]
        // Only the digits ``uriRepresentation`` writes: `Int64("+5")` and `Int64("05")` read 5,
        // so "p+5" and "p05" named the record of "p5" (a URI is compared and stored as text,
        // so each record must have one).
        let digits = last.dropFirst()
        if host == "temporary" {
            guard last.first == "t", let sequence = UInt64(digits), String(sequence) == digits else { return nil }
            self.init(entityToken: InternedNames.shared.token(for: entity), storeToken: InternedNames.temporary, value: Int64(bitPattern: sequence))
        } else {
            guard last.first == "p", let pk = Int64(digits), String(pk) == digits else { return nil }
            self.init(entityName: entity, storeIdentifier: host, primaryKey: pk)
        }
    }

    /// "Entity/p42" or "Entity/t…" — short, for messages.
    public var description: String {
        isTemporary ? "\(entityName)/t\(UInt64(bitPattern: value))" : "\(entityName)/p\(value)"
    }

    /// The entity and store of a family of permanent IDs, interned once: a store reading many
    /// rows makes one ``Namespace`` per entity and an ID per row with ``objectID(primaryKey:)``,
    /// without hashing names per row. `Hashable`, so stores can also group IDs by it.
    public struct Namespace: Sendable, Hashable {
        let entityToken: UInt32
        let storeToken: UInt32

        init(entityToken: UInt32, storeToken: UInt32) {
            self.entityToken = entityToken
            self.storeToken = storeToken
        }

        /// The namespace of `entityName`'s records in the store `storeIdentifier`.
        public init(entityName: String, storeIdentifier: String) {
            let (entity, store) = InternedNames.shared.tokens(for: entityName, storeIdentifier)
            self.init(entityToken: entity, storeToken: store)
        }

        /// The hash `Set` and `Dictionary` use: stores look their per-entity plans up by
        /// namespace once per row, and a SipHash round there was most of grouping a cascade's
        /// 10,000 deletions by table (measured). Mixed like ``ObjectID``'s key.
        public func _rawHashValue(seed: Int) -> Int {
            ObjectID.mix(UInt64(entityToken) << 32 | UInt64(storeToken), seed: seed)
        }

        /// The ID of the record with `primaryKey`.
        @inline(__always)
        public func objectID(primaryKey: Int64) -> ObjectID {
            ObjectID(entityToken: entityToken, storeToken: storeToken, value: primaryKey)
        }

        /// The entity name.
        public var entityName: String { InternedNames.shared.name(of: entityToken) }

        /// The store identifier; `nil` for the namespace of temporary IDs.
        public var storeIdentifier: String? {
            storeToken == InternedNames.temporary ? nil : InternedNames.shared.name(of: storeToken)
        }
    }
}

/// An ID encodes as its URI string (``ObjectID/uriRepresentation``). Being `Codable` lets an
/// ID be captured in a `#Predicate` — `#Predicate<Message> { $0.chat?.objectID == chatID }`,
/// SwiftData's `persistentModelID` idiom — where managed objects themselves cannot be.
extension ObjectID: Codable {
    /// Encodes the URI string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(uriRepresentation.absoluteString)
    }

    /// Decodes a URI string made by ``uriRepresentation``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let url = URL(string: text), let id = ObjectID(uri: url) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not an ObjectGraph object ID URI")
        }
        self = id
    }
}
