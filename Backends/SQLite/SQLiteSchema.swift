import ObjectGraph

/// How a model maps onto SQLite tables, in the spirit of Core Data's layout:
///
/// - one table per entity hierarchy (`"Chat"`), sub-entities sharing their root's table, with
///   `pk INTEGER PRIMARY KEY`, `entity` (the concrete entity's name) and `version` (the
///   optimistic-lock version);
/// - one column per stored attribute, `"a:Declaring.name"`;
/// - two columns per stored to-one relationship, `"fk:Declaring.name"` (the destination's
///   primary key) and `"fke:Declaring.name"` (its concrete entity, for polymorphic
///   destinations);
/// - a to-many whose inverse is to-one is read from that foreign key (plus, when ordered, an
///   order column `"ord:Declaring.name"` on the destination's table); every other to-many —
///   many-to-many (one join table per direction) and many-to-nil — is a join table
///   `"j:Declaring.name"(src, dst, dste, pos)`, so one destination can belong to many owners;
/// - `og_metadata` (store UUID, model version hash, user metadata) and `og_primary_keys`
///   (the next key per hierarchy);
/// - indexes on every foreign key, on join tables, on indexed attributes, on each uniqueness
///   constraint's attributes (``uniquenessIndexes``), and on `entity` in the tables of
///   hierarchies with sub-entities (``entityIndexes``; a fetch of a sub-entity filters on it). A
///   table holding one entity has no `entity` index: nothing ever filters on it there, and
///   every insert and delete paid for it — deleting a cascade's 10,000 rows took 12.6 ms with
///   it and 7.6 ms without (raw SQL on the benchmark's chat file), and the file was 15% larger.
///
/// A hierarchy's table is as wide as SQLite allows at most (`SQLITE_LIMIT_COLUMN`, 2000 by
/// default, the three columns above included): a wider model is refused before any file is
/// made (``tooManyColumns(limit:)``), as are names SQLite cannot tell apart (``nameClash``).
///
/// Columns carry no type affinity, so SQLite keeps each value exactly as bound (an integer
/// stays an integer, -0.0 stays -0.0).
struct SQLiteSchema {
    enum ToManyStorage {
        /// Members are rows of `table` whose `fk` column holds the source's key.
        case foreignKey(table: String, fk: String, order: String?)
        /// Members are rows of the join table.
        case join(table: String)
        /// Not stored.
        case transient
    }

    /// A class, not a struct: rows look their layout up constantly, and copying a struct of
    /// this many arrays and strings retains and releases each of them every time. Filled in
    /// while the schema is built, read-only afterwards.
    final class EntityLayout: @unchecked Sendable {
        let entity: EntityDescription
        let table: String
        let attributeColumns: [String?]
        let toOneColumns: [(pk: String, entity: String)?]
        let toMany: [ToManyStorage]

        /// The entity's name, as its rows and the to-ones pointing at them bind it.
        let entityName: StaticText

        init(entity: EntityDescription, table: String, attributeColumns: [String?], toOneColumns: [(pk: String, entity: String)?], toMany: [ToManyStorage]) {
            self.entity = entity
            self.entityName = StaticText(entity.name)
            self.table = table
            self.attributeColumns = attributeColumns
            self.toOneColumns = toOneColumns
            self.toMany = toMany
        }

        /// Result-column positions (in a ``SQLiteStore/selectList(_:alias:)`` row) of each
        /// attribute and to-one, resolved once so decoding a row does no name lookups.
        var attributePositions: [Int32?] = []
        /// (A to-one's entity position is -1 when its destination's table holds one entity:
        /// that column is not selected.)
        var toOnePositions: [(pk: Int32, entity: Int32)?] = []
        /// Every entity sharing this entity's table (its hierarchy): a fetch of all of them
        /// needs no filter on the entity column.
        var allEntitiesOfRoot: Set<String> = []
        /// The stored columns of a row of this entity, in the order ``SQLiteStore`` binds
        /// them (attributes, then each to-one's key and entity), and the statements that
        /// write them — built once, not per saved row.
        var writtenColumns: [String] = []
        var insertSQL = ""
        var updateSQL = ""

