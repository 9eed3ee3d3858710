import ObjectGraph

/// What the SQL of a fetch depends on — its entity, result type, range flags, sort keys and
/// its predicate's structure with each constant reduced to its *class* — together with the
/// constants themselves (the *leaves*), in one walk of the request.
///
/// Two requests of one shape compile to the same SQL text with bindings taken from the same
/// leaves (see ``SQLiteQueryCompiler/BindingSource``), so the store compiles each shape once
/// and afterwards only walks the request (``SQLiteStore/queryCache``): building the SQL was
/// half of counting one chat's messages (`count(for:)` of `chat == X`, perf).
///
/// The class of a leaf is everything the compiler branches on: a constant's case (`NULL`
/// compiles to `IS NULL`, a decimal compiles through `og_decimal`, a string operator needs a string), an
/// object ID's namespace (its entity and store: an ID of another store or of an entity outside
/// the relationship's hierarchy compiles to `0`) and whether it has a primary key. A class
/// finer than needed only makes more entries; one coarser would reuse SQL wrongly, so every
/// branch of ``SQLiteQueryCompiler`` on a value must be on something recorded here.
struct SQLiteQueryShape: Hashable {
    /// One word of the shape.
    enum Token: Hashable {
        case int(Int)
        case name(String)
        case namespace(ObjectID.Namespace)
    }

    /// A constant of the request, in the order of ``leaves``.
    enum Leaf {
        case value(AttributeValue)
        case object(ObjectID)
    }

    private(set) var tokens: [Token] = []
    /// The request's constants, depth first, left operand before right: the order
    /// ``SQLiteQueryCompiler`` numbers them in (see ``leafCount(_:)``). Not part of the shape.
    private(set) var leaves: [Leaf] = []

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.tokens == rhs.tokens }
    func hash(into hasher: inout Hasher) { hasher.combine(tokens) }

    /// The shape of `request` (which is not a grouping) and its leaves. (The request is
    /// borrowed here and in ``bindings(_:request:)``: taken as owned, it was copied for the
    /// call, five retains and releases per fetch, uprobe count.)
    init(_ request: borrowing StoreFetchRequest) {
        tokens.reserveCapacity(16 + request.sortKeys.count * 3)
        tokens.append(.name(request.entity.name))
        let resultType: Int
        switch request.resultType {
        case .objectIDs: resultType = 0
        case .snapshots: resultType = 1
        case .count: resultType = 2
        case .groups: resultType = 3
        }
        tokens.append(.int(resultType << 3 | (request.includesSubentities ? 4 : 0) | (request.limit != nil ? 2 : 0) | (request.offset > 0 ? 1 : 0)))
        tokens.append(.int(request.sortKeys.count))
        for key in request.sortKeys {
            tokens.append(.name(key.keyPath))
            let comparison: Int
            switch key.comparison {
            case .natural: comparison = 0
            case .caseInsensitive: comparison = 1
            case .localizedStandard: comparison = 2
            }
            tokens.append(.int(comparison << 1 | (key.ascending ? 1 : 0)))
        }
        if let predicate = request.predicate {
            add(predicate)
        } else {
            tokens.append(.int(-1))
        }
    }

    private mutating func add(_ predicate: FetchPredicate) {
        switch predicate {
        case .constant(let value):
            tokens.append(.int(value ? 1 : 0))
        case .and(let parts):
            tokens.append(.int(2))
            tokens.append(.int(parts.count))
            for part in parts { add(part) }
        case .or(let parts):
            tokens.append(.int(3))
            tokens.append(.int(parts.count))
            for part in parts { add(part) }
        case .not(let inner):
            tokens.append(.int(4))
            add(inner)
        case .comparison(let c):
            let op = ComparisonOperator.allCases.firstIndex(of: c.op) ?? -1
            let modifier: Int
            switch c.modifier {
            case .direct: modifier = 0
            case .any: modifier = 1
            case .all: modifier = 2
            case .none: modifier = 3
            }
            tokens.append(.int(5))
            tokens.append(.int(op))
            tokens.append(.int(modifier))
            tokens.append(.int(c.options.rawValue))
            add(c.left)
            add(c.right)
        }
    }

    private mutating func add(_ operand: PredicateOperand) {
        switch operand {
        case .keyPath(let path):
            tokens.append(.int(10))
            tokens.append(.name(path))
        case .constant(let value):
            tokens.append(.int(11 << 8 | Self.valueClass(value)))
            leaves.append(.value(value))
        case .object(let id):
            tokens.append(.int(12 << 8 | (id.primaryKey != nil ? 1 : 0)))
            tokens.append(.namespace(id.namespace))
            leaves.append(.object(id))
        case .list(let items):
            tokens.append(.int(13))
            tokens.append(.int(items.count))
            for item in items { add(item) }
        case .variable(let name):
            tokens.append(.int(14))
            tokens.append(.name(name))
        case .evaluatedObject:
            tokens.append(.int(15))
        case .subqueryCount(let collection, let variable, let predicate):
            tokens.append(.int(16))
            tokens.append(.name(collection))
            tokens.append(.name(variable))
            add(predicate)
        }
    }

    /// A constant's case: all the compiler tells constants apart by.
    private static func valueClass(_ value: AttributeValue) -> Int {
        switch value {
        case .null: 0
        case .integer: 1
        // NaN (a number or a date's), which SQLite binds as NULL, is not compiled: a class
        // of its own.
        case .double(let d): d.isNaN ? 10 : 2
        case .decimal: 3
        case .string: 4
        case .bool: 5
        case .date(let d): d.timeIntervalSinceReferenceDate.isNaN ? 10 : 6
        case .data: 7
        case .uuid: 8
        case .uri: 9
        }
    }

    /// How many leaves `operand` holds, in the order ``init(_:)`` lists them.
    static func leafCount(_ operand: PredicateOperand) -> Int {
        switch operand {
        case .constant, .object: 1
        case .list(let items): items.reduce(0) { $0 + leafCount($1) }
        case .subqueryCount(_, _, let predicate): leafCount(predicate)
        case .keyPath, .variable, .evaluatedObject: 0
        }
    }

    /// How many leaves `predicate` holds.
    static func leafCount(_ predicate: FetchPredicate) -> Int {
        switch predicate {
        case .constant: 0
        case .and(let parts), .or(let parts): parts.reduce(0) { $0 + leafCount($1) }
        case .not(let inner): leafCount(inner)
        case .comparison(let c): leafCount(c.left) + leafCount(c.right)
        }
    }

    /// The values to bind for `recipe` (from a request of this shape), `nil` if a source does
    /// not fit its leaf — which the shape rules out; the caller then compiles afresh.
    func bindings(_ recipe: [SQLiteQueryCompiler.BindingSource], request: borrowing StoreFetchRequest) -> [AttributeValue]? {
        var values: [AttributeValue] = []
        values.reserveCapacity(recipe.count)
        for source in recipe {
            switch source {
            case .literal(let value):
                values.append(value)
            case .limit:
                values.append(.integer(Int64(request.limit ?? -1)))
            case .offset:
                values.append(.integer(Int64(request.offset)))
            case .leaf(let index):
                guard leaves.indices.contains(index), case .value(let value) = leaves[index] else { return nil }
                values.append(value)
            case .leafKey(let index):
                guard leaves.indices.contains(index), case .object(let id) = leaves[index], let key = id.primaryKey else { return nil }
                values.append(.integer(key))
            case .leafEntity(let index):
                guard leaves.indices.contains(index), case .object(let id) = leaves[index] else { return nil }
                values.append(.string(id.entityName))
            }
        }
        return values
    }
}
