import ObjectGraph

/// Compiles a fetch's predicate and sort keys to SQL with bound parameters — never a value
/// spliced into SQL text. Anything it cannot express exactly as the shared evaluator would
/// answer throws ``Unsupported``, and the store leaves that part to the shared layer.
///
/// Exactness rules: every comparison yields 0 or 1, never NULL, so `NOT` and `ALL` follow
/// two-valued logic like the evaluator. The forms are chosen so SQLite can still use an index:
/// `=` is `IS` (a missing value equals nothing), `!=` is `IS NOT` (a missing value differs from
/// every value), ranges and `IN` are guarded by `IS NOT NULL` (`NULL AND 0` is 0), and only
/// the string functions need `COALESCE`; strings compare through the registered collations and `og_text`
/// (see ``SQLiteFunctions``), `@avg` and floating-point `@sum` through `og_avg`/`og_sum` (see
/// ``SQLiteAggregates``); decimals (stored as text) through `og_decimal` and `OG_DECIMAL`.
struct SQLiteQueryCompiler {
    struct Unsupported: Error {}

    /// Where a bound value comes from: a leaf of the request (``SQLiteQueryShape/leaves``) —
    /// a constant as it is, or an object ID's primary key or entity name — or the request's
    /// limit or offset, or a value fixed by the shape.
    enum BindingSource {
        case leaf(Int)
        case leafKey(Int)
        case leafEntity(Int)
        case literal(AttributeValue)
        case limit
        case offset
    }

    let schema: SQLiteSchema
    let model: ManagedObjectModel
    /// The store's UUID: an object ID from another store matches no row here.
    let storeIdentifier: String
    var joins: [String] = []
    var bindings: [AttributeValue] = []
    /// Where each of ``bindings`` comes from, so the SQL serves every request of its shape.
    private(set) var recipe: [BindingSource] = []
    /// The number of the next comparison's first leaf (see ``SQLiteQueryShape/leaves``).
    private var nextLeaf = 0
    private var aliases: [String: String] = [:]  // joined key-path prefix → alias
    /// The row key paths start from: the fetched row (`t0`), or a SUBQUERY's member while its
    /// predicate is compiled.
    private var base = "t0"
    /// Whether to-one steps join as inner joins (rows with an empty step left out): from an
    /// ANY/ALL/NONE member, whose empty to-one gives no value.
    private var innerJoins = false
    private var aliasCount = 0
    /// How many AND, OR and NOT groups enclose the part being compiled.
    private var nesting = 0
    /// How many comparisons have been compiled.
    private var comparisons = 0
    /// Whether the SQL sums integers, which fails the statement on an overflow (see the
    /// `@sum` case of the comparisons).
    private(set) var mayOverflow = false

    /// SQLite refuses SQL nested much deeper than this ("parser stack overflow" at about 30
    /// levels of `(… OR (NOT …` here, fewer around member subqueries), where the parser of
    /// format strings allows 200: a predicate nested deeper is left to the shared layer.
    static let maximumNesting = 16
    /// SQLite's expression trees are at most 1000 deep and `a OR b OR …` is one level per term,
    /// and preparing a statement takes time quadratic in its bound terms (each is compared with
    /// the others to be computed once: minutes for 40 000). A predicate of more comparisons
    /// than this is left to the shared layer, which takes time linear in them.
    static let maximumComparisons = 500

    init(schema: SQLiteSchema, model: ManagedObjectModel, storeIdentifier: String) {
        self.schema = schema
        self.model = model
        self.storeIdentifier = storeIdentifier
    }

    // MARK: Columns

    /// The alias of the row reached by walking to-one `steps` from the fetched row (`t0`).
    mutating func alias(for steps: [RelationshipDescription]) throws -> String {
        var alias = base
        var prefix = ""
        for step in steps {
            guard !step.isToMany, !step.isTransient else { throw Unsupported() }
            prefix += "." + step.entityName + "." + step.name
            if let existing = aliases[prefix] { alias = existing; continue }
            aliasCount += 1
            let next = "t\(aliasCount)"
            let destination = model.destinationEntity(of: step)
            guard schema.layouts[destination.name] != nil else { throw Unsupported() }
            let fk = SQLiteSchema.foreignKey(step).pk
            joins.append("\(innerJoins ? "JOIN" : "LEFT JOIN") \(SQLiteSchema.table(destination.rootName)) AS \(next) ON \(next).pk = \(alias).\(fk)")
            aliases[prefix] = next
            alias = next
        }
        return alias
    }

    /// The SQL expression and type of an attribute key path reached through to-one steps.
    mutating func column(_ path: ResolvedKeyPath) throws -> (String, AttributeType) {
        guard case .attribute(let attribute) = path.terminal, !attribute.isTransient else { throw Unsupported() }
        let alias = try alias(for: path.steps)
        return ("\(alias).\(SQLiteSchema.attributeColumn(attribute))", attribute.type)
    }

