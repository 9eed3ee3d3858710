import ObjectGraph

/// Turns result rows of one table into ``ObjectGraph/RowSnapshot``s and ``ObjectGraph/ObjectID``s,
/// with everything that does not depend on the row worked out once per store: each entity's
/// column positions and ID namespace, and whether a table (or a to-one's destination table)
/// holds a single entity, in which case its entity column is never decoded.
///
/// Classes, not structs: a fault reads one row through them, and copying a struct of
/// dictionaries and a plan per row retained each of their references (a tenth of a fault).
final class SQLiteRowReader: Sendable {
    /// One concrete entity's decoding plan.
    final class Plan: Sendable {
        let layout: SQLiteSchema.EntityLayout
        let namespace: ObjectID.Namespace
        /// Per to-one slot: the destination namespace when its table holds one entity.
        let toOneNamespaces: [ObjectID.Namespace?]
        /// Per to-one slot: the namespaces of its destination's hierarchy by entity name, which
        /// the slot's entity column may name (any other name is damage: a destination of
        /// another entity reached the context, where unlinking it from its inverse indexed past
        /// that entity's to-one slots — the fuzz test).
        let toOneChoices: [[String: ObjectID.Namespace]]
        /// Per attribute slot: its column, type and whether NULL is damage there (a required
        /// attribute: save refuses nil in it), or `nil` when it has no column (transient).
        let attributeColumns: [SQLiteStatement.Column?]

        init(layout: SQLiteSchema.EntityLayout, namespace: ObjectID.Namespace, toOneNamespaces: [ObjectID.Namespace?], toOneChoices: [[String: ObjectID.Namespace]]) {
            self.layout = layout
            self.namespace = namespace
            self.toOneNamespaces = toOneNamespaces
            self.toOneChoices = toOneChoices
            self.attributeColumns = layout.attributePositions.enumerated().map { slot, position in
                let attribute = layout.entity.attributes[slot]
                return position.map { SQLiteStatement.Column(position: $0, type: attribute.type, required: !attribute.isOptional) }
            }
        }
    }

    /// Plans by entity name, for tables that hold several entities.
    let plans: [String: Plan]
    /// The plan of the table's only entity, when it has one.
    let single: Plan?
    /// Namespaces of every entity of the model in this store.
    let namespaces: [String: ObjectID.Namespace]

    init(plans: [String: Plan], single: Plan?, namespaces: [String: ObjectID.Namespace]) {
        self.plans = plans
        self.single = single
        self.namespaces = namespaces
    }

    /// The namespaces among `namespaces` of `entity`'s hierarchy: those a reference to an
    /// `entity` may name (any other is damage).
    static func namespaces(_ namespaces: [String: ObjectID.Namespace], of entity: EntityDescription) -> [String: ObjectID.Namespace] {
        namespaces.filter { entity.hierarchyNames.contains($0.key) }
    }

    /// The readers of every table of `schema`, by root entity name.
    static func readers(for schema: SQLiteSchema, storeIdentifier: String) -> [String: SQLiteRowReader] {
        var namespaces: [String: ObjectID.Namespace] = [:]
        for entity in schema.model.entities {
            namespaces[entity.name] = ObjectID.Namespace(entityName: entity.name, storeIdentifier: storeIdentifier)
        }
        func onlyEntity(ofRoot root: String) -> String? { SQLiteSchema.onlyEntity(ofRoot: root, in: schema.model) }
        var plans: [String: Plan] = [:]
        for (name, layout) in schema.layouts {
            guard let namespace = namespaces[name] else { continue }
            let toOne = layout.entity.toOneRelationships.map { relationship in
                onlyEntity(ofRoot: schema.model.destinationEntity(of: relationship).rootName).flatMap { namespaces[$0] }
            }
            let choices = layout.entity.toOneRelationships.map { Self.namespaces(namespaces, of: schema.model.destinationEntity(of: $0)) }
            plans[name] = Plan(layout: layout, namespace: namespace, toOneNamespaces: toOne, toOneChoices: choices)
        }
        var readers: [String: SQLiteRowReader] = [:]
        for root in Set(schema.layouts.values.map(\.entity.rootName)) {
            readers[root] = SQLiteRowReader(
                plans: plans.filter { $0.value.layout.entity.rootName == root },
                single: onlyEntity(ofRoot: root).flatMap { plans[$0] }, namespaces: namespaces)
        }
        return readers
    }

