import Foundation

// The reference side of the undo random walk (``UndoWalk``): the part of the conformance
// model the walk edits, and a plain value graph that applies each edit with the model's
// semantics (inverses, cascade and nullify) so the context can be compared with it.

/// A relationship as the walk sees it.
struct WalkRelationship {
    let name: String
    let destination: String
    let inverse: String?
    let isToMany: Bool
    let isOrdered: Bool
    let cascades: Bool
}

/// An attribute as the walk sees it: how its values are made and shown.
struct WalkAttribute {
    enum Kind { case string, age, date }
    let name: String
    let kind: Kind

    /// The value the walk's `n` makes, as the context takes it.
    func value(_ n: Int) -> Any {
        switch kind {
        case .string: return "v\(n)"
        case .age: return Int16(n % 151)
        case .date: return Date(timeIntervalSince1970: Double(n) * 60)
        }
    }
}

/// An entity as the walk sees it.
struct WalkEntity {
    let name: String
    let attributes: [WalkAttribute]
    let relationships: [WalkRelationship]
    /// Whether the walk deletes objects of this entity (not a many-to-nil's destination, whose
    /// memberships a saved deletion drops in ways the history documents it does not restore).
    let deletable: Bool
}

/// The entities the walk edits: cascades (chat → messages, playlist → tracks, student →
/// address), many-to-many (chats ↔ members, students ↔ subjects), many-to-nil (tags), ordered
/// (tracks), one-to-one (address) and reflexive (employees).
enum WalkSchema {
    static let entities: [WalkEntity] = {
        func rel(_ name: String, _ destination: String, _ inverse: String?, many: Bool = false, ordered: Bool = false, cascade: Bool = false) -> WalkRelationship {
            WalkRelationship(name: name, destination: destination, inverse: inverse, isToMany: many, isOrdered: ordered, cascades: cascade)
        }
        func string(_ name: String) -> WalkAttribute { WalkAttribute(name: name, kind: .string) }
        return [
            WalkEntity(name: "Student", attributes: [string("name"), WalkAttribute(name: "age", kind: .age)], relationships: [
                rel("address", "Address", "student", cascade: true), rel("schoolClass", "SchoolClass", "students"),
                rel("subjects", "Subject", "students", many: true), rel("tags", "Tag", nil, many: true),
            ], deletable: true),
            WalkEntity(name: "Address", attributes: [string("street")], relationships: [rel("student", "Student", "address")], deletable: true),
            WalkEntity(name: "SchoolClass", attributes: [string("title")], relationships: [rel("students", "Student", "schoolClass", many: true)], deletable: true),
            WalkEntity(name: "Subject", attributes: [string("name")], relationships: [rel("students", "Student", "subjects", many: true)], deletable: true),
            WalkEntity(name: "Tag", attributes: [string("label")], relationships: [], deletable: false),
            WalkEntity(name: "Employee", attributes: [string("name")], relationships: [
                rel("manager", "Employee", "reports"), rel("reports", "Employee", "manager", many: true),
            ], deletable: true),
            WalkEntity(name: "Chat", attributes: [string("title")], relationships: [
                rel("messages", "Message", "chat", many: true, cascade: true), rel("members", "Member", "chats", many: true),
            ], deletable: true),
            WalkEntity(name: "Message", attributes: [string("text"), WalkAttribute(name: "sentAt", kind: .date)], relationships: [
                rel("chat", "Chat", "messages"), rel("author", "Member", "messages"),
            ], deletable: true),
            WalkEntity(name: "Member", attributes: [string("name")], relationships: [
                rel("chats", "Chat", "members", many: true), rel("messages", "Message", "author", many: true),
            ], deletable: true),
            WalkEntity(name: "Playlist", attributes: [string("name")], relationships: [
                rel("tracks", "Track", "playlist", many: true, ordered: true, cascade: true),
            ], deletable: true),
            WalkEntity(name: "Track", attributes: [string("title")], relationships: [rel("playlist", "Playlist", "tracks")], deletable: true),
        ]
    }()

    static func entity(_ name: String) -> WalkEntity { entities.first { $0.name == name }! }

    static func relationship(_ entity: String, _ name: String) -> WalkRelationship {
        self.entity(entity).relationships.first { $0.name == name }!
    }

    static func inverse(of relationship: WalkRelationship) -> WalkRelationship? {
        relationship.inverse.map { self.relationship(relationship.destination, $0) }
    }
}

/// One object of the reference graph: values shown as text, relationships by walk key
/// (unordered to-manys sorted, so two graphs compare equal when their sets do).
struct WalkObject: Equatable {
    var entity: String
    var values: [String: String] = [:]
    var toOne: [String: Int] = [:]
    var toMany: [String: [Int]] = [:]
}

/// The reference graph: every live object by walk key.
struct WalkGraph: Equatable {
    var objects: [Int: WalkObject] = [:]

    static func show(_ value: Any?) -> String {
        guard let value else { return "nil" }
        return String(describing: value)
    }