    mutating func bind(_ value: AttributeValue, _ source: BindingSource) -> String {
        bindings.append(value)
        recipe.append(source)
        return "?"
    }

    // MARK: Predicates

    mutating func predicate(_ predicate: FetchPredicate, entity: EntityDescription) throws -> String {
        try compile(predicate, entity: entity)
    }

    private mutating func compile(_ predicate: FetchPredicate, entity: EntityDescription) throws -> String {
        switch predicate {
        case .constant(let value): return value ? "1" : "0"
        case .and(let parts):
            guard !parts.isEmpty else { return "1" }
            return try run(parts, "AND", entity: entity)
        case .or(let parts):
            guard !parts.isEmpty else { return "0" }
            return try run(parts, "OR", entity: entity)
        case .not(let inner):
            try enter(); defer { nesting -= 1 }
            return "(NOT \(try compile(inner, entity: entity)))"
        case .comparison(let comparison):
            return try compile(comparison, entity: entity)
        }
    }

    /// `parts` joined by `op`, in parentheses.
    private mutating func run(_ parts: [FetchPredicate], _ op: String, entity: EntityDescription) throws -> String {
        try enter(); defer { nesting -= 1 }
        return "(" + (try parts.map { try compile($0, entity: entity) }).joined(separator: " \(op) ") + ")"
    }

    private mutating func enter() throws {
        guard nesting < Self.maximumNesting else { throw Unsupported() }
        nesting += 1
    }

    private mutating func compile(_ c: PredicateComparison, entity: EntityDescription) throws -> String {
        comparisons += 1
        guard comparisons <= Self.maximumComparisons else { throw Unsupported() }
        // Comparisons are compiled in the order the shape lists their leaves.
        let rightLeaf = nextLeaf + SQLiteQueryShape.leafCount(c.left)
        nextLeaf = rightLeaf + SQLiteQueryShape.leafCount(c.right)
        if case .subqueryCount(let collection, _, let inner) = c.left {
            return try compileSubqueryCount(c, collection: collection, inner: inner, firstLeaf: rightLeaf - SQLiteQueryShape.leafCount(c.left), rightLeaf: rightLeaf, entity: entity)
        }
        guard case .keyPath(let keyPath) = c.left else {
            if case .evaluatedObject = c.left, case .object(let id) = c.right, c.op == .equal || c.op == .notEqual {
                guard let pk = id.primaryKey, id.storeIdentifier == storeIdentifier else { return c.op == .equal ? "0" : "1" }
                let match = "(\(base).pk = \(bind(.integer(pk), .leafKey(rightLeaf))) AND \(base).entity = \(bind(.string(id.entityName), .leafEntity(rightLeaf))))"
                return c.op == .equal ? match : "(NOT \(match))"
            }
            throw Unsupported()
        }
        let path = try ResolvedKeyPath.resolve(keyPath, from: entity, in: model)
        switch path.terminal {
        case .attribute(let attribute):
            if path.steps.contains(where: \.isToMany) {
                return try compileMembers(c, path: path, attribute: attribute, rightLeaf: rightLeaf)
            }
            guard c.modifier == .direct else { throw Unsupported() }
            let (expression, type) = try column(path)
            if case .keyPath(let otherKeyPath) = c.right {
                let other = try ResolvedKeyPath.resolve(otherKeyPath, from: entity, in: model)
                guard case .attribute = other.terminal, !other.steps.contains(where: \.isToMany) else { throw Unsupported() }
                let (otherExpression, otherType) = try column(other)
                return try compareColumns(expression, type, otherExpression, otherType, c)
            }
            return try compare(expression, type, c, rightLeaf: rightLeaf)
        case .relationship(let relationship) where relationship.isToMany:
            return try compileMemberObjects(c, path: path, relationship: relationship, rightLeaf: rightLeaf)
        case .relationship(let relationship):
            guard !path.steps.contains(where: \.isToMany), c.modifier == .direct, !relationship.isTransient else { throw Unsupported() }
            let alias = try alias(for: path.steps)
            let (fk, fke) = SQLiteSchema.foreignKey(relationship)
            let hierarchy = schema.layouts[model.destinationEntity(of: relationship).name]?.allEntitiesOfRoot ?? []
            func equals(_ operand: PredicateOperand, leaf: Int) throws -> String {
                switch operand {
                case .constant(.null): return "(\(alias).\(fk) IS NULL)"
                case .object(let id):
                    guard let pk = id.primaryKey, id.storeIdentifier == storeIdentifier, hierarchy.contains(id.entityName) else { return "0" }
                    // A key is unique within its table, so the entity column only needs checking
                    // when the table holds several entities.
                    if hierarchy.count == 1 { return "(\(alias).\(fk) IS \(bind(.integer(pk), .leafKey(leaf))))" }
                    return "(\(alias).\(fk) IS \(bind(.integer(pk), .leafKey(leaf))) AND \(alias).\(fke) IS \(bind(.string(id.entityName), .leafEntity(leaf))))"
                default: throw Unsupported()
                }
            }
            switch c.op {
            case .equal: return try equals(c.right, leaf: rightLeaf)
            case .notEqual: return "(NOT \(try equals(c.right, leaf: rightLeaf)))"
            case .in:
                guard case .list(let items) = c.right else { throw Unsupported() }
                let leaves = Self.itemLeaves(items, from: rightLeaf)
                return items.isEmpty ? "0" : "(" + (try zip(items, leaves).map { try equals($0, leaf: $1) }).joined(separator: " OR ") + ")"
            default: throw Unsupported()
            }
        case .count:
            guard c.modifier == .direct else { throw Unsupported() }
            let (owner, relationship) = try owner(ofMembersIn: path)
            aliasCount += 1
            let members = try memberSource(relationship, owner: owner, alias: "m\(aliasCount)")
            return try compare(whenPresent(owner, "(SELECT COUNT(*) \(members.from) WHERE \(members.condition))"), .integer64, c, rightLeaf: rightLeaf)
        case .aggregate(let function, let attribute):
            guard c.modifier == .direct, !attribute.isTransient else { throw Unsupported() }
            let (owner, relationship) = try owner(ofMembersIn: path)
            aliasCount += 1
            let alias = "m\(aliasCount)"
            let members = try memberSource(relationship, owner: owner, alias: alias)
            let column = "\(alias).\(SQLiteSchema.attributeColumn(attribute))"
            let kind = SQLiteAggregates.Kind(attribute.type)
            let value: String
            let type: AttributeType
            switch function {
            case .minimum, .maximum:
                // Order-independent, and SQL's order is the shared sort's: numbers (a stored NaN
                // is a blob, after every number, where the shared sort puts NaN), dates as
                // numbers, strings through the same collation as comparisons. NULLs are skipped
                // and no members give NULL, as `AggregateFunction.apply` does.
                guard kind != nil || attribute.type == .boolean || attribute.type == .string else { throw Unsupported() }
                let collate = attribute.type == .string ? " COLLATE OG_NATURAL" : ""
                value = "(SELECT \(function == .minimum ? "MIN" : "MAX")(\(column)\(collate)) \(members.from) WHERE \(members.condition))"
                type = attribute.type
            case .sum where kind == .integer:
                // Integers: their sum is exact in any order, and SQL's own SUM is quickest. An
                // overflow makes it fail the statement, where the shared layer sums in floating
                // point; the store then answers the fetch without this predicate (see
                // `mayOverflow`).
                mayOverflow = true
                value = "(SELECT COALESCE(SUM(\(column)), 0) \(members.from) WHERE \(members.condition))"
                type = .integer64
            case .sum, .average:
                // Floating-point sums and every mean, through the shared layer's own function
                // (see ``SQLiteAggregates``): SQL's would not give its last bit.
                guard let kind else { throw Unsupported() }
                value = "(SELECT og_\(function == .sum ? "sum" : "avg")(\(kind.rawValue), \(column)) \(members.from) WHERE \(members.condition))"
                type = .double
            }
            return try compare(whenPresent(owner, value), type, c, rightLeaf: rightLeaf)
        }
    }