        /// The update of only the `attributes` and `toOne` slots given (every column for
        /// `nil`), in the order ``SQLiteStore`` binds them: SQLite maintains an index only
        /// when its columns are written, so an update that names the foreign key of a row
        /// whose key did not change still rewrites that key's index entry.
        func updateSQL(attributes: SlotSet?, toOne: SlotSet?) -> String {
            guard attributes != nil || toOne != nil else { return updateSQL }
            var assignments = ["version = ?"]
            for (slot, column) in attributeColumns.enumerated() {
                if let column, attributes?.contains(slot) ?? true { assignments.append("\(column) = ?") }
            }
            for (slot, pair) in toOneColumns.enumerated() {
                if let pair, toOne?.contains(slot) ?? true { assignments += ["\(pair.pk) = ?", "\(pair.entity) = ?"] }
            }
            return "UPDATE \(SQLiteSchema.table(entity.rootName)) SET \(assignments.joined(separator: ", ")) WHERE pk = ? AND version = ?"
        }
    }

    let model: ManagedObjectModel
    let entities: [EntityDescription]
    private(set) var layouts: [String: EntityLayout] = [:]
    /// Root entity name → every column of its table, in a stable order.
    private(set) var tableColumns: [String: [String]] = [:]
    /// Root entity name → what a row select lists: pk, entity, version, then ``tableColumns``,
    /// with `NULL` for entity-name columns no reader needs.
    private(set) var selectColumns: [String: [String]] = [:]
    /// Root entity name → `SELECT … FROM root WHERE pk = ?` (a fault's query, built once).
    private(set) var selectByKey: [String: String] = [:]
    /// Root entity name → the select list qualified by the fetch alias `t0`, built once: every
    /// fetch of rows joined it anew (a sixth of building a fetch's SQL, perf).
    private(set) var aliasedSelectList: [String: String] = [:]
    /// Join table name → the relationship it stores.
    private(set) var joinTables: [String: RelationshipDescription] = [:]

    static func quote(_ identifier: String) -> String {
        identifier.utf8.contains(UInt8(ascii: "\"")) ? "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : "\"" + identifier + "\""
    }
    static func table(_ root: String) -> String { quote(root) }

    /// The name of the only entity of the model whose rows live in `root`'s table, if it has
    /// one: such a table's entity column (and a to-one's to it) is never read.
    static func onlyEntity(ofRoot root: String, in model: ManagedObjectModel) -> String? {
        let members = model.entities.filter { $0.rootName == root }
        return members.count == 1 ? members[0].name : nil
    }
    static func attributeColumn(_ attribute: AttributeDescription) -> String { quote("a:\(attribute.entityName).\(attribute.name)") }
    static func foreignKey(_ relationship: RelationshipDescription) -> (pk: String, entity: String) {
        (quote("fk:\(relationship.entityName).\(relationship.name)"), quote("fke:\(relationship.entityName).\(relationship.name)"))
    }
    static func orderColumn(_ relationship: RelationshipDescription) -> String { quote("ord:\(relationship.entityName).\(relationship.name)") }
    static func joinTable(_ relationship: RelationshipDescription) -> String { quote("j:\(relationship.entityName).\(relationship.name)") }