    /// The plan for the current row of `statement` (its entity in column 1). An entity name
    /// the table's hierarchy does not have is noted as damage (see
    /// ``SQLiteStatement/noteDamage(_:)``): such rows were skipped, so they vanished from
    /// fetches and their faults read as deleted objects. (No name, NULL, is a row a join did
    /// not find.)
    @inline(__always)
    func plan(_ statement: SQLiteStatement, entityColumn: Int32) -> Plan? {
        if let single { return single }
        guard let name = statement.string(entityColumn) else { return nil }
        guard let plan = plans[name] else {
            statement.noteDamage(entityColumn)
            return nil
        }
        return plan
    }

    /// The ID of the current row: primary key in `pkColumn`, entity in `entityColumn`.
    @inline(__always)
    func objectID(_ statement: SQLiteStatement, pkColumn: Int32, entityColumn: Int32) throws -> ObjectID? {
        guard let plan = plan(statement, entityColumn: entityColumn) else {
            if statement.damagedColumn >= 0 { throw statement.damageError(primaryKey: statement.int64(pkColumn)) }
            return nil
        }
        return plan.namespace.objectID(primaryKey: statement.int64(pkColumn))
    }

    /// A snapshot of the current row of `statement`, selected with ``SQLiteStore/selectList(_:alias:)``.
    func snapshot(_ statement: SQLiteStatement) throws -> RowSnapshot? {
        guard let plan = plan(statement, entityColumn: 1) else {
            if statement.damagedColumn >= 0 { throw statement.damageError(primaryKey: statement.int64(0)) }
            return nil
        }
        let row = Self.snapshot(statement, plan.namespace, plan.attributeColumns, plan.layout.toOnePositions, plan.toOneNamespaces, plan.toOneChoices)
        if statement.damagedColumn >= 0 { throw statement.damageError(primaryKey: statement.int64(0)) }
        return row
    }

    /// Steps `statement` to its end, appending a snapshot of each row. A table of one entity
    /// takes its plan's parts once for all rows: taking them per row retained and released
    /// each (a quarter of reading a row, perf).
    ///
    /// Rows are read in runs (``ObjectGraph/RowRun``): the values of a run's rows share one
    /// array, one allocation per run instead of one per row.
    func appendAll(_ statement: SQLiteStatement, to rows: inout [RowSnapshot]) throws {
        guard let single else {
            var run = RowRun()
            while try statement.step() {
                guard let plan = plan(statement, entityColumn: 1) else {
                    if statement.damagedColumn >= 0 { throw statement.damageError(primaryKey: statement.int64(0)) }
                    continue
                }
                Self.read(statement, plan.namespace, plan.attributeColumns, plan.layout.toOnePositions, plan.toOneNamespaces, plan.toOneChoices, into: &run, &rows)
                if statement.damagedColumn >= 0 { throw statement.damageError(primaryKey: statement.int64(0)) }
            }
            run.flush(into: &rows)
            return
        }
        let namespace = single.namespace, columns = single.attributeColumns
        let toOnePositions = single.layout.toOnePositions, toOneNamespaces = single.toOneNamespaces, choices = single.toOneChoices
        // Every row of one entity has a value per attribute slot.
        var run = RowRun(width: columns.count)
        while try statement.step() {
            Self.read(statement, namespace, columns, toOnePositions, toOneNamespaces, choices, into: &run, &rows)
            // (One comparison per row: the values noted their own damage, see noteDamage.)
            if statement.damagedColumn >= 0 { throw statement.damageError(primaryKey: statement.int64(0)) }
        }
        run.flush(into: &rows)
    }

