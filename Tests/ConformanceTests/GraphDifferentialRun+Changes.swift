import Foundation
import ObjectGraph
import ObjectGraphConformance

/// The changes a ``GraphDifferentialRun`` makes, each through the key-value API (checked
/// against the model, as an app driven by names would make them).
extension GraphDifferentialRun {
    /// Inserts an object of a random entity with a fresh label and a few random values.
    mutating func insert(in context: ManagedObjectContext) throws {
        let total = Self.kinds.reduce(0) { $0 + $1.weight }
        var remaining = int(0...(total - 1))
        guard let kind = Self.kinds.first(where: { remaining -= $0.weight; return remaining < 0 }) else { return }
        counter += 1
        let object = try context.insertObject(entityName: kind.entity)
        switch kind.entity {
        case "Locker", "AllTypes": try object.setValue(counter, forKey: kind.label)
        case "Account": try object.setValue("acct_\(counter)", forKey: kind.label)
        default: try object.setValue("\(kind.entity.lowercased())\(counter)", forKey: kind.label)
        }
        switch kind.entity {
        case "Account": try object.setValue(int(0...9999), forKey: "pin")
        case "Document":
            // Required: mostly given, sometimes not (the save then fails on every backend).
            if chance(0.9), let folder = pick(try objects("Folder", in: context)) { try object.setValue(folder, forKey: "folder") }
        default: break
        }
        // Every type's edge values, on the entity that has them all.
        let attributeChanges = kind.entity == "AllTypes" ? int(6...14) : int(0...2)
        for _ in 0..<attributeChanges { try setRandomAttribute(of: object) }
    }

    /// One change other than an insert, by `roll` (24..<84; the run's own context rolls
    /// 24..<81): attribute, to-one, to-many, ordered or delete.
    mutating func change(in context: ManagedObjectContext, roll: Int) throws {
        switch roll {
        case ..<36: try setAttribute(in: context)
        case 36..<54: try setToOne(in: context)
        case 54..<70: try changeToMany(in: context)
        case 70..<75: try changeOrdered(in: context)
        default: try delete(in: context)
        }
    }

    /// A few changes in a child context, saved into `context` (or refused, then dropped).
    mutating func changeInChild(of context: ManagedObjectContext, step: Int) throws {
        let child = context.newChildContext()
        let changes = int(1...4)
        let outcome: String = child.performAndWait {
            do {
                for _ in 0..<changes {
                    if chance(0.3) { try insert(in: child) } else { try change(in: child, roll: int(24...83)) }
                }
                try child.save()
                return "saved"
            } catch {
                return "failed (\(Self.kind(of: error)))"
            }
        }
        record.append("step \(step): child \(outcome)")
    }

    /// Sets a random attribute of a random object.
    mutating func setAttribute(in context: ManagedObjectContext) throws {
        guard let object = try anyObject(in: context) else { return }
        try setRandomAttribute(of: object)
    }

    /// Sets one of the object's varying attributes (never its label) to a value from its pool:
    /// edge values, and now and then one its rules refuse.
    mutating func setRandomAttribute(of object: ManagedObject) throws {
        let label = Self.kinds.first { $0.entity == object.entity.name }?.label
        let varying = object.entity.attributes.filter { $0.name != label }
        guard let attribute = pick(varying) else { return }
        let pool = Self.values(for: attribute, entity: object.entity.name)
        guard let value = pick(pool) else { return }
        try object.setValue(value, forKey: attribute.name)
    }

    /// Sets a random to-one relationship of a random object to a random candidate, or to nil.
    mutating func setToOne(in context: ManagedObjectContext) throws {
        guard let object = try anyObject(in: context, where: { !$0.toOneRelationships.isEmpty }),
              let relationship = pick(object.entity.toOneRelationships) else { return }
        let destination = chance(0.15) ? nil : pick(try candidates(for: relationship, in: context))
        try object.setValue(destination, forKey: relationship.name)
    }

