import Foundation

/// A key path resolved against an entity once, so evaluation never looks names up.
public struct ResolvedKeyPath: Sendable {
    /// What the key path ends in.
    public enum Terminal: Sendable {
        /// An attribute's value.
        case attribute(AttributeDescription)
        /// A relationship's destination(s).
        case relationship(RelationshipDescription)
        /// The number of members of the last (to-many) step: `members.@count`.
        case count
        /// An aggregate over an attribute of the last (to-many) step's members:
        /// `scores.@sum.points`, `@avg`, `@min`, `@max`.
        case aggregate(AggregateFunction, AttributeDescription)
    }

    /// The key path as written.
    public let path: String
    /// The relationships walked before the terminal.
    public let steps: [RelationshipDescription]
    /// What the key path ends in.
    public let terminal: Terminal

    /// Whether evaluating the key path may yield many values (it walks a to-many, or ends in one).
    public var yieldsMany: Bool {
        switch terminal {
        case .count, .aggregate: return steps.dropLast().contains(where: \.isToMany)
        default: break
        }
        if case .relationship(let r) = terminal, r.isToMany { return true }
        return steps.contains(where: \.isToMany)
    }

    /// The terminal attribute's type, if the key path ends in an attribute.
    public var attributeType: AttributeType? {
        if case .attribute(let a) = terminal { return a.type }
        if case .count = terminal { return .integer64 }
        if case .aggregate(let function, let attribute) = terminal {
            // A mean, and a sum of dates (reference-date seconds added up, as
            // `AggregateFunction.apply` and dictionary sums give it), are doubles: typed as a
            // date, `@sum.sentAt` was refused against numbers and never held against a date.
            return function == .average || (function == .sum && attribute.type == .date) ? .double : attribute.type
        }
        return nil
    }

    /// Resolves `path` from `entity`; throws ``ObjectGraphError/Code/invalidFetch`` naming the
    /// entity and the component that does not exist.
    public static func resolve(_ path: String, from entity: EntityDescription, in model: ManagedObjectModel) throws -> ResolvedKeyPath {
        // A plain property name, the common case, needs no splitting (every fetch of
        // `chat == X` resolves "chat"; splitting cost more than the lookup). Its bytes are
        // scanned as a buffer: `utf8.contains` went through the view's iterator witnesses, two
        // fifths of resolving "chat" (perf).
        var bytes = path
        let isPlainName = bytes.withUTF8 { utf8 in
            utf8.first.map { $0 != UInt8(ascii: "@") } == true && !utf8.contains(UInt8(ascii: "."))
        }
        if isPlainName {
            switch entity.property(named: path) {
            case .attribute(let attribute)?:
                if attribute.isTransient { throw transient(path, on: entity, in: path) }
                return ResolvedKeyPath(path: path, steps: [], terminal: .attribute(attribute))
            case .relationship(let relationship)?:
                if relationship.isTransient { throw transient(path, on: entity, in: path) }
                return ResolvedKeyPath(path: path, steps: [], terminal: .relationship(relationship))
            case nil: throw noProperty(path, on: entity, in: path, from: entity)
            }
        }
        let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !components.isEmpty, !components.contains(where: \.isEmpty) else {
            throw ObjectGraphError(.invalidFetch, key: path, "'\(path)' is not a key path")
        }
        var current = entity
        var steps: [RelationshipDescription] = []
        for (index, component) in components.enumerated() {
            let isLast = index == components.count - 1
            if component == "@count" {
                guard isLast, let last = steps.last, last.isToMany else {
                    throw ObjectGraphError(.invalidFetch, key: path, "@count must follow a to-many relationship in '\(path)'")
                }
                return ResolvedKeyPath(path: path, steps: steps, terminal: .count)
            }
            if let function = AggregateFunction(rawValue: component) {
                guard let last = steps.last, last.isToMany, index == components.count - 2,
                      let attribute = current.attribute(named: components[index + 1]) else {
                    throw ObjectGraphError(
                        .invalidFetch, key: path,
                        "\(component) must follow a to-many relationship and precede one of its destination's attributes in '\(path)'")
                }
                guard attribute.type.isNumeric || attribute.type == .date || function == .minimum || function == .maximum else {
                    throw ObjectGraphError(.invalidFetch, key: path, "\(component) needs a numeric attribute; \(current.name).\(attribute.name) is \(attribute.type.rawValue)")
                }
                return ResolvedKeyPath(path: path, steps: steps, terminal: .aggregate(function, attribute))
            }
            guard let property = current.property(named: component) else {
                throw noProperty(component, on: current, in: path, from: entity)
            }
            if property.isTransient { throw transient(component, on: current, in: path) }
            switch property {
            case .attribute(let attribute):
                guard isLast else {
                    throw ObjectGraphError(
                        .invalidFetch, key: path,
                        "\(current.name).\(component) is an attribute; key path '\(path)' cannot continue past it")
                }
                return ResolvedKeyPath(path: path, steps: steps, terminal: .attribute(attribute))
            case .relationship(let relationship):
                if isLast { return ResolvedKeyPath(path: path, steps: steps, terminal: .relationship(relationship)) }
                steps.append(relationship)
                current = try destination(of: relationship, in: model, path: path)
            }
        }
        fatalError("unreachable: a non-empty key path ends in its last component")
    }
}

