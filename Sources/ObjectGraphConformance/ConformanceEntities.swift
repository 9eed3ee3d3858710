import Foundation
import ObjectGraph
import OrderedCollections

// Typed classes of the conformance model. Scenarios use them where a Core Data user would,
// and key-value access elsewhere, so both paths are exercised on every store.

/// A student: one-to-one address, many-to-one class, many-to-many subjects, many-to-nil
/// tags, one-to-nil locker.
public final class Student: ManagedObject {
    /// Required name.
    @Attribute public var name: String
    /// Optional age, 0...150.
    @Attribute public var age: Int16?
    /// One-to-one.
    @Relationship public var address: Address?
    /// Many-to-one.
    @Relationship public var schoolClass: SchoolClass?
    /// Many-to-many.
    @Relationship public var subjects: Set<Subject>
    /// Many-to-nil (no inverse).
    @Relationship public var tags: Set<Tag>
    /// One-to-nil (no inverse).
    @Relationship public var locker: Locker?
}

/// One-to-one partner of ``Student``.
public final class Address: ManagedObject {
    /// Street.
    @Attribute public var street: String
    /// The inverse of ``Student/address``.
    @Relationship public var student: Student?
}

/// A class with many students.
public final class SchoolClass: ManagedObject {
    /// Title.
    @Attribute public var title: String
    /// The inverse of ``Student/schoolClass``.
    @Relationship public var students: Set<Student>
}

/// A subject taken by many students.
public final class Subject: ManagedObject {
    /// Name.
    @Attribute public var name: String
    /// The inverse of ``Student/subjects``.
    @Relationship public var students: Set<Student>
}

/// A tag (destination of a many-to-nil relationship).
public final class Tag: ManagedObject {
    /// Label.
    @Attribute public var label: String
}

/// A locker (destination of a one-to-nil relationship).
public final class Locker: ManagedObject {
    /// Number.
    @Attribute public var number: Int32
}

/// A login: its email is unique (a uniqueness constraint).
public final class Login: ManagedObject {
    /// Email, unique among logins (nil never collides).
    @Attribute public var email: String?
    /// Whose login it is.
    @Attribute public var owner: String?
}

/// Reflexive: employees manage employees.
public final class Employee: ManagedObject {
    /// Name.
    @Attribute public var name: String
    /// The manager.
    @Relationship public var manager: Employee?
    /// The inverse of ``manager``.
    @Relationship public var reports: Set<Employee>
}

/// A chat: cascade to messages, nullify members.
public final class Chat: ManagedObject {
    /// Title.
    @Attribute public var title: String
    /// Messages (cascade).
    @Relationship public var messages: Set<Message>
    /// Members (many-to-many, nullify).
    @Relationship public var members: Set<Member>
}

/// A message in a chat.
public final class Message: ManagedObject {
    /// Text.
    @Attribute public var text: String
    /// When it was sent.
    @Attribute public var sentAt: Date?
    /// The chat (nullify).
    @Relationship public var chat: Chat?
    /// The author (nullify).
    @Relationship public var author: Member?
}

/// A chat member.
public final class Member: ManagedObject {
    /// Name.
    @Attribute public var name: String
    /// Chats.
    @Relationship public var chats: Set<Chat>
    /// Messages written.
    @Relationship public var messages: Set<Message>
}

/// A playlist with ordered tracks.
public final class Playlist: ManagedObject {
    /// Name.
    @Attribute public var name: String
    /// Ordered one-to-many.
    @Relationship public var tracks: OrderedSet<Track>
}

/// A track in a playlist.
public final class Track: ManagedObject {
    /// Title.
    @Attribute public var title: String
    /// The inverse of ``Playlist/tracks``.
    @Relationship public var playlist: Playlist?
}