    /// `SUBQUERY(collection, $x, inner).@count` compared with a constant: a correlated count of
    /// the members matching `inner`, compiled from the member's row (its joins inside the
    /// subquery). A missing owner (an empty to-one on the way) counts 0, as in the shared
    /// layer, which counts the rows the collection reaches.
    private mutating func compileSubqueryCount(_ c: PredicateComparison, collection: String, inner: FetchPredicate, firstLeaf: Int, rightLeaf: Int, entity: EntityDescription) throws -> String {
        let path = try ResolvedKeyPath.resolve(collection, from: entity, in: model)
        guard case .relationship(let relationship) = path.terminal, relationship.isToMany, !relationship.isTransient,
              !path.steps.contains(where: \.isToMany), c.modifier == .direct else { throw Unsupported() }
        try enter(); defer { nesting -= 1 }
        let owner = try alias(for: path.steps)
        aliasCount += 1
        let member = "m\(aliasCount)"
        let members = try memberSource(relationship, owner: owner, alias: member)
        // The member's key paths join from the member, inside the subquery; its comparisons'
        // leaves are the collection operand's.
        let firstBinding = bindings.count
        let outerLeaf = nextLeaf
        nextLeaf = firstLeaf
        defer { nextLeaf = outerLeaf }
        let (condition, from) = try fromMember(member, members.from, innerJoins: false) { compiler in
            try compiler.compile(inner, entity: compiler.model.destinationEntity(of: relationship))
        }
        let innerBindings = firstBinding..<bindings.count
        let count = "(SELECT COUNT(*) \(from) WHERE \(members.condition) AND \(condition))"
        let comparison = try compare(count, .integer64, c, rightLeaf: rightLeaf, nonNull: true)
        // A comparison that cannot hold (`@count > nil`) is written without the count: its
        // values must not be bound either, or every later parameter takes the wrong one.
        if !comparison.contains(count) {
            bindings.removeSubrange(innerBindings)
            recipe.removeSubrange(innerBindings)
        }
        return comparison
    }