    init(model: ManagedObjectModel, entities: [EntityDescription]) {
        self.model = model
        self.entities = entities
        var columns: [String: [String]] = [:]
        func addColumn(_ root: String, _ column: String) {
            if !(columns[root]?.contains(column) ?? false) { columns[root, default: []].append(column) }
        }
        for entity in entities {
            let table = Self.table(entity.rootName)
            // Every root has a table, also one whose entities store no column (only to-manys):
            // reading the key with a default inserted nothing, so no table was created and the
            // first save of such an entity failed on it.
            if columns[entity.rootName] == nil { columns[entity.rootName] = [] }
            let attributeColumns = entity.attributes.map { $0.isTransient ? nil : Self.attributeColumn($0) }
            for column in attributeColumns.compactMap({ $0 }) { addColumn(entity.rootName, column) }
            let toOneColumns: [(pk: String, entity: String)?] = entity.toOneRelationships.map { $0.isTransient ? nil : Self.foreignKey($0) }
            for pair in toOneColumns.compactMap({ $0 }) { addColumn(entity.rootName, pair.pk); addColumn(entity.rootName, pair.entity) }
            var toMany: [ToManyStorage] = []
            for relationship in entity.toManyRelationships {
                if relationship.isTransient { toMany.append(.transient); continue }
                if relationship.hasInverse && !relationship.inverseIsToMany, let inverse = model.inverse(of: relationship) {
                    let destination = model.destinationEntity(of: relationship)
                    let order = relationship.isOrdered ? Self.orderColumn(relationship) : nil
                    toMany.append(.foreignKey(table: Self.table(destination.rootName), fk: Self.foreignKey(inverse).pk, order: order))
                } else {
                    let join = Self.joinTable(relationship)
                    joinTables[join] = relationship
                    toMany.append(.join(table: join))
                }
            }
            layouts[entity.name] = EntityLayout(entity: entity, table: table, attributeColumns: attributeColumns, toOneColumns: toOneColumns, toMany: toMany)
        }
        // Order columns live on the destination's table.
        for entity in entities {
            for relationship in entity.toManyRelationships where relationship.isOrdered && !relationship.isTransient {
                if case .foreignKey? = layouts[entity.name]?.toMany[relationship.slot] {
                    addColumn(model.destinationEntity(of: relationship).rootName, Self.orderColumn(relationship))
                }
            }
        }
        self.tableColumns = columns
        // Entity-name columns that no row reader reads (see SQLiteRowReader): the table's own
        // when it holds one entity, and a to-one's when its destination's table holds one.
        // Sorting a chat's messages carried both names in every sorted record (a tenth of the
        // query in SQLite itself, measured). The table's own is selected as NULL, keeping the
        // first three positions fixed; a to-one's is left out of the list (each NULL was about
        // 3 ns a row of a 100,000-row fetch, measured in C), its position then -1.
        func holdsOneEntity(_ root: String) -> Bool { Self.onlyEntity(ofRoot: root, in: model) != nil }
        var unread: Set<String> = []
        for entity in entities {
            for relationship in entity.toOneRelationships where !relationship.isTransient && holdsOneEntity(model.destinationEntity(of: relationship).rootName) {
                unread.insert(Self.foreignKey(relationship).entity)
            }
        }
        var selectPositions: [String: [String: Int32]] = [:]
        for (root, rootColumns) in columns {
            let selected = rootColumns.filter { !unread.contains($0) }
            var positions: [String: Int32] = [:]
            for (offset, column) in selected.enumerated() { positions[column] = Int32(offset + 3) }
            selectPositions[root] = positions
            selectColumns[root] = ["pk", holdsOneEntity(root) ? "NULL" : "entity", "version"] + selected
            selectByKey[root] = "SELECT \((selectColumns[root] ?? []).joined(separator: ", ")) FROM \(Self.table(root)) WHERE pk = ?"
            aliasedSelectList[root] = (selectColumns[root] ?? []).map { $0 == "NULL" ? $0 : "t0." + $0 }.joined(separator: ", ")
        }
        for (name, layout) in layouts {
            let positions = selectPositions[layout.entity.rootName] ?? [:]
            layouts[name]?.attributePositions = layout.attributeColumns.map { $0.flatMap { positions[$0] } }
            layouts[name]?.toOnePositions = layout.toOneColumns.map { pair in
                guard let pair, let pk = positions[pair.pk] else { return nil }
                return (pk, positions[pair.entity] ?? -1)
            }
            var written = layout.attributeColumns.compactMap { $0 }
            for pair in layout.toOneColumns.compactMap({ $0 }) { written += [pair.pk, pair.entity] }
            let table = Self.table(layout.entity.rootName)
            layouts[name]?.writtenColumns = written
            layouts[name]?.insertSQL = "INSERT INTO \(table) (\((["pk", "entity", "version"] + written).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: written.count + 3).joined(separator: ", ")))"
            layouts[name]?.updateSQL = "UPDATE \(table) SET \((["version = ?"] + written.map { "\($0) = ?" }).joined(separator: ", ")) WHERE pk = ? AND version = ?"
            layouts[name]?.allEntitiesOfRoot = Set(entities.filter { $0.rootName == layout.entity.rootName }.map(\.name))
        }
    }

    /// The join tables whose rows belong to rows of `root`'s table (`owned`: the table's rows
    /// are the sources) or point at them (`pointing`: they are the destinations).
    func joinTables(ofRoot root: String) -> (owned: [String], pointing: [String]) {
        var owned: [String] = []
        var pointing: [String] = []
        for (table, relationship) in joinTables.sorted(by: { $0.key < $1.key }) {
            if layouts[relationship.entityName]?.entity.rootName == root { owned.append(table) }
            if model.destinationEntity(of: relationship).rootName == root { pointing.append(table) }
        }
        return (owned, pointing)
    }