    mutating func insert(_ key: Int, entity: String) {
        var object = WalkObject(entity: entity)
        let description = WalkSchema.entity(entity)
        for attribute in description.attributes {
            object.values[attribute.name] = attribute.kind == .string ? "\(entity.prefix(2))\(key)" : "nil"
        }
        for relationship in description.relationships where relationship.isToMany { object.toMany[relationship.name] = [] }
        objects[key] = object
    }

    /// Sets a to-one, keeping its inverse (a to-many or, one-to-one, the other to-one) paired.
    mutating func setToOne(_ key: Int, _ relationship: WalkRelationship, _ target: Int?) {
        let inverse = WalkSchema.inverse(of: relationship)
        if let old = objects[key]!.toOne[relationship.name], let inverse { detach(key, from: old, inverse) }
        objects[key]!.toOne[relationship.name] = target
        if let target, let inverse { attach(key, to: target, inverse, opposite: relationship, at: nil) }
    }

    /// Adds `member` to a to-many (at `index` of an ordered one), keeping the inverse paired.
    mutating func add(_ member: Int, to key: Int, _ relationship: WalkRelationship, at index: Int?) {
        if let inverse = WalkSchema.inverse(of: relationship) {
            if !inverse.isToMany, let old = objects[member]!.toOne[inverse.name] { detach(member, from: old, relationship) }
            attach(key, to: member, inverse, opposite: relationship, at: nil)
        }
        insertMember(member, into: key, relationship, at: index)
    }

    /// Removes `member` from a to-many, keeping the inverse paired.
    mutating func remove(_ member: Int, from key: Int, _ relationship: WalkRelationship) {
        objects[key]!.toMany[relationship.name]!.removeAll { $0 == member }
        if let inverse = WalkSchema.inverse(of: relationship) { detach(key, from: member, inverse) }
    }

    /// Moves the member at `from` of an ordered to-many to `to`.
    mutating func move(in key: Int, _ relationship: WalkRelationship, from: Int, to: Int) {
        var members = objects[key]!.toMany[relationship.name]!
        let member = members.remove(at: from)
        members.insert(member, at: to)
        objects[key]!.toMany[relationship.name] = members
    }

    /// Deletes `key` and what its cascades reach; every reference to them is nullified.
    mutating func delete(_ key: Int) {
        var doomed: Set<Int> = []
        var work = [key]
        while let next = work.popLast() {
            guard doomed.insert(next).inserted, let object = objects[next] else { continue }
            for relationship in WalkSchema.entity(object.entity).relationships where relationship.cascades {
                if relationship.isToMany { work += object.toMany[relationship.name] ?? [] } else if let target = object.toOne[relationship.name] { work.append(target) }
            }
        }
        for key in doomed { objects[key] = nil }
        for key in objects.keys {
            for (name, target) in objects[key]!.toOne where doomed.contains(target) { objects[key]!.toOne[name] = nil }
            for name in objects[key]!.toMany.keys { objects[key]!.toMany[name]!.removeAll { doomed.contains($0) } }
        }
    }

    // `owner`'s end `relationship` no longer holds `key`.
    private mutating func detach(_ key: Int, from owner: Int, _ relationship: WalkRelationship) {
        if relationship.isToMany { objects[owner]!.toMany[relationship.name]!.removeAll { $0 == key } } else { objects[owner]!.toOne[relationship.name] = nil }
    }

    // `owner`'s end `relationship` now holds `key`, whose own end is `opposite`.
    private mutating func attach(_ key: Int, to owner: Int, _ relationship: WalkRelationship, opposite: WalkRelationship, at index: Int?) {
        if relationship.isToMany {
            insertMember(key, into: owner, relationship, at: index)
        } else {
            // One-to-one: the owner's previous partner loses it.
            if !opposite.isToMany, let previous = objects[owner]!.toOne[relationship.name], previous != key { objects[previous]!.toOne[opposite.name] = nil }
            objects[owner]!.toOne[relationship.name] = key
        }
    }

    private mutating func insertMember(_ member: Int, into key: Int, _ relationship: WalkRelationship, at index: Int?) {
        var members = objects[key]!.toMany[relationship.name]!
        guard !members.contains(member) else { return }
        if let index { members.insert(member, at: index) } else { members.append(member) }
        if !relationship.isOrdered { members.sort() }
        objects[key]!.toMany[relationship.name] = members
    }

    /// The first few differences from `other`, for a failure message.
    func differences(from other: WalkGraph, limit: Int = 6) -> [String] {
        var lines: [String] = []
        for key in Set(objects.keys).union(other.objects.keys).sorted() where objects[key] != other.objects[key] {
            lines.append("#\(key): \(Self.describe(objects[key])) vs \(Self.describe(other.objects[key]))")
            if lines.count == limit { break }
        }
        return lines
    }

    static func describe(_ object: WalkObject?) -> String {
        guard let object else { return "absent" }
        let values = object.values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let toOne = object.toOne.sorted { $0.key < $1.key }.map { "\($0.key)→#\($0.value)" }
        let toMany = object.toMany.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return "\(object.entity)(" + (values + toOne + toMany).joined(separator: " ") + ")"
    }
}
