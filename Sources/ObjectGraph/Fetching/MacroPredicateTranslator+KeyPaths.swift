import Foundation
import OrderedCollections

// Key paths, captured values and quantifiers for `#Predicate` translation.

extension MacroPredicateTranslator {
    // MARK: Key paths

    /// One key-path step from `root`: a model property read by probing (see ``KeyPathProbe``),
    /// `objectID`, or `count` / `isEmpty` of a to-many relationship or a `filter` result.
    mutating func keyPath<Root, Value>(from root: MacroTerm, _ keyPath: KeyPath<Root, Value>) throws -> MacroTerm {
        let property = (Root.self as? any MacroCollectionKeyPaths.Type)?.collectionProperty(keyPath)
        switch root {
        case .path(let path):
            if case .toMany = path.kind, let property {
                let count = MacroTerm.path(MacroPath(components: path.components + ["@count"], kind: .count, scope: path.scope))
                return property == .count ? count : .predicate(try compare(count, .equal, .constant(.integer(0)), what: "isEmpty"))
            }
            if case .attribute(let attribute) = path.kind, attribute.type == .string, let property {
                // `$0.name.isEmpty` is `name == ""`; a string's length has no fetch equivalent.
                guard property == .isEmpty else { throw Self.error("the length of a string (\(path.text).count)") }
                return .predicate(try compare(.path(path), .equal, .constant(.string("")), what: "isEmpty"))
            }
            guard let entity = path.objectEntity else { break }
            return .path(try probeStep(from: path, entity: entity, keyPath))
        case .coalesced(let path, let fallback):
            // `($0.nickname ?? "").isEmpty`: the comparison `?? ""` then `== ""` would make.
            guard case .attribute(let attribute) = path.kind, attribute.type == .string, let property else { break }
            guard property == .isEmpty else { throw Self.error("the length of a string (\(path.text) ?? …).count") }
            return .predicate(try compare(.coalesced(path, fallback), .equal, .constant(.string("")), what: "isEmpty"))
        case .filtered(let collection, let predicate):
            guard let property else { break }
            let count = MacroTerm.operand(.subqueryCount(collection: collection.text, variable: Self.subqueryVariable, predicate: predicate), scope: collection.scope)
            return property == .count ? count : .predicate(try compare(count, .equal, .constant(.integer(0)), what: "isEmpty"))
        default: break
        }
        throw Self.error("\(Self.describe(keyPath, from: root)) (only @Attribute and @Relationship properties, objectID, and count or isEmpty of to-many relationships are stored)")
    }

    private func probeStep<Root, Value>(from path: MacroPath, entity: EntityDescription, _ keyPath: KeyPath<Root, Value>) throws -> MacroPath {
        let root = MacroTerm.path(path)
        let prototype = probe.prototype(of: entity)
        guard let typed = prototype as? Root else {
            throw Self.error("\(Self.describe(keyPath, from: root)) on entity \(entity.name), whose objects are \(type(of: prototype)), not \(Root.self),")
        }
        func refuse(_ detail: String) -> ObjectGraphError {
            Self.error("\(Self.describe(keyPath, from: root)) on entity \(entity.name) (\(detail); only @Attribute and @Relationship properties and objectID are stored)")
        }
        guard KeyPathProbe.canStandIn(for: Value.self, in: model) else {
            throw refuse("no \(Value.self) can stand in for its value while the key path is found: give the attribute a default value, make the property optional, or make \(Value.self) CaseIterable")
        }
        var result: MacroPath?
        for (value, accesses) in probe.read(keyPath, from: typed) {
            let step = try interpret(accesses, from: path, prototype: prototype, refuse: refuse)
            if let previous = result, previous.components != step.components { throw refuse("it reads different properties each time") }
            result = step
            // The value must be the last property's own, not something computed from it.
            let unwrapped = Self.unwrap(value)
            let reads = Self.name(of: accesses.last?.property)
            switch step.kind {
            case .attribute:
                guard Self.storedForm(value) == accesses.last?.placeholder else { throw refuse("it computes a value from \(reads)") }
            case .toOne:
                guard let object = unwrapped as? ManagedObject, object === accesses.last?.destination else { throw refuse("it computes a value from \(reads)") }
            case .toMany:
                guard let members = unwrapped as? any RelationshipValue, members.relationshipObjects.isEmpty else { throw refuse("it computes a value from \(reads)") }
            case .objectID:
                guard let id = unwrapped as? ObjectID, id == prototype.objectID else { throw refuse("it is not a model property") }
            default: break
            }
        }
        guard let result else { throw refuse("it could not be read") }
        return result
    }