    /// Reads the statement's current row into `run`.
    @inline(__always)
    private static func read(
        _ statement: SQLiteStatement, _ namespace: ObjectID.Namespace, _ columns: [SQLiteStatement.Column?],
        _ toOnePositions: [(pk: Int32, entity: Int32)?], _ toOneNamespaces: [ObjectID.Namespace?], _ choices: [[String: ObjectID.Namespace]],
        into run: inout RowRun, _ rows: inout [RowSnapshot]
    ) {
        for column in columns {
            run.appendValue(column.map { statement.value($0) } ?? .null)
        }
        run.endRow(
            objectID: namespace.objectID(primaryKey: statement.int64(0)), version: version(statement),
            toOne: toOne(statement, toOnePositions, toOneNamespaces, choices), into: &rows)
    }

    /// A snapshot of the statement's current row, its values in an array of its own.
    @inline(__always)
    private static func snapshot(
        _ statement: SQLiteStatement, _ namespace: ObjectID.Namespace, _ columns: [SQLiteStatement.Column?],
        _ toOnePositions: [(pk: Int32, entity: Int32)?], _ toOneNamespaces: [ObjectID.Namespace?], _ choices: [[String: ObjectID.Namespace]]
    ) -> RowSnapshot {
        var attributes: [AttributeValue] = []
        attributes.reserveCapacity(columns.count)
        for column in columns {
            attributes.append(column.map { statement.value($0) } ?? .null)
        }
        return RowSnapshot(
            objectID: namespace.objectID(primaryKey: statement.int64(0)), version: version(statement), attributes: attributes,
            toOne: toOne(statement, toOnePositions, toOneNamespaces, choices))
    }

    /// The version of the statement's current row (column 2), noted as damage when no stored
    /// row may hold it (see ``ObjectGraph/RowSnapshot/isStoredVersion(_:)``).
    @inline(__always)
    private static func version(_ statement: SQLiteStatement) -> Int64 {
        let version = statement.int64(2)
        // (The value's storage type is not asked: that took 60 instructions a row, 1.6% of
        // fetching 100,000 messages, callgrind. A real in range, 2.5, reads as 2, and saving
        // the row then meets a conflict rather than this damage.)
        if !RowSnapshot.isStoredVersion(version) { statement.noteDamage(2) }
        return version
    }

    /// The to-one destinations of the statement's current row.
    @inline(__always)
    private static func toOne(
        _ statement: SQLiteStatement, _ toOnePositions: [(pk: Int32, entity: Int32)?], _ toOneNamespaces: [ObjectID.Namespace?],
        _ choices: [[String: ObjectID.Namespace]]
    ) -> ToOneValues {
        if toOnePositions.count == 1 {
            return ToOneValues(single: destination(statement, 0, toOnePositions, toOneNamespaces, choices))
        }
        var toOne = ToOneValues()
        toOne.reserveCapacity(toOnePositions.count)
        for slot in toOnePositions.indices {
            toOne.append(destination(statement, slot, toOnePositions, toOneNamespaces, choices))
        }
        return toOne
    }

    /// The destination of to-one `slot` in the statement's current row.
    @inline(__always)
    private static func destination(
        _ statement: SQLiteStatement, _ slot: Int, _ toOnePositions: [(pk: Int32, entity: Int32)?], _ toOneNamespaces: [ObjectID.Namespace?],
        _ choices: [[String: ObjectID.Namespace]]
    ) -> ObjectID? {
        // (The key read first, the column's type asked only for a zero key, as in
        // SQLiteStatement.value(_:as:).)
        guard let positions = toOnePositions[slot] else { return nil }
        let key = statement.int64(positions.pk)
        guard key != 0 || statement.zeroIsNumber(positions.pk) != nil else { return nil }
        if let namespace = toOneNamespaces[slot] { return namespace.objectID(primaryKey: key) }
        guard let name = statement.string(positions.entity) else { return nil }
        guard let namespace = choices[slot][name] else {
            statement.noteDamage(positions.entity)
            return nil
        }
        return namespace.objectID(primaryKey: key)
    }
}