/// Codable value for the transformable attribute.
public struct Palette: TransformableValue, Equatable {
    /// Primary colour.
    public var primary: String
    /// Secondary colours.
    public var accents: [String]
    /// Creates a palette.
    public init(primary: String, accents: [String]) {
        self.primary = primary
        self.accents = accents
    }
}

/// Records the lifecycle hooks the framework calls on it, in order, so scenarios can check
/// when each hook runs. `willSave` counts saves in a stored attribute (a change made in
/// `willSave` must be saved too); `awakeFromInsert` sets a starting name. It validates its
/// name itself (``ProbeNameRefused``), recording every name its validation was asked about.
public final class Probe: ManagedObject {
    /// Name; "fresh" after `awakeFromInsert`.
    @Attribute public var name: String
    /// How many saves included this object (bumped by `willSave`).
    @Attribute public var saves: Int32
    /// Transient, set by `awakeFromFetch` from the name (a cache set up where Core Data
    /// records no change).
    @Attribute public var greeting: String?
    /// Hook names, in the order they were called on this instance.
    public private(set) var hooks: [String] = []
    /// Extra work for ``willSave()``, after the hook is recorded (a scenario's own side effects).
    public var onWillSave: ((Probe) -> Void)?
    /// Extra work for ``didSave()``, after the hook is recorded (a scenario's own observations).
    public var onDidSave: ((Probe) -> Void)?
    /// Extra work for ``validate(_:forKey:)``, after the name is recorded: a scenario acting at
    /// a point inside a save (such as between a conflict's resolution and the retry).
    public var onValidate: ((Probe) -> Void)?

    /// Records the hook and sets the starting name.
    public override func awakeFromInsert() {
        hooks.append("awakeFromInsert")
        name = "fresh"
    }
    /// Records the hook and sets ``greeting``.
    public override func awakeFromFetch() {
        hooks.append("awakeFromFetch")
        greeting = "hello \(name)"
    }
    /// Records the hook and counts the save (not for a deleted object).
    public override func willSave() {
        hooks.append("willSave")
        if !isDeleted { saves += 1 }
        onWillSave?(self)
    }
    /// Records the hook, marking saves of deletions ("didSave(deleted)").
    public override func didSave() {
        hooks.append(isDeleted ? "didSave(deleted)" : "didSave")
        onDidSave?(self)
    }
    /// Records the hook.
    public override func prepareForDeletion() { hooks.append("prepareForDeletion") }
    /// Records the hook, and the name the object still holds then.
    public override func willTurnIntoFault() {
        hooks.append("willTurnIntoFault")
        nameBeforeFault = name
    }
    /// Records the hook.
    public override func didTurnIntoFault() { hooks.append("didTurnIntoFault") }

    /// The name read in the last ``willTurnIntoFault()`` (values are still there then).
    public private(set) var nameBeforeFault: String?
    /// Every value ``validate(_:forKey:)`` was asked about, in order.
    public private(set) var validatedNames: [String] = []

    /// The name is validated by ``validate(_:forKey:)``.
    public override class var validatedKeys: Set<String> { ["name"] }

    /// Refuses the name "forbidden" with ``ProbeNameRefused``, the name "strict" with a
    /// ``ValidationError`` of its own (code 1680), and the name "silent" with a
    /// ``ValidationError`` holding no violation, recording every name it sees.
    public override func validate(_ value: Any?, forKey key: String) throws {
        guard key == "name" else { return }
        let name = value as? String ?? "<\(type(of: value))>"
        validatedNames.append(name)
        onValidate?(self)
        if name == "forbidden" { throw ProbeNameRefused(name: name) }
        if name == "strict" {
            throw ValidationError(violations: [.init(code: .stringPatternMatching, objectID: objectID, key: key, message: "strict is refused by pattern")])
        }
        if name == "silent" { throw ValidationError(violations: []) }
    }
}

/// What ``Probe`` throws for a name it refuses.
public struct ProbeNameRefused: Error, Equatable {
    /// The name refused.
    public var name: String
}