    /// ANY / ALL / NONE over the members of a to-many (reached through to-one steps) compared
    /// with objects: `ANY tags == %@`, `tags CONTAINS %@`, `NONE tags IN %@`. Members are rows, never nil, so
    /// `== nil` holds for none of them.
    private mutating func compileMemberObjects(_ c: PredicateComparison, path: ResolvedKeyPath, relationship: RelationshipDescription, rightLeaf: Int) throws -> String {
        guard !relationship.isTransient, !path.steps.contains(where: \.isToMany) else { throw Unsupported() }
        let owner = try alias(for: path.steps)
        aliasCount += 1
        let alias = "m\(aliasCount)"
        let members = try memberSource(relationship, owner: owner, alias: alias)
        let hierarchy = schema.layouts[model.destinationEntity(of: relationship).name]?.allEntitiesOfRoot ?? []
        func equals(_ operand: PredicateOperand, leaf: Int) throws -> String {
            switch operand {
            case .constant(.null): return "0"
            case .object(let id):
                guard let pk = id.primaryKey, id.storeIdentifier == storeIdentifier, hierarchy.contains(id.entityName) else { return "0" }
                if hierarchy.count == 1 { return "(\(alias).pk = \(bind(.integer(pk), .leafKey(leaf))))" }
                return "(\(alias).pk = \(bind(.integer(pk), .leafKey(leaf))) AND \(alias).entity = \(bind(.string(id.entityName), .leafEntity(leaf))))"
            default: throw Unsupported()
            }
        }
        let condition: String
        switch c.op {
        case .equal: condition = try equals(c.right, leaf: rightLeaf)
        // `tags CONTAINS %@`: membership, which is ANY `==`.
        case .contains where c.modifier == .direct: condition = try equals(c.right, leaf: rightLeaf)
        case .notEqual: condition = "(NOT \(try equals(c.right, leaf: rightLeaf)))"
        case .in:
            guard case .list(let items) = c.right else { throw Unsupported() }
            let leaves = Self.itemLeaves(items, from: rightLeaf)
            condition = items.isEmpty ? "0" : "(" + (try zip(items, leaves).map { try equals($0, leaf: $1) }).joined(separator: " OR ") + ")"
        default: throw Unsupported()
        }
        switch c.modifier {
        case .any, .direct: return "EXISTS (SELECT 1 \(members.from) WHERE \(members.condition) AND \(condition))"
        case .all: return "(NOT EXISTS (SELECT 1 \(members.from) WHERE \(members.condition) AND NOT \(condition)))"
        case .none: return "(NOT EXISTS (SELECT 1 \(members.from) WHERE \(members.condition) AND \(condition)))"
        }
    }

    /// The row owning the members that `path` (to-one steps, then one to-many, then its
    /// terminal) walks to last, and that to-many. A to-many before the last step makes a
    /// collection of owners, which is left to the shared layer.
    private mutating func owner(ofMembersIn path: ResolvedKeyPath) throws -> (alias: String, relationship: RelationshipDescription) {
        guard let relationship = path.steps.last, relationship.isToMany, !path.steps.dropLast().contains(where: \.isToMany) else { throw Unsupported() }
        return (try alias(for: Array(path.steps.dropLast())), relationship)
    }

    /// `value`, or NULL when the row `owner` names is missing (a to-one on the way is empty):
    /// the shared layer gives such a key path nil, not the count or aggregate of no members.
    private func whenPresent(_ owner: String, _ value: String) -> String {
        owner == base ? value : "(CASE WHEN \(owner).pk IS NULL THEN NULL ELSE \(value) END)"
    }

    /// ANY / ALL / NONE over the values a key path through to-manys reaches (`ANY
    /// messages.text`, `ANY chat.messages.author.name`, `ALL subjects.students.name`): whether
    /// some value holds the comparison (ANY), none fails it (ALL) or none holds it (NONE), as
    /// an `EXISTS` per to-many, nested. A missing owner has no members, as in the shared
    /// layer: ANY fails, ALL and NONE hold. To-one steps after a to-many are joined from each
    /// member inside its subquery, as inner joins: a member whose to-one is empty gives no
    /// value, so it neither matches ANY nor fails ALL, as in the shared layer.
    private mutating func compileMembers(_ c: PredicateComparison, path: ResolvedKeyPath, attribute: AttributeDescription, rightLeaf: Int) throws -> String {
        guard !attribute.isTransient, path.steps.contains(where: \.isToMany) else { throw Unsupported() }
        let exists = try someValue(path.steps[...], attribute: attribute, c, rightLeaf: rightLeaf, failing: c.modifier == .all)
        switch c.modifier {
        case .any, .direct: return exists
        case .all, .none: return "(NOT \(exists))"
        }
    }