    func layout(_ entityName: String) throws -> EntityLayout {
        guard let layout = layouts[entityName] else {
            throw StoreError(.missingRow, "the SQLite store does not hold entity \(entityName)")
        }
        return layout
    }

    /// The SQL that creates every table and index.
    var creationSQL: String {
        var sql = """
            CREATE TABLE og_metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE og_primary_keys (root TEXT PRIMARY KEY, next INTEGER NOT NULL);

            """
        for (root, columns) in tableColumns.sorted(by: { $0.key < $1.key }) {
            sql += tableSQL(root: root, columns: columns)
        }
        for index in attributeIndexes + uniquenessIndexes { sql += index.sql + "\n" }
        for (join, _) in joinTables.sorted(by: { $0.key < $1.key }) {
            let bare = String(join.dropFirst().dropLast())
            sql += "CREATE TABLE \(join) (src INTEGER NOT NULL, dst INTEGER NOT NULL, dste TEXT NOT NULL, pos INTEGER NOT NULL, PRIMARY KEY (src, dst)) WITHOUT ROWID;\n"
            sql += "CREATE INDEX \(Self.quote("ix:\(bare).dst")) ON \(join) (dst);\n"
            sql += "CREATE INDEX \(Self.quote("ix:\(bare).pos")) ON \(join) (src, pos);\n"
        }
        return sql
    }

    /// The statements making `root`'s table (with `columns`) and the indexes that go with it;
    /// `IF NOT EXISTS` when `ifMissing`, for a table added to a file another process may be
    /// adding it to as well.
    func tableSQL(root: String, columns: [String], ifMissing: Bool = false) -> String {
        let table = Self.table(root)
        let create = ifMissing ? "CREATE TABLE IF NOT EXISTS" : "CREATE TABLE"
        let index = ifMissing ? "CREATE INDEX IF NOT EXISTS" : "CREATE INDEX"
        let body = (["pk INTEGER PRIMARY KEY", "entity TEXT NOT NULL", "version INTEGER NOT NULL"] + columns).joined(separator: ", ")
        var sql = "\(create) \(table) (\(body));\n"
        if Self.onlyEntity(ofRoot: root, in: model) == nil {
            sql += "\(index) \(Self.quote(Self.entityIndexName(root))) ON \(table) (entity);\n"
        }
        for column in columns where column.hasPrefix("\"fk:") {
            sql += "\(index) \(Self.quote("ix:\(root).\(column.dropFirst().dropLast())")) ON \(table) (\(column));\n"
        }
        return sql
    }

    /// The roots whose table has no column of its own (every entity of the hierarchy holds
    /// only to-manys kept in join tables). Files made before such roots got a table have none
    /// (its rows' keys and versions were nowhere, and inserting one failed).
    var columnlessRoots: [String] { tableColumns.filter { $0.value.isEmpty }.map(\.key).sorted() }

    /// The bare name of the index on `root`'s entity column, `ix:e:Root`: no attribute index
    /// (`ix:Entity.attribute`, which always has a dot, its names none) can be named so.
    static func entityIndexName(_ root: String) -> String { "ix:e:\(root)" }

    /// The name the entity index had in files made before ``entityIndexName(_:)``, also that
    /// of an indexed attribute named `entity` on the root: the store's own index was made
    /// first, and the attribute's `IF NOT EXISTS` then found it and made none (or, for a
    /// string attribute, a later open took it for the attribute's index in byte order and
    /// replaced it, losing the entity index).
    static func formerEntityIndexName(_ root: String) -> String { "ix:\(root).entity" }

    /// The roots whose table has an entity index: those of hierarchies with sub-entities.
    var entityIndexedRoots: [String] { tableColumns.keys.sorted().filter { Self.onlyEntity(ofRoot: $0, in: model) == nil } }

    /// The index on the entity column of each table holding a hierarchy with sub-entities
    /// (its bare name and the statement making it). `IF NOT EXISTS`, and among the indexes a
    /// file gets when it opens, for files whose index has its former name
    /// (``formerEntityIndexName(_:)``).
    var entityIndexes: [(name: String, sql: String)] {
        entityIndexedRoots.map { root in
            let name = Self.entityIndexName(root)
            return (name, "CREATE INDEX IF NOT EXISTS \(Self.quote(name)) ON \(Self.table(root)) (entity);")
        }
    }