    /// Adds a random candidate to, or removes a random member from, a random to-many
    /// relationship of a random object.
    mutating func changeToMany(in context: ManagedObjectContext) throws {
        guard let object = try anyObject(in: context, where: { !$0.toManyRelationships.isEmpty }),
              let relationship = pick(object.entity.toManyRelationships) else { return }
        if chance(0.7) {
            guard let destination = pick(try candidates(for: relationship, in: context)) else { return }
            try object.add(destination, to: relationship.name)
        } else {
            guard let member = pick(try members(object, relationship.name)) else { return }
            try object.remove(member, from: relationship.name)
        }
    }

    /// Inserts a track at a random position of a playlist, or moves one.
    mutating func changeOrdered(in context: ManagedObjectContext) throws {
        guard let playlist = pick(try objects("Playlist", in: context)) else { return }
        let count = try members(playlist, "tracks").count
        if count > 1 && chance(0.4) {
            try playlist.move(from: int(0...(count - 1)), to: int(0...(count - 1)), in: "tracks")
        } else if let track = pick(try objects("Track", in: context)) {
            try playlist.insert(track, at: int(0...count), in: "tracks")
        }
    }

    /// Deletes a random object (its delete rules run when changes are processed).
    mutating func delete(in context: ManagedObjectContext) throws {
        guard let object = try anyObject(in: context) else { return }
        context.delete(object)
    }

    /// Another context changes or deletes a saved object and saves, behind the run's context
    /// (whose next save may then conflict, or find the object gone).
    mutating func changeElsewhere(container: PersistentContainer, step: Int) throws {
        let other = container.newBackgroundContext()
        let deletes = chance(0.4)
        let outcome: String = try other.performAndWait {
            guard let object = try anyObject(in: other) else { return "nothing" }
            let name = label(of: object)
            if deletes { other.delete(object) } else { try setRandomAttribute(of: object) }
            do {
                try other.save()
                return "\(deletes ? "deleted" : "changed") \(name)"
            } catch {
                return "failed (\(Self.kind(of: error)))"
            }
        }
        record.append("step \(step): elsewhere \(outcome)")
    }

    /// The values an attribute takes in the run: for every type its edges, `nil` for optional
    /// ones, and values the conformance model's rules refuse (age, balance, dates, usernames).
    static func values(for attribute: AttributeDescription, entity: String) -> [Any?] {
        let optional: [Any?] = attribute.isOptional ? [nil] : []
        switch (entity, attribute.name) {
        case ("Student", "age"): return optional + [0, 17, 150, 151, -1]
        case ("Account", "balance"): return [0.0, 12.5, 1_000_000.0, -0.5, 1_000_000.5]
        case ("Account", "openedAt"): return optional + [Date(timeIntervalSince1970: 1_000_000_000), Date(timeIntervalSince1970: 100)]
        case ("Login", "email"): return optional + ["a@example.com", "b@example.com", "c@example.com"]
        default: break
        }
        switch attribute.type {
        case .integer16: return optional + [Int(Int16.min), -1, 0, Int(Int16.max)]
        case .integer32: return optional + [Int(Int32.min), 0, 7, Int(Int32.max)]
        case .integer64: return optional + [Int64.min, 0, Int64.max]
        case .double: return optional + [0.0, -0.0, 1.5, Double.infinity, -Double.infinity, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude, Double.nan]
        case .float: return optional + [Float(0), Float.pi, -Float.infinity, Float.greatestFiniteMagnitude, Float.nan]
        case .decimal:
            return optional + [Decimal(0), Decimal(string: "123456789012345678901234567890.125"), Decimal(string: "-0.000000001")]
        case .string: return optional + ["", "quote ' and \" -- ;", "line\nbreak", "nul \u{0} byte", "\u{E9}", "e\u{301}", "👍🏽"]
        case .boolean: return optional + [true, false]
        case .date:
            return optional + [Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: 1e9 + 0.123456), Date(timeIntervalSinceReferenceDate: -1.5), Date.distantPast, Date.distantFuture]
        case .binaryData: return optional + [Data(), Data([0]), Data((0...255).map { UInt8($0) })]
        case .uuid: return optional + [UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"), UUID(uuidString: "00000000-0000-0000-0000-000000000000")]
        case .uri: return optional + [URL(string: "https://example.com/a?b=c#d"), URL(fileURLWithPath: "/tmp/x y")]
        case .transformable: return optional + [Palette(primary: "red", accents: []), Palette(primary: "", accents: ["a", "b"])]
        }
    }
}