    /// `EXISTS (…)`: whether a row `steps` reach from ``base`` (through at least one to-many)
    /// has an `attribute` that holds the comparison (or, `failing`, does not).
    private mutating func someValue(_ steps: ArraySlice<RelationshipDescription>, attribute: AttributeDescription, _ c: PredicateComparison, rightLeaf: Int, failing: Bool) throws -> String {
        guard let position = steps.firstIndex(where: \.isToMany) else {
            let row = try alias(for: Array(steps))
            let condition = try compare("\(row).\(SQLiteSchema.attributeColumn(attribute))", attribute.type, c, rightLeaf: rightLeaf)
            return failing ? "(NOT \(condition))" : condition
        }
        let owner = try alias(for: Array(steps[..<position]))
        aliasCount += 1
        let member = "m\(aliasCount)"
        let members = try memberSource(steps[position], owner: owner, alias: member)
        try enter(); defer { nesting -= 1 }
        let (condition, from) = try fromMember(member, members.from, innerJoins: true) { compiler in
            try compiler.someValue(steps[(position + 1)...], attribute: attribute, c, rightLeaf: rightLeaf, failing: failing)
        }
        return "EXISTS (SELECT 1 \(from) WHERE \(members.condition) AND \(condition))"
    }

    /// `body`'s SQL compiled with key paths starting at the member row `member` of a
    /// subquery, and the subquery's `FROM` (`membersFrom` and the joins `body` made from the
    /// member, inner ones when `innerJoins`). The outer query's joins are left as they were.
    private mutating func fromMember(_ member: String, _ membersFrom: String, innerJoins inner: Bool, _ body: (inout Self) throws -> String) rethrows -> (sql: String, from: String) {
        let outer = (base: base, joins: joins, aliases: aliases, innerJoins: innerJoins)
        (base, joins, aliases, innerJoins) = (member, [], [:], inner)
        defer { (base, joins, aliases, innerJoins) = (outer.base, outer.joins, outer.aliases, outer.innerJoins) }
        let sql = try body(&self)
        return (sql, joins.isEmpty ? membersFrom : membersFrom + " " + joins.joined(separator: " "))
    }

    /// `FROM …` and `WHERE …` selecting the member rows of a to-many relationship of `owner`.
    private func memberSource(_ relationship: RelationshipDescription, owner: String, alias: String) throws -> (from: String, condition: String) {
        let destination = model.destinationEntity(of: relationship)
        guard !relationship.isTransient, let layout = schema.layouts[relationship.entityName] ?? schema.layouts.values.first(where: { $0.entity.relationships.contains { $0 === relationship } }) else { throw Unsupported() }
        switch layout.toMany[relationship.slot] {
        case .foreignKey(let table, let fk, _):
            return ("FROM \(table) AS \(alias)", "\(alias).\(fk) = \(owner).pk")
        case .join(let table):
            return ("FROM \(table) AS \(alias)j JOIN \(SQLiteSchema.table(destination.rootName)) AS \(alias) ON \(alias).pk = \(alias)j.dst", "\(alias)j.src = \(owner).pk")
        case .transient:
            throw Unsupported()
        }
    }

    /// The number of each item's first leaf, the list's first being `first`.
    private static func itemLeaves(_ items: [PredicateOperand], from first: Int) -> [Int] {
        var next = first
        return items.map { item in
            defer { next += SQLiteQueryShape.leafCount(item) }
            return next
        }
    }

