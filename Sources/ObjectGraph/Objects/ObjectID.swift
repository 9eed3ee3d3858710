import Foundation
import Synchronization

/// The identity of one record: entity, store and primary key. `Sendable` and `Hashable`, so
/// it can cross threads and contexts where managed objects cannot.
///
/// An object inserted in a context has a *temporary* ID until it is saved; the save gives it a
/// *permanent* one, and the object's ``ManagedObject/objectID`` changes accordingly. The URI
/// form (``uriRepresentation``) is stable for permanent IDs and can be stored and resolved later
/// with ``PersistentStoreCoordinator/objectID(forURI:)``.
public struct ObjectID: Sendable, Hashable, CustomStringConvertible {
    enum Key: Sendable, Hashable {
        case temporary(UInt64)
        case permanent(store: String, primaryKey: Int64)
    }

    /// The entity of the record (the concrete entity, never an abstract parent).
    public let entityName: String
    let key: Key

    init(entityName: String, key: Key) {
        self.entityName = entityName
        self.key = key
    }

    /// A permanent ID, as stores create them.
    public init(entityName: String, storeIdentifier: String, primaryKey: Int64) {
        self.entityName = entityName
        self.key = .permanent(store: storeIdentifier, primaryKey: primaryKey)
    }

    /// A new temporary ID.
    static func temporary(entityName: String) -> ObjectID {
        ObjectID(entityName: entityName, key: .temporary(temporaryCounter.add(1, ordering: .relaxed).newValue))
    }

    /// A process-wide sequence: temporary IDs sort in creation order, which keeps fetches that
    /// include unsaved objects deterministic.
    private static let temporaryCounter = Atomic<UInt64>(0)

    /// Hashes only the key: IDs are hashed constantly (uniquing, change tracking, row cache),
    /// and the entity and store names rarely tell two keys apart, so hashing those strings
    /// would only cost time. Equality still compares everything.
    public func hash(into hasher: inout Hasher) {
        switch key {
        case .permanent(_, let primaryKey): hasher.combine(primaryKey)
        case .temporary(let sequence): hasher.combine(sequence)
        }
    }

    /// Whether the ID is temporary (its object has not been saved yet).
    public var isTemporary: Bool {
        if case .temporary = key { return true }
        return false
    }

    /// The primary key of a permanent ID (unique within the entity's hierarchy in its store).
    public var primaryKey: Int64? {
        if case .permanent(_, let pk) = key { return pk }
        return nil
    }

    /// The identifier of the store that holds the record; `nil` for temporary IDs.
    public var storeIdentifier: String? {
        if case .permanent(let store, _) = key { return store }
        return nil
    }

    /// A URI naming the record: `x-objectgraph://STORE/Entity/pKEY` (temporary IDs:
    /// `x-objectgraph://temporary/Entity/tN`, meaningful in their own process only).
    public var uriRepresentation: URL {
        let encodedEntity = entityName.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? entityName
        switch key {
        case .temporary(let sequence):
            return URL(string: "x-objectgraph://temporary/\(encodedEntity)/t\(sequence)")!
        case .permanent(let store, let pk):
            return URL(string: "x-objectgraph://\(store)/\(encodedEntity)/p\(pk)")!
        }
    }

    /// Parses a URI made by ``uriRepresentation``; `nil` when it is not one.
    public init?(uri: URL) {
        guard uri.scheme == "x-objectgraph", let host = uri.host, !host.isEmpty else { return nil }
        let parts = uri.path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count == 2 else { return nil }
        let entity = String(parts[0]).removingPercentEncoding ?? String(parts[0])
        let last = parts[1]
        if host == "temporary" {
            guard last.first == "t", let sequence = UInt64(last.dropFirst()) else { return nil }
            self.init(entityName: entity, key: .temporary(sequence))
        } else {
            guard last.first == "p", let pk = Int64(last.dropFirst()) else { return nil }
            self.init(entityName: entity, storeIdentifier: host, primaryKey: pk)
        }
    }

    /// "Entity/p42" or "Entity/t…" — short, for messages.
    public var description: String {
        switch key {
        case .temporary(let sequence): return "\(entityName)/t\(sequence)"
        case .permanent(_, let pk): return "\(entityName)/p\(pk)"
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
