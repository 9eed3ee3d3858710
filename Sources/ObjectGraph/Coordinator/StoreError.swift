/// A store could not do what was asked: open, read, write, or save without conflict.
///
/// Backends map their native codes (SQLite result codes, `MDB_*`) to these codes and keep the
/// original as `underlying`.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The numeric code.
        public let rawValue: Int
        /// Creates a code from its numeric value.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// The store holds data for another model version (Core Data's 134100).
        public static let incompatibleModel = Code(rawValue: 134100)
        /// Another save changed a row since it was read (optimistic locking; Core Data's 133020).
        public static let conflict = Code(rawValue: 133020)
        /// The file is not a store of this kind, or is damaged.
        public static let corrupt = Code(rawValue: 259)
        /// Reading or writing the file failed.
        public static let io = Code(rawValue: 256)
        /// The store is closed or was removed from its coordinator.
        public static let closed = Code(rawValue: 134070)
        /// A change set refers to rows the store does not have.
        public static let missingRow = Code(rawValue: 133000)
        /// A uniqueness constraint would be violated (Core Data's 133021).
        public static let constraintViolation = Code(rawValue: 133021)
        /// The store is locked by another process or connection.
        public static let busy = Code(rawValue: 134090)
        /// Any other failure of the backend.
        public static let backend = Code(rawValue: 134060)
        /// A store description's option is unknown to its store kind, or has a value the
        /// option does not take (Core Data's store-open error, 134080).
        public static let invalidOption = Code(rawValue: 134080)

        /// The code's name, for messages.
        public var description: String {
            switch self {
            case .incompatibleModel: return "incompatibleModel"
            case .conflict: return "conflict"
            case .corrupt: return "corrupt"
            case .io: return "io"
            case .closed: return "closed"
            case .missingRow: return "missingRow"
            case .constraintViolation: return "constraintViolation"
            case .busy: return "busy"
            case .backend: return "backend"
            case .invalidOption: return "invalidOption"
            default: return "code \(rawValue)"
            }
        }
    }

    /// One optimistic-locking conflict: the row changed (or vanished) since it was read.
    public struct Conflict: Sendable, CustomStringConvertible {
        /// The record.
        public var objectID: ObjectID
        /// The version the saving context had read.
        public var expectedVersion: Int64
        /// The stored version now; `nil` when the row was deleted.
        public var storedVersion: Int64?
        /// The stored values now, when the row still exists.
        public var storedSnapshot: RowSnapshot?

        /// Creates a conflict record.
        public init(objectID: ObjectID, expectedVersion: Int64, storedVersion: Int64?, storedSnapshot: RowSnapshot?) {
            self.objectID = objectID
            self.expectedVersion = expectedVersion
            self.storedVersion = storedVersion
            self.storedSnapshot = storedSnapshot
        }

        /// "Entity/p1: read version 2, stored 3".
        public var description: String {
            "\(objectID): read version \(expectedVersion), stored \(storedVersion.map(String.init) ?? "deleted")"
        }
    }

    /// The kind of failure.
    public let code: Code
    /// A sentence saying what failed and where (file, entity, row).
    public let message: String
    /// Conflicts, for ``Code/conflict``.
    public let conflicts: [Conflict]
    /// The backend's own error, when there is one.
    public let underlying: (any Error & Sendable)?

    /// Creates a store error.
    public init(_ code: Code, _ message: String, conflicts: [Conflict] = [], underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.conflicts = conflicts
        self.underlying = underlying
    }

    /// "store error (code): message".
    public var description: String {
        var text = "store error (\(code)): \(message)"
        if !conflicts.isEmpty { text += " [" + conflicts.map(\.description).joined(separator: "; ") + "]" }
        if let underlying { text += " (underlying: \(underlying))" }
        return text
    }
}