extension ResolvedKeyPath {
    /// `relationship`'s destination in `model`, or an error when `model` does not hold it: an
    /// entity given with another model (the public `compile` functions take both) must not
    /// reach the model's invariant check, which stops the process.
    static func destination(of relationship: RelationshipDescription, in model: ManagedObjectModel, path: String) throws -> EntityDescription {
        guard let destination = model.entity(named: relationship.destinationName) else {
            throw ObjectGraphError(
                .invalidFetch, key: path,
                "'\(path)' reaches \(relationship.destinationName) through \(relationship.name), which the model given does not hold (an entity of another model?)")
        }
        return destination
    }
}

/// The aggregate functions of key paths (`@sum`, `@avg`, `@min`, `@max`; `@count` is a
/// terminal of its own).
public enum AggregateFunction: String, Sendable, Hashable, CaseIterable {
    /// The sum; 0 for no members. Integers sum to an integer, decimals to a decimal.
    case sum = "@sum"
    /// The mean as a double; nil for no members.
    case average = "@avg"
    /// The smallest value; nil for no members.
    case minimum = "@min"
    /// The largest value; nil for no members.
    case maximum = "@max"

    /// Applies the function to `values`, skipping nils (as SQL does).
    public func apply(_ values: [AttributeValue]) -> AttributeValue {
        let present = values.filter { !$0.isNull }
        switch self {
        // In a sort's order, where NaN comes after every number (comparisons alone leave it
        // unordered, which made the answer depend on where it stood).
        case .minimum:
            return present.min { CompiledSort.compare($0, $1, .natural) == .orderedAscending } ?? .null
        case .maximum:
            return present.max { CompiledSort.compare($0, $1, .natural) == .orderedAscending } ?? .null
        case .sum:
            if present.allSatisfy({ if case .integer = $0 { return true } else { return false } }) {
                var total: Int64 = 0
                var overflow = false
                for case .integer(let v) in present {
                    let (next, didOverflow) = total.addingReportingOverflow(v)
                    total = next
                    overflow = overflow || didOverflow
                }
                if !overflow { return .integer(total) }
            }
            // (A Decimal sum only when every Double in it converts: Foundation's conversion
            // traps on an infinity.)
            if present.contains(where: { if case .decimal = $0 { return true } else { return false } }),
               present.allSatisfy({ if case .double(let v) = $0 { return v.isFinite && abs(v) < 1e160 } else { return true } }) {
                var total = Decimal(0)
                for value in Self.ascending(present) {
                    switch value {
                    case .decimal(let v): total += v
                    case .integer(let v): total += Decimal(v)
                    case .double(let v): total += Decimal(v)
                    default: break
                    }
                }
                return .decimal(total)
            }
            return .double(Self.floatingSum(present))
        case .average:
            guard !present.isEmpty else { return .null }
            return .double(Self.floatingSum(present) / Double(present.count))
        }
    }

    /// The values' sum in floating point, added in ascending order. Floating-point addition is
    /// not associative, and members come in whatever order their store or context keeps them
    /// (key order, list order, the order they joined): added as they came, the same three
    /// values summed to 0 or to 1 (1e16 + 1 rounds back to 1e16), so an unsaved chat and the
    /// same chat saved answered `@sum` differently (conformance scenario
    /// `fetch.predicates.floatingSumsIgnoreMemberOrder`). (The total order puts NaN last; any
    /// NaN makes the sum NaN in every order.)
    static func floatingSum(_ values: [AttributeValue]) -> Double {
        values.compactMap(double).sorted { !$1.isTotallyOrdered(belowOrEqualTo: $0) }.reduce(0, +)
    }

    /// `values` in a sort's ascending order: a decimal sum rounds once it passes 38 digits,
    /// and must not depend on the members' order either.
    private static func ascending(_ values: [AttributeValue]) -> [AttributeValue] {
        values.sorted { CompiledSort.compare($0, $1, .natural) == .orderedAscending }
    }

    static func double(_ value: AttributeValue) -> Double? {
        switch value {
        case .integer(let v): return Double(v)
        case .double(let v): return v
        case .decimal(let v): return NSDecimalNumber(decimal: v).doubleValue
        case .date(let d): return d.timeIntervalSinceReferenceDate
        default: return nil
        }
    }
}

extension ResolvedKeyPath {
    /// Transients are never stored, so a store could only compare their nil; Core Data's SQLite
    /// store refuses them too, while its in-memory store would answer from live objects.
    private static func transient(_ component: String, on current: EntityDescription, in path: String) -> ObjectGraphError {
        ObjectGraphError(
            .invalidFetch, key: path,
            "\(current.name).\(component) is transient (in key path '\(path)'): fetches, sorts and groupings read stored values only; filter or sort the fetched objects in memory instead")
    }

    private static func noProperty(_ component: String, on current: EntityDescription, in path: String, from entity: EntityDescription) -> ObjectGraphError {
        ObjectGraphError(
            .invalidFetch, key: path,
            "entity \(current.name) has no property '\(component)' (in key path '\(path)' from \(entity.name))")
    }
}