    /// `expression op right` as 0/1 SQL; `rightLeaf` numbers the right operand's first leaf.
    /// An expression that is never NULL (nor NaN) — a SUBQUERY's count — is written once:
    /// the NULL guards repeat it, and a repeated expression holding parameters of its own
    /// would take the values meant for the parameters after it (they are bound by position).
    private mutating func compare(_ expression: String, _ type: AttributeType, _ c: PredicateComparison, rightLeaf: Int, nonNull: Bool = false) throws -> String {
        if type == .transformable { throw Unsupported() }
        if type == .decimal || (Self.isNumber(type) && Self.namesDecimal(c.right)) {
            return try compareDecimal(expression, c, rightLeaf: rightLeaf)
        }
        let isString = type == .string
        let collate = (type == .string || type == .uri) ? " COLLATE OG_NATURAL" : ""
        func constant(_ operand: PredicateOperand) throws -> AttributeValue {
            guard case .constant(let value) = operand else { throw Unsupported() }
            if case .decimal = value { throw Unsupported() }
            return value
        }
        // A NaN constant (a number's or a date's: the shape gives both one class) is never
        // bound — SQLite would bind it as NULL, making `x == NaN` into `x IS NULL` — but
        // answered as the evaluator answers it: it equals nothing and orders with nothing, so
        // `== NaN` is false for every row, `!= NaN` true, a range false, and an `IN` list's
        // NaN matches no row. String operators never meet one (validation refuses a number).
        if case .constant(let value) = c.right, Self.isNaNOfItsOwnClass(value) {
            switch c.op {
            case .equal: return "0"
            case .notEqual: return "1"
            case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual: return "0"
            default: throw Unsupported()
            }
        }
        switch c.op {
        case .equal, .notEqual:
            let value = try constant(c.right)
            if value.isNull { return c.op == .equal ? "(\(expression) IS NULL)" : "(\(expression) IS NOT NULL)" }
            if isString && !c.options.isEmpty {
                let test = "COALESCE(og_text(\(SQLiteFunctions.opcode(.equal)), \(c.options.rawValue), \(expression), \(bind(value, .leaf(rightLeaf)))), 0)"
                return c.op == .equal ? test : "(NOT \(test))"
            }
            return "(\(expression) \(c.op == .equal ? "IS" : "IS NOT") \(bind(value, .leaf(rightLeaf)))\(collate))"
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            let value = try constant(c.right)
            if value.isNull { return "0" }
            if isString && !c.options.isEmpty {
                return "COALESCE(og_text(\(SQLiteFunctions.opcode(c.op)), \(c.options.rawValue), \(expression), \(bind(value, .leaf(rightLeaf)))), 0)"
            }
            if nonNull { return "(\(expression) \(c.op.rawValue) \(bind(value, .leaf(rightLeaf)))\(collate))" }
            // A stored NaN is a blob (see `SQLiteStatement.bindNaN`), above every number: an
            // upper bound of the least blob keeps it out of `>` and `>=`, as NaN compares with
            // nothing. (`<`, `<=` and BETWEEN's upper bound exclude blobs already.)
            let excludesNaN = (c.op == .greaterThan || c.op == .greaterThanOrEqual) && Self.mayHoldNaN(type)
            return "(\(expression) IS NOT NULL AND \(expression) \(c.op.rawValue) \(bind(value, .leaf(rightLeaf)))\(collate)\(excludesNaN ? " AND \(expression) < X''" : ""))"
        case .in:
            guard case .list(let items) = c.right else { throw Unsupported() }
            let values = try items.map(constant)
            if isString && !c.options.isEmpty {
                // Each string through og_text, as `==` with options; nil matches a missing value.
                guard !nonNull, items.count <= Self.maximumListItems else { throw Unsupported() }
                var parts: [String] = []
                for (value, leaf) in zip(values, Self.itemLeaves(items, from: rightLeaf)) {
                    switch value {
                    case .null: parts.append("(\(expression) IS NULL)")
                    case .string: parts.append("COALESCE(og_text(\(SQLiteFunctions.opcode(.equal)), \(c.options.rawValue), \(expression), \(bind(value, .leaf(leaf)))), 0)")
                    default: throw Unsupported()
                    }
                }
                return parts.isEmpty ? "0" : "(" + parts.joined(separator: " OR ") + ")"
            }
            // (A NaN item matches no row: left out, as the class of its leaf says.)
            let present = zip(values, Self.itemLeaves(items, from: rightLeaf)).filter { !$0.0.isNull && !Self.isNaNOfItsOwnClass($0.0) }
            if nonNull {
                return present.isEmpty ? "0" : "(\(expression)\(collate) IN (\(present.map { bind($0.0, .leaf($0.1)) }.joined(separator: ", "))))"
            }
            var parts: [String] = []
            if !present.isEmpty {
                parts.append("(\(expression) IS NOT NULL AND \(expression)\(collate) IN (\(present.map { bind($0.0, .leaf($0.1)) }.joined(separator: ", "))))")
            }
            if values.contains(where: \.isNull) { parts.append("(\(expression) IS NULL)") }
            return parts.isEmpty ? "0" : "(" + parts.joined(separator: " OR ") + ")"
        case .between:
            guard case .list(let items) = c.right, items.count == 2 else { throw Unsupported() }
            let low = try constant(items[0]), high = try constant(items[1])
            if low.isNull || high.isNull || Self.isNaNOfItsOwnClass(low) || Self.isNaNOfItsOwnClass(high) { return "0" }
            let leaves = Self.itemLeaves(items, from: rightLeaf)
            if isString && !c.options.isEmpty {
                guard !nonNull else { throw Unsupported() }
                func test(_ op: ComparisonOperator, _ bound: AttributeValue, _ leaf: Int) -> String {
                    "COALESCE(og_text(\(SQLiteFunctions.opcode(op)), \(c.options.rawValue), \(expression), \(bind(bound, .leaf(leaf)))), 0)"
                }
                return "(\(test(.greaterThanOrEqual, low, leaves[0])) AND \(test(.lessThanOrEqual, high, leaves[1])))"
            }
            if nonNull { return "(\(expression) BETWEEN \(bind(low, .leaf(leaves[0])))\(collate) AND \(bind(high, .leaf(leaves[1])))\(collate))" }
            return "(\(expression) IS NOT NULL AND \(expression) >= \(bind(low, .leaf(leaves[0])))\(collate) AND \(expression) <= \(bind(high, .leaf(leaves[1])))\(collate))"
        case .beginsWith, .endsWith, .contains, .like, .matches:
            guard isString, case .string = try constant(c.right) else { throw Unsupported() }
            return "COALESCE(og_text(\(SQLiteFunctions.opcode(c.op)), \(c.options.rawValue), \(expression), \(bind(try constant(c.right), .leaf(rightLeaf)))), 0)"
        }
    }

