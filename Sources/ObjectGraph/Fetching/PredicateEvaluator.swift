import Foundation

/// Where the evaluator reads rows from: stored rows inside an atomic store, row snapshots in
/// the coordinator, or live objects in a context (for unsaved changes).
///
/// Implementations are used on one thread for the duration of one evaluation.
public protocol PredicateRowSource {
    /// A row handle.
    associatedtype Row
    /// The row's ID.
    func objectID(of row: Row) -> ObjectID
    /// An attribute's value.
    func attribute(_ attribute: AttributeDescription, of row: Row) throws -> AttributeValue
    /// A to-one relationship's destination row, or `nil`.
    func toOne(_ relationship: RelationshipDescription, of row: Row) throws -> Row?
    /// A to-one relationship's destination ID without loading the row.
    func toOneID(_ relationship: RelationshipDescription, of row: Row) throws -> ObjectID?
    /// A to-many relationship's member rows.
    func toMany(_ relationship: RelationshipDescription, of row: Row) throws -> [Row]
    /// How many members a to-many relationship has (for `@count`).
    func toManyCount(_ relationship: RelationshipDescription, of row: Row) throws -> Int
}

extension PredicateRowSource {
    /// Counts the member rows; a source that can count without loading them provides its own.
    public func toManyCount(_ relationship: RelationshipDescription, of row: Row) throws -> Int {
        try toMany(relationship, of: row).count
    }
}

extension PredicateRowSource where Row == RowSnapshot {
    /// The snapshot's ID.
    public func objectID(of row: RowSnapshot) -> ObjectID { row.objectID }

    /// The snapshot's value in the attribute's slot.
    public func attribute(_ attribute: AttributeDescription, of row: RowSnapshot) throws -> AttributeValue {
        row.attributes[attribute.slot]
    }

    /// The snapshot's destination in the to-one's slot.
    public func toOneID(_ relationship: RelationshipDescription, of row: RowSnapshot) throws -> ObjectID? {
        row.toOne[relationship.slot]
    }
}

/// The reference semantics of predicates: every store's answer must equal this one's.
///
/// - `== nil` matches a missing value; ordering comparisons with `nil` are false; `!= nil`
///   matches a present one.
/// - Numbers compare across integer, floating and decimal kinds.
/// - `[c]`/`[d]` fold both sides with ``TextFolding``.
/// - `ANY` holds if a value satisfies the comparison, `ALL` if every one does (true for
///   none), `NONE` if none does.
public struct PredicateEvaluator<Source: PredicateRowSource> {
    /// The row source.
    public let source: Source

    /// Creates an evaluator reading rows from `source`.
    public init(source: Source) { self.source = source }

    /// Whether `row` satisfies `predicate`.
    public func evaluate(_ predicate: CompiledPredicate, on row: Source.Row) throws -> Bool {
        switch predicate {
        case .constant(let value): return value
        case .and(let parts):
            for part in parts where try !evaluate(part, on: row) { return false }
            return true
        case .or(let parts):
            for part in parts where try evaluate(part, on: row) { return true }
            return false
        case .not(let inner): return try !evaluate(inner, on: row)
        case .comparison(let comparison): return try evaluate(comparison, on: row)
        }
    }

    enum Value {
        case attribute(AttributeValue)
        case object(ObjectID?)
    }

    private func evaluate(_ c: CompiledComparison, on row: Source.Row) throws -> Bool {
        // Membership: `relationship CONTAINS object`.
        if c.op == .contains, case .keyPath(let path) = c.left, case .relationship(let r) = path.terminal, r.isToMany {
            let members = try values(of: path, from: row)
            let target = try single(c.right, row: row)
            return members.contains { Self.equal($0, target, []) }
        }
        let rightValue: [Value]
        switch c.right {
        case .list(let items): rightValue = try items.map { try single($0, row: row) }
        case .keyPath(let path) where path.yieldsMany: rightValue = try values(of: path, from: row)
        default: rightValue = [try single(c.right, row: row)]
        }
        let leftValues: [Value]
        if case .keyPath(let path) = c.left, path.yieldsMany {
            leftValues = try values(of: path, from: row)
            switch c.modifier {
            case .any, .direct:
                return try leftValues.contains { try compare($0, c, rightValue) }
            case .all:
                return try leftValues.allSatisfy { try compare($0, c, rightValue) }
            case .none:
                return try !leftValues.contains { try compare($0, c, rightValue) }
            }
        }
        leftValues = [try single(c.left, row: row)]
        return try compare(leftValues[0], c, rightValue)
    }

    private func compare(_ left: Value, _ c: CompiledComparison, _ right: [Value]) throws -> Bool {
        // (Compiling refuses an empty list for every operator but IN; this keeps any other way
        // of reaching one from reading past the end.)
        guard !right.isEmpty || c.op == .in else { return false }
        switch c.op {
        case .equal: return Self.equal(left, right[0], c.options)
        case .notEqual: return !Self.equal(left, right[0], c.options)
        case .lessThan: return Self.order(left, right[0], c.options).map { $0 == .orderedAscending } ?? false
        case .lessThanOrEqual: return Self.order(left, right[0], c.options).map { $0 != .orderedDescending } ?? false
        case .greaterThan: return Self.order(left, right[0], c.options).map { $0 == .orderedDescending } ?? false
        case .greaterThanOrEqual: return Self.order(left, right[0], c.options).map { $0 != .orderedAscending } ?? false
        case .in:
            if c.isSubstringTest {
                // `left IN 'text'`: whether left occurs in the text (nil on either side: no).
                guard case .attribute(.string(let part)) = left, case .attribute(.string(let text))? = right.first else { return false }
                return StringOperators.evaluate(.contains, c.options, text, part)
            }
            return right.contains { Self.equal(left, $0, c.options) }
        case .between:
            guard right.count == 2 else {
                throw ObjectGraphError(.invalidFetch, "BETWEEN needs exactly two bounds, got \(right.count)")
            }
            guard let low = Self.order(left, right[0], c.options), let high = Self.order(left, right[1], c.options) else { return false }
            return low != .orderedAscending && high != .orderedDescending
        case .beginsWith, .endsWith, .contains, .like, .matches:
            guard case .attribute(.string(let l)) = left, case .attribute(.string(let r)) = right[0] else { return false }
            return StringOperators.evaluate(c.op, c.options, l, r)
        }
    }