    /// `attribute`'s column as an index holds it: strings and URIs in `OG_NATURAL` order, the
    /// collation every comparison of them that ``SQLiteQueryCompiler`` writes names. SQLite uses
    /// an index only for comparisons in the index's own collation: with its byte order, the
    /// uniqueness check's `"a:Person.email" IS ? COLLATE OG_NATURAL` scanned the whole index
    /// (`EXPLAIN QUERY PLAN`). The price: a connection without the collation (the `sqlite3`
    /// shell) can read such a table but not write it ("no such collation sequence").
    static func indexedColumn(_ attribute: AttributeDescription) -> String {
        let column = attributeColumn(attribute)
        return attribute.type == .string || attribute.type == .uri ? column + " COLLATE OG_NATURAL" : column
    }

    /// The index of each indexed attribute (its bare name, `ix:Entity.attribute`, and the
    /// statement making it), on the table of the declaring entity's hierarchy. `IF NOT EXISTS`
    /// for the same reason as ``uniquenessIndexes``: whether an attribute is indexed is not
    /// part of the model hash, so a file may open with an index its makers did not have.
    var attributeIndexes: [(name: String, sql: String)] {
        entities.flatMap { entity in
            entity.attributes.filter { $0.isIndexed && !$0.isTransient && $0.entityName == entity.name }.map { attribute in
                let name = "ix:\(attribute.entityName).\(attribute.name)"
                return (name, "CREATE INDEX IF NOT EXISTS \(Self.quote(name)) ON \(Self.table(entity.rootName)) (\(Self.indexedColumn(attribute)));")
            }
        }
    }

    /// The index of each uniqueness constraint (its bare name, `ix:u:Entity.first,last`, and
    /// the statement making it), over the constraint's columns in its order, on the table of
    /// the entity's hierarchy. Each is `CREATE INDEX IF NOT EXISTS`: a store made before these
    /// indexes existed gets them when it opens (``SQLiteStore``; the model hash leaves
    /// constraints out, so it did not change), and another process may add them meanwhile.
    ///
    /// Plain indexes, not `UNIQUE` ones: the shared layer enforces the rule
    /// (`UniquenessProbe`), and SQL's would differ from it: sub-entities share the table, so a
    /// sub-entity's own constraint would bind its siblings' rows too; and a save may swap two
    /// rows' values, which the shared layer allows (it judges the new state) but a `UNIQUE`
    /// index refuses half-way through the save's statements. The index only makes the check a
    /// lookup instead of a scan.
    ///
    /// A sub-entity's list repeats its parent's constraints: those get one index (named after
    /// the parent, which comes first). A single-attribute constraint on an indexed attribute
    /// reuses that attribute's index (`ix:Entity.name`, same column, same collation; a file
    /// made before attribute indexes took the collation has it remade when it opens). Names cannot collide with the other indexes:
    /// entity and property names hold only letters, digits and `_`, so no attribute index
    /// begins `ix:u:` (or `ix:e:`, ``entityIndexName(_:)``). Constraints naming a decimal or transformable attribute get none: no
    /// query compiles a comparison of those (the check reads rows and compares them in Swift),
    /// so such an index would only be kept up to date at every write.
    var uniquenessIndexes: [(name: String, sql: String)] {
        let held = Set(entities.map(\.name))
        var made: Set<[String]> = []
        var indexes: [(name: String, sql: String)] = []
        for entity in entities {
            for constraint in entity.uniquenessConstraints {
                let attributes = constraint.compactMap { entity.attribute(named: $0) }
                guard attributes.count == constraint.count,
                      !attributes.contains(where: { $0.isTransient || $0.type == .decimal || $0.type == .transformable }) else { continue }
                // The attribute's own index is made only by the entity declaring it.
                if attributes.count == 1, attributes[0].isIndexed, held.contains(attributes[0].entityName) { continue }
                let columns = attributes.map(Self.indexedColumn)
                guard made.insert([entity.rootName] + columns).inserted else { continue }
                let name = "ix:u:\(entity.name).\(constraint.joined(separator: ","))"
                indexes.append((name, "CREATE INDEX IF NOT EXISTS \(Self.quote(name)) ON \(Self.table(entity.rootName)) (\(columns.joined(separator: ", ")));"))
            }
        }
        return indexes
    }
}