    /// A comparison in which a decimal takes part — a decimal attribute, or a number compared
    /// with a decimal constant — through `og_decimal` (see ``SQLiteFunctions``): decimals are
    /// stored as text, which SQL's own operators would compare as text. Null constants take
    /// SQL's `IS NULL` where the answer is plain; the rest is the evaluator's own rule, so a
    /// NULL, a NaN or a number of another kind fares as there.
    private mutating func compareDecimal(_ expression: String, _ c: PredicateComparison, rightLeaf: Int) throws -> String {
        func operand(_ item: PredicateOperand, leaf: Int) throws -> String {
            // A NaN double or date is left to the shared layer, as in `compare` (the shape gives
            // both one class, 10). A decimal NaN is bound as any decimal — its text, "NaN", which
            // `og_decimal` reads — since the shape gives every decimal one class (review: a
            // refused decimal NaN and a compiled decimal of one shape tripped the cache's check).
            guard case .constant(let value) = item, !Self.isNaNOfItsOwnClass(value) else { throw Unsupported() }
            switch value {
            case .null, .integer, .double, .decimal: return bind(value, .leaf(leaf))
            default: throw Unsupported()
            }
        }
        let opcode = SQLiteFunctions.opcode(c.op)
        switch c.op {
        case .equal, .notEqual:
            if case .constant(let value) = c.right, value.isNull {
                return c.op == .equal ? "(\(expression) IS NULL)" : "(\(expression) IS NOT NULL)"
            }
            return "og_decimal(\(opcode), \(expression), \(try operand(c.right, leaf: rightLeaf)))"
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            return "og_decimal(\(opcode), \(expression), \(try operand(c.right, leaf: rightLeaf)))"
        case .in, .between:
            guard case .list(let items) = c.right, c.op == .in || items.count == 2 else { throw Unsupported() }
            if items.isEmpty { return "0" }
            // SQLite takes at most 127 arguments per function call: a long `IN` list is split
            // into calls of at most `maximumFunctionItems` items, ORed; a list longer than
            // `maximumListItems` is left to the shared layer (the list's length is in its shape).
            guard items.count <= Self.maximumListItems else { throw Unsupported() }
            let operands = try zip(items, Self.itemLeaves(items, from: rightLeaf)).map { try operand($0.0, leaf: $0.1) }
            let calls = stride(from: 0, to: operands.count, by: Self.maximumFunctionItems).map { start in
                "og_decimal(\(opcode), \(expression), \(operands[start..<min(start + Self.maximumFunctionItems, operands.count)].joined(separator: ", ")))"
            }
            return calls.count == 1 ? calls[0] : "(" + calls.joined(separator: " OR ") + ")"
        case .beginsWith, .endsWith, .contains, .like, .matches:
            throw Unsupported()
        }
    }

    /// Items of one `og_decimal` call: SQLite refuses a function call of more than 127 arguments.
    private static let maximumFunctionItems = 100
    /// Items of an `IN` list compiled as ORed tests (`og_decimal` calls, or `og_text` tests with
    /// options): SQLite refuses an expression nested 1,000 deep, and each OR nests one level.
    private static let maximumListItems = 500

    /// Whether `value` is a NaN double or date: the constants the query shape gives a class of
    /// their own (10). A decimal NaN is not one: it shares every decimal's class.
    private static func isNaNOfItsOwnClass(_ value: AttributeValue) -> Bool {
        switch value {
        case .double(let d): return d.isNaN
        case .date(let d): return d.timeIntervalSinceReferenceDate.isNaN
        default: return false
        }
    }