    static func equal(_ a: Value, _ b: Value, _ options: StringComparisonOptions) -> Bool {
        switch (a, b) {
        case (.object(let x), .object(let y)): return x == y
        case (.object(let x), .attribute(let v)), (.attribute(let v), .object(let x)): return x == nil && v.isNull
        case (.attribute(.string(let x)), .attribute(.string(let y))) where !options.isEmpty:
            return TextFolding.fold(x, options) == TextFolding.fold(y, options)
        case (.attribute(let x), .attribute(let y)): return AttributeValue.predicateEqual(x, y)
        }
    }

    static func order(_ a: Value, _ b: Value, _ options: StringComparisonOptions) -> ComparisonResult? {
        guard case .attribute(let x) = a, case .attribute(let y) = b else { return nil }
        if case .string(let s) = x, case .string(let t) = y, !options.isEmpty {
            return AttributeValue.compare(.string(TextFolding.fold(s, options)), .string(TextFolding.fold(t, options)))
        }
        return AttributeValue.compare(x, y)
    }

    private func single(_ operand: CompiledOperand, row: Source.Row) throws -> Value {
        switch operand {
        case .constant(let v): return .attribute(v)
        case .object(let id): return .object(id)
        case .evaluatedObject: return .object(source.objectID(of: row))
        case .list: throw ObjectGraphError(.invalidFetch, "a list cannot be used here")
        case .subqueryCount(let path, let inner):
            var count = 0
            for member in try rows(of: path, from: row) where try evaluate(inner, on: member) { count += 1 }
            return .attribute(.integer(Int64(count)))
        case .keyPath(let path): return try values(of: path, from: row).first ?? .attribute(.null)
        }
    }

    /// Every value a key path reaches from `row` (one for to-one paths, `.null` when a to-one
    /// step is empty; none for a path through a to-many step whose collection is empty).
    func values(of path: ResolvedKeyPath, from row: Source.Row) throws -> [Value] {
        var rows: [Source.Row] = [row]
        let walked: ArraySlice<RelationshipDescription>
        switch path.terminal {
        case .count, .aggregate: walked = path.steps.dropLast()
        default: walked = path.steps[...]
        }
        // A key path through a to-many step yields a collection, which an empty to-one step
        // before it leaves empty (so ALL and NONE hold, ANY does not); a key path of to-one
        // steps only yields one value, nil when a step is empty.
        let isCollection = walked.contains(where: \.isToMany)
        for step in walked {
            var next: [Source.Row] = []
            for current in rows {
                if step.isToMany {
                    next.append(contentsOf: try source.toMany(step, of: current))
                } else if let destination = try source.toOne(step, of: current) {
                    next.append(destination)
                }
            }
            rows = next
        }
        var result: [Value] = []
        switch path.terminal {
        case .attribute(let attribute):
            for current in rows { result.append(.attribute(try source.attribute(attribute, of: current))) }
            if rows.isEmpty && !isCollection { result.append(.attribute(.null)) }
        case .relationship(let relationship):
            if relationship.isToMany {
                for current in rows {
                    for member in try source.toMany(relationship, of: current) { result.append(.object(source.objectID(of: member))) }
                }
            } else {
                for current in rows { result.append(.object(try source.toOneID(relationship, of: current))) }
                if rows.isEmpty && !isCollection { result.append(.object(nil)) }
            }
        case .count:
            let relationship = path.steps.last!
            for current in rows { result.append(.attribute(.integer(Int64(try source.toManyCount(relationship, of: current))))) }
            if rows.isEmpty && !isCollection { result.append(.attribute(.null)) }
        case .aggregate(let function, let attribute):
            let relationship = path.steps.last!
            for current in rows {
                let members = try source.toMany(relationship, of: current)
                result.append(.attribute(function.apply(try members.map { try source.attribute(attribute, of: $0) })))
            }
            if rows.isEmpty && !isCollection { result.append(.attribute(.null)) }
        }
        return result
    }

    /// The member rows a to-many key path reaches (through to-one steps).
    func rows(of path: ResolvedKeyPath, from row: Source.Row) throws -> [Source.Row] {
        var current: Source.Row? = row
        for step in path.steps {
            guard let from = current else { return [] }
            current = try source.toOne(step, of: from)
        }
        guard let owner = current, case .relationship(let relationship) = path.terminal else { return [] }
        return try source.toMany(relationship, of: owner)
    }

    /// The value a sort key reads from `row` (a to-one key path; `.null` when a step is empty).
    public func sortValue(_ path: ResolvedKeyPath, of row: Source.Row) throws -> AttributeValue {
        guard case .attribute(let v)? = try values(of: path, from: row).first else { return .null }
        return v
    }
}