    /// The path a probe's reads spell: each read must continue the chain, on the prototype
    /// first, then on the destination prototype the previous to-one relationship handed out.
    private func interpret(
        _ accesses: [KeyPathProbe.Access], from path: MacroPath, prototype: ManagedObject, refuse: (String) -> ObjectGraphError
    ) throws -> MacroPath {
        var result = path
        guard !accesses.isEmpty else {
            result.kind = .objectID
            return result
        }
        var expected: ObjectIdentifier? = ObjectIdentifier(prototype)
        for access in accesses {
            guard access.object == expected else {
                throw refuse("it reads \(accesses.map { Self.name(of: $0.property) }.joined(separator: ", "))")
            }
            expected = nil
            switch access.property {
            case .attribute(let attribute):
                result.components.append(attribute.name)
                result.kind = .attribute(attribute)
            case .relationship(let relationship):
                result.components.append(relationship.name)
                let destination = model.destinationEntity(of: relationship)
                result.kind = relationship.isToMany ? .toMany(relationship, destination) : .toOne(relationship, destination)
                expected = access.destination.map(ObjectIdentifier.init)
            }
        }
        return result
    }

    /// The key path as a message can name it, with the key path it continues. Swift prints a
    /// computed property (a class's own, and every `@Attribute` and `@Relationship`) as
    /// `\Root.<computed 0x… (Value)>`, an address that tells the reader nothing.
    static func describe<Root, Value>(_ keyPath: KeyPath<Root, Value>, from root: MacroTerm) -> String {
        let text = "\(keyPath)"
        let what = text.contains("<computed") ? "the key path to a computed \(Value.self) property of \(Root.self)" : "the key path \(text)"
        switch root {
        case .path(let path) where !path.components.isEmpty: return "\(what) read from '\(path.text)'"
        case .coalesced(let path, _): return "\(what) read from '\(path.text) ?? …'"
        default: return what
        }
    }

    private static func name(of property: EntityDescription.Property?) -> String {
        switch property {
        case .attribute(let attribute)?: return attribute.name
        case .relationship(let relationship)?: return relationship.name
        case nil: return "nothing"
        }
    }

    // MARK: Captured values

    /// A Swift value as a term: its stored form, an object ID, a list or a range.
    static func constant(_ value: Any) -> MacroTerm {
        if let optional = value as? any MacroOptional {
            guard let wrapped = optional.macroWrapped else { return .constant(.null) }
            return constant(wrapped)
        }
        if let id = value as? ObjectID { return .object(id) }
        if let stored = storedForm(value) { return .constant(stored) }
        if let range = value as? any MacroRangeValue {
            let (lower, upper, closed) = range.macroBounds
            if let low = storedForm(lower), let high = storedForm(upper) { return .range(lower: low, upper: high, closed: closed) }
        } else if let sequence = value as? any Sequence {
            var items: [PredicateOperand] = []
            for element in elements(of: sequence) {
                switch constant(element) {
                case .constant(let v): items.append(.constant(v))
                case .object(let id): items.append(.object(id))
                default: return .opaque(String(describing: type(of: value)))
                }
            }
            return .list(items)
        }
        return .opaque(String(describing: type(of: value)))
    }

    private static func elements(of sequence: some Sequence) -> [Any] { sequence.map { $0 as Any } }

    /// The value in stored form, optionals unwrapped; `nil` for a type with none.
    static func storedForm(_ value: Any) -> AttributeValue? {
        if let optional = value as? any MacroOptional {
            guard let wrapped = optional.macroWrapped else { return .null }
            return storedForm(wrapped)
        }
        if let convertible = value as? any AttributeValueConvertible { return convertible.attributeValue }
        if let integer = value as? any BinaryInteger { return Int64(exactly: integer).map { .integer($0) } }
        if let real = value as? any BinaryFloatingPoint { return .double(Double(real)) }
        return nil
    }

    /// The value with every level of optional removed (`nil` stays an optional holding nothing).
    static func unwrap(_ value: Any) -> Any? {
        if let optional = value as? any MacroOptional { return optional.macroWrapped.flatMap(unwrap) }
        return value
    }

    // MARK: Quantifiers