    /// Two attributes compared with each other (`endDate > startDate`, `rank < chat.budget`),
    /// by the evaluator's rules: kinds it compares (numbers of any kind, decimals with numbers,
    /// booleans with integers, and each kind with itself) compile, any other pair is left to
    /// it. Two missing values are equal, as `.null == .null` is there; a missing value orders
    /// with nothing, nor does NaN (a stored NaN is a blob, see `compare`).
    private func compareColumns(_ a: String, _ typeA: AttributeType, _ b: String, _ typeB: AttributeType, _ c: PredicateComparison) throws -> String {
        guard let family = Self.family(typeA, typeB) else { throw Unsupported() }
        let ordered: Set<ComparisonOperator> = [.lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual]
        if family == .decimal {
            guard c.op == .equal || c.op == .notEqual || ordered.contains(c.op) else { throw Unsupported() }
            return "og_decimal(\(SQLiteFunctions.opcode(c.op)), \(a), \(b))"
        }
        if family == .string && (!c.options.isEmpty || [.beginsWith, .endsWith, .contains, .like, .matches].contains(c.op)) {
            func test(_ op: ComparisonOperator) -> String { "COALESCE(og_text(\(SQLiteFunctions.opcode(op)), \(c.options.rawValue), \(a), \(b)), 0)" }
            let equal = "((\(a) IS NULL AND \(b) IS NULL) OR \(test(.equal)))"
            switch c.op {
            case .equal: return equal
            case .notEqual: return "(NOT \(equal))"
            case .in, .between: throw Unsupported()
            default: return test(c.op)
            }
        }
        let collate = family == .string || family == .uri ? " COLLATE OG_NATURAL" : ""
        // An upper bound of the least blob keeps a stored NaN out (see `compare`).
        func numeric(_ expression: String, _ type: AttributeType) -> String {
            Self.mayHoldNaN(type) ? " AND \(expression) < X''" : ""
        }
        switch c.op {
        case .equal, .notEqual:
            let nan = Self.mayHoldNaN(typeA) ? " AND (\(a) IS NULL OR \(a) < X'')" : ""
            let equal = "(\(a) IS \(b)\(collate)\(nan))"
            return c.op == .equal ? equal : "(NOT \(equal))"
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            return "(\(a) IS NOT NULL AND \(b) IS NOT NULL AND \(a) \(c.op.rawValue) \(b)\(collate)\(numeric(a, typeA))\(numeric(b, typeB)))"
        default:
            throw Unsupported()
        }
    }

    /// What two attribute types compare as, the way ``ObjectGraph/AttributeValue/compare(_:_:)``
    /// pairs their values; `nil` for a pair it does not compare (or a transformable).
    private static func family(_ a: AttributeType, _ b: AttributeType) -> ColumnFamily? {
        guard let x = ColumnFamily(a), let y = ColumnFamily(b) else { return nil }
        switch (x, y) {
        case _ where x == y: return x
        case (.number, .decimal), (.decimal, .number): return .decimal
        // Booleans compare with integers (not with floating-point numbers), as 0 and 1.
        case (.boolean, .number) where isInteger(b), (.number, .boolean) where isInteger(a): return .number
        default: return nil
        }
    }

    private static func isInteger(_ type: AttributeType) -> Bool { [.integer16, .integer32, .integer64].contains(type) }

    private enum ColumnFamily {
        case number, decimal, string, boolean, date, uuid, uri, data
        init?(_ type: AttributeType) {
            switch type {
            case .integer16, .integer32, .integer64, .double, .float: self = .number
            case .decimal: self = .decimal
            case .string: self = .string
            case .boolean: self = .boolean
            case .date: self = .date
            case .uuid: self = .uuid
            case .uri: self = .uri
            case .binaryData: self = .data
            case .transformable: return nil
            }
        }
    }

    private static func isNumber(_ type: AttributeType) -> Bool { ColumnFamily(type) == .number }

    /// Whether a column of `type` may hold a NaN, stored as a blob (see `SQLiteStatement.bindNaN`).
    private static func mayHoldNaN(_ type: AttributeType) -> Bool { type == .double || type == .float || type == .date }

    /// Whether `operand` is a decimal constant, or a list holding one.
    private static func namesDecimal(_ operand: PredicateOperand) -> Bool {
        switch operand {
        case .constant(.decimal): return true
        case .list(let items): return items.contains(where: namesDecimal)
        default: return false
        }
    }

    // MARK: Sorting

    /// `ORDER BY` terms for the sort keys, ties broken by primary key.
    mutating func orderBy(_ keys: [SortKey], entity: EntityDescription) throws -> String {
        var terms: [String] = []
        for key in keys {
            let path = try ResolvedKeyPath.resolve(key.keyPath, from: entity, in: model)
            let (expression, type) = try column(path)
            if type == .transformable { throw Unsupported() }
            var term = expression
            if type == .string {
                switch key.comparison {
                case .natural: term += " COLLATE OG_NATURAL"
                case .caseInsensitive: term += " COLLATE OG_CASE"
                case .localizedStandard: term += " COLLATE OG_LOCALIZED"
                }
            } else if type == .uri {
                term += " COLLATE OG_NATURAL"
            } else if type == .decimal {
                term += " COLLATE OG_DECIMAL"
            }
            terms.append(term + (key.ascending ? " ASC" : " DESC"))
        }
        terms.append("t0.pk ASC")
        return terms.joined(separator: ", ")
    }
}