    /// The variable name of the SUBQUERYs made here (`SUBQUERY(chats, $x, …)`).
    static let subqueryVariable = "x"

    /// `collection.contains(where: test)` with `test` translated for a member.
    func anyMember(of collection: MacroPath, _ test: FetchPredicate) throws -> FetchPredicate {
        if let lifted = Self.lift(test, into: collection, modifier: .any) { return lifted }
        return .comparison(PredicateComparison(
            .subqueryCount(collection: collection.text, variable: Self.subqueryVariable, predicate: test), .greaterThan, .constant(.integer(0))))
    }

    /// `collection.allSatisfy(test)` with `test` translated for a member.
    func allMembers(of collection: MacroPath, _ test: FetchPredicate) throws -> FetchPredicate {
        if let lifted = Self.lift(test, into: collection, modifier: .all) { return lifted }
        return .comparison(PredicateComparison(
            .subqueryCount(collection: collection.text, variable: Self.subqueryVariable, predicate: .not(test)), .equal, .constant(.integer(0))))
    }

    /// A member test that is one comparison of the member's own property (or of the member
    /// itself) with constants, as `ANY collection.property op value` / `ALL …`; `nil` when
    /// the test needs a SUBQUERY to keep its meaning (several properties, a to-one step that
    /// may be empty, a quantifier of another kind inside).
    private static func lift(_ test: FetchPredicate, into collection: MacroPath, modifier: ComparisonModifier) -> FetchPredicate? {
        guard case .comparison(var c) = test else { return nil }
        switch c.right {
        case .constant, .object: break
        case .list(let items) where items.allSatisfy({ if case .constant = $0 { return true } else if case .object = $0 { return true } else { return false } }): break
        default: return nil
        }
        switch c.left {
        case .evaluatedObject where c.modifier == .direct:
            c.left = .keyPath(collection.text)
        case .keyPath(let path) where (c.modifier == .direct && !path.contains(".")) || c.modifier == modifier:
            c.left = .keyPath(collection.text + "." + path)
        default:
            return nil
        }
        c.modifier = modifier
        return .comparison(c)
    }
}

// MARK: Type helpers

/// Any `Optional`, seen without knowing its `Wrapped`.
protocol MacroOptional {
    var macroWrapped: Any? { get }
}

extension Optional: MacroOptional {
    var macroWrapped: Any? { map { $0 as Any } }
}

/// `ClosedRange` and `Range`, seen without knowing their `Bound`.
protocol MacroRangeValue {
    var macroBounds: (lower: Any, upper: Any, closed: Bool) { get }
}

extension ClosedRange: MacroRangeValue {
    var macroBounds: (lower: Any, upper: Any, closed: Bool) { (lowerBound, upperBound, true) }
}

extension Range: MacroRangeValue {
    var macroBounds: (lower: Any, upper: Any, closed: Bool) { (lowerBound, upperBound, false) }
}

enum MacroCollectionProperty { case count, isEmpty }

/// The collections a to-many relationship (or a `filter` of one) is declared as, and
/// `String`: recognises their `count` and `isEmpty` key paths by equality.
protocol MacroCollectionKeyPaths {
    static func collectionProperty(_ keyPath: AnyKeyPath) -> MacroCollectionProperty?
}

extension Set: MacroCollectionKeyPaths {
    static func collectionProperty(_ keyPath: AnyKeyPath) -> MacroCollectionProperty? {
        keyPath == \Set<Element>.count ? .count : keyPath == \Set<Element>.isEmpty ? .isEmpty : nil
    }
}

extension Array: MacroCollectionKeyPaths {
    static func collectionProperty(_ keyPath: AnyKeyPath) -> MacroCollectionProperty? {
        keyPath == \[Element].count ? .count : keyPath == \[Element].isEmpty ? .isEmpty : nil
    }
}

extension String: MacroCollectionKeyPaths {
    static func collectionProperty(_ keyPath: AnyKeyPath) -> MacroCollectionProperty? {
        keyPath == \String.count ? .count : keyPath == \String.isEmpty ? .isEmpty : nil
    }
}

extension OrderedSet: MacroCollectionKeyPaths {
    static func collectionProperty(_ keyPath: AnyKeyPath) -> MacroCollectionProperty? {
        keyPath == \OrderedSet<Element>.count ? .count : keyPath == \OrderedSet<Element>.isEmpty ? .isEmpty : nil
    }
}
