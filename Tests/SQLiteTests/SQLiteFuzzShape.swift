import CSQLite
import Foundation
import ObjectGraph
import ObjectGraphConformance

// The damage the SQLite fuzz test (``SQLiteValueFuzzTests``) writes past the store, through
// a ``RawDatabase``: one cell, row, reference, order or entity name.

extension SeededRandom {
    /// 64 random bits.
    mutating func bits() -> UInt64 { UInt64(truncatingIfNeeded: next(Int.max)) << 1 ^ UInt64(truncatingIfNeeded: next(2)) }
    /// One of `elements`.
    mutating func pick<T>(_ elements: [T]) -> T { elements[next(elements.count)] }
    /// True `percent` times in a hundred.
    mutating func chance(_ percent: Int) -> Bool { next(100) < percent }
}

/// The tables of a store file, and the mutations of one thing in them.
struct FuzzShape {
    struct Table {
        let name: String
        let columns: [String]
        /// The columns of the table's primary key (`pk`, `src, dst`, `key`, `root`).
        let key: [String]
        var isJoin: Bool { name.hasPrefix("j:") }
        var isEntityTable: Bool { columns.contains("pk") }
    }

    struct Mutation {
        let kind: String
        let description: String
        let applied: Bool
    }

    let tables: [Table]
    let entityNames: [String]
    /// Tables holding several entities (their `entity` column is read), and the entity-name
    /// columns of to-ones to such tables: the names a reader decodes.
    let sharedTables: [String]
    let polymorphicColumns: [String]

    init(_ url: URL, model: ManagedObjectModel) throws {
        let db = try RawDatabase(url)
        let names = (db.run("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name") ?? []).compactMap { row -> String? in
            if case .text(let bytes) = row[0] { return String(decoding: bytes, as: UTF8.self) }
            return nil
        }
        tables = names.map { name in
            let info = db.run("PRAGMA table_info(\(FuzzShape.quote(name)))") ?? []
            var columns: [String] = [], key: [(Int64, String)] = []
            for row in info {
                guard case .text(let bytes) = row[1] else { continue }
                let column = String(decoding: bytes, as: UTF8.self)
                columns.append(column)
                if case .integer(let position) = row[5], position > 0 { key.append((position, column)) }
            }
            return Table(name: name, columns: columns, key: key.sorted { $0.0 < $1.0 }.map(\.1))
        }
        entityNames = model.entities.map(\.name).sorted()
        let sharedTables = Set(model.entities.map(\.rootName)).filter { root in model.entities.filter { $0.rootName == root }.count > 1 }.sorted()
        self.sharedTables = sharedTables
        polymorphicColumns = model.entities.flatMap { entity in
            entity.toOneRelationships.filter { $0.entityName == entity.name && sharedTables.contains(model.destination(of: $0)?.rootName ?? "") }.map { "fke:\(entity.name).\($0.name)" }
        }.sorted()
    }

    static func quote(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// The rows of `table`, by key, with every column.
    func rows(_ db: RawDatabase, _ table: Table) -> [[SQLValue]] {
        let order = table.key.isEmpty ? "" : " ORDER BY " + table.key.map(Self.quote).joined(separator: ", ")
        return db.run("SELECT \(table.columns.map(Self.quote).joined(separator: ", ")) FROM \(Self.quote(table.name))\(order)") ?? []
    }

    /// `WHERE` naming `row` of `table` by its key, with the values to bind.
    func locate(_ table: Table, _ row: [SQLValue]) -> (String, [SQLValue]) {
        let key = table.key.isEmpty ? table.columns : table.key
        let clause = key.map { "\(Self.quote($0)) IS ?" }.joined(separator: " AND ")
        return (" WHERE " + clause, key.map { row[table.columns.firstIndex(of: $0)!] })
    }

    /// A random value of a random SQLite type.
    func randomValue(_ random: inout SeededRandom) -> SQLValue {
        switch random.next(5) {
        case 0: return .null
        case 1:
            return .integer(random.pick([
                0, 1, -1, 2, 3, Int64.min, Int64.max, Int64.min + 1, Int64.max - 1, Int64(Int16.max) + 1, Int64(Int16.min) - 1,
                Int64(Int32.max) + 1, Int64(Int32.min) - 1, 255, 1 << 53, -(1 << 53) - 1, Int64(bitPattern: random.bits()), Int64(random.next(200)) - 5,
            ]))
        case 2:
            return .real(random.pick([
                Double.nan, .infinity, -.infinity, -0.0, 0.0, 0.5, -1.5, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNonzeroMagnitude,
                1e19, -9.3e18, 9.223372036854775807e18, 32768.0, 1e308, 978_307_200.0, Double(bitPattern: random.bits()),
            ]))
        case 3:
            let choices: [[UInt8]] = [
                [], Array("x".utf8), Array("Ann".utf8), Array("NaN".utf8), Array("12".utf8), Array("-1e999".utf8), Array("1e999".utf8),
                Array("12.5".utf8), Array(" 7 ".utf8), Array("00000000-0000-0000-0000-000000000001".utf8), Array("not-a-uuid".utf8),
                Array("http://a b".utf8), Array("file:///x".utf8), [0x41, 0xFF, 0x42], [0xC3], [0xED, 0xA0, 0x80], [0x61, 0x00, 0x62],
                Array(String(repeating: "long ", count: 14_000).utf8), Array(random.pick(entityNames).utf8),
                Array("{\"primary\":\"red\",\"accents\":[]}".utf8), Array("{".utf8), Array("e\u{301}😀".utf8), Array("2024-01-01".utf8),
                Array("-0".utf8), Array("0x10".utf8), Array("9223372036854775808".utf8), Array("abc".utf8),
            ]
            return .text(random.pick(choices))
        default:
            let nan = withUnsafeBytes(of: Double.nan.bitPattern.bigEndian) { Array($0) }
            let negativeNaN = withUnsafeBytes(of: (-Double.nan).bitPattern.bigEndian) { Array($0) }
            let choices: [[UInt8]] = [
                [], nan, negativeNaN, (0..<8).map { _ in UInt8(truncatingIfNeeded: random.bits()) }, (0..<16).map { _ in UInt8(truncatingIfNeeded: random.bits()) },
                // (Large blobs are valid UTF-8 read as text: each invalid byte decoded costs a
                // thrown-error backtrace under Swift Testing, 35 µs, so 200 KB of them took 7 s
                // a read; outside tests the same read takes milliseconds.)
                [0], [0xFF], Array(repeating: 0x61, count: 200_000), Array(repeating: 0xAB, count: 1_000), Array("{\"primary\":\"red\",\"accents\":[\"x\"]}".utf8), Array("{\"primary\":1}".utf8),
                Array("Ann".utf8), [0x41, 0xFF, 0x42], Array("12".utf8),
            ]
            return .blob(random.pick(choices))
        }
    }

    /// Changes one random thing in the store at `url`.
    func mutate(_ url: URL, _ random: inout SeededRandom) throws -> Mutation {
        let db = try RawDatabase(url)
        let entityTables = tables.filter(\.isEntityTable)
        let joinTables = tables.filter(\.isJoin)
        func update(_ table: Table, _ row: [SQLValue], _ column: String, _ value: SQLValue) -> Bool {
            let (clause, keys) = locate(table, row)
            return db.run("UPDATE \(Self.quote(table.name)) SET \(Self.quote(column)) = ?\(clause)", [value] + keys) != nil && db.changes > 0
        }
        func someRow(_ table: Table) -> [SQLValue]? {
            let all = rows(db, table)
            return all.isEmpty ? nil : random.pick(all)
        }
        func keys(of table: Table) -> [Int64] {
            (db.run("SELECT pk FROM \(Self.quote(table.name)) ORDER BY pk") ?? []).compactMap { if case .integer(let key) = $0[0] { return key } else { return nil } }
        }
        let kind = random.next(100)
        switch kind {
        case 0..<40:
            // One cell of any table, a random value of a random type.
            let table = random.pick(tables)
            guard let row = someRow(table) else { return Mutation(kind: "cell", description: "no row in \(table.name)", applied: false) }
            let column = random.pick(table.columns)
            let value = randomValue(&random)
            let applied = update(table, row, column, value)
            return Mutation(kind: "cell", description: "set \(table.name).\(column) of row \(locate(table, row).1) to \(value)", applied: applied)
        case 40..<50:
            let table = random.pick(tables)
            guard let row = someRow(table) else { return Mutation(kind: "delete", description: "no row in \(table.name)", applied: false) }
            let (clause, keys) = locate(table, row)
            let applied = db.run("DELETE FROM \(Self.quote(table.name))\(clause)", keys) != nil && db.changes > 0
            return Mutation(kind: "delete", description: "delete row \(keys) of \(table.name)", applied: applied)
        case 50..<60:
            // A copy of a row under a new key (or, in a join table, a new source or destination).
            let table = random.pick(entityTables + joinTables)
            guard var row = someRow(table) else { return Mutation(kind: "duplicate", description: "no row in \(table.name)", applied: false) }
            let original = locate(table, row).1
            if table.isEntityTable {
                let next = (keys(of: table).last ?? 0) + 1
                row[table.columns.firstIndex(of: "pk")!] = .integer(random.pick([next, next + 1000, Int64.max]))
            } else {
                let column = random.pick(["src", "dst"])
                let destinations = entityTables.flatMap { keys(of: $0) }
                row[table.columns.firstIndex(of: column)!] = .integer(random.chance(50) && !destinations.isEmpty ? random.pick(destinations) : 4242)
            }
            let sql = "INSERT INTO \(Self.quote(table.name)) (\(table.columns.map(Self.quote).joined(separator: ", "))) VALUES (\(table.columns.map { _ in "?" }.joined(separator: ", ")))"
            let applied = db.run(sql, row) != nil && db.changes > 0
            return Mutation(kind: "duplicate", description: "copy row \(original) of \(table.name) as \(locate(table, row).1)", applied: applied)
        case 60..<75:
            // A reference to a missing row, another table's row, or of the wrong entity.
            var references: [(Table, String)] = []
            for table in entityTables { for column in table.columns where column.hasPrefix("fk:") || column.hasPrefix("fke:") { references.append((table, column)) } }
            for table in joinTables { for column in ["src", "dst", "dste"] { references.append((table, column)) } }
            let read = references.filter { polymorphicColumns.contains($0.1) }
            let (table, column) = random.chance(30) && !read.isEmpty ? random.pick(read) : random.pick(references)
            guard let row = someRow(table) else { return Mutation(kind: "reference", description: "no row in \(table.name)", applied: false) }
            let value: SQLValue
            if column.hasPrefix("fke:") || column == "dste" {
                value = random.chance(80) ? .text(random.pick(entityNames)) : random.pick([.text("Bogus"), .text(""), .null, .integer(1)])
            } else {
                let other = random.pick(entityTables)
                let existing = keys(of: other)
                let missing = (existing.last ?? 0) + 1 + Int64(random.next(5))
                value = .integer(random.chance(60) && !existing.isEmpty ? random.pick(existing) : random.pick([missing, 0, -1, Int64.max]))
            }
            let applied = update(table, row, column, value)
            return Mutation(kind: "reference", description: "point \(table.name).\(column) of row \(locate(table, row).1) at \(value)", applied: applied)
        case 75..<85:
            // Order positions: an ordered to-many's column, or a join table's positions.
            var orders: [(Table, String)] = []
            for table in entityTables { for column in table.columns where column.hasPrefix("ord:") { orders.append((table, column)) } }
            for table in joinTables { orders.append((table, "pos")) }
            let (table, column) = random.pick(orders)
            let all = rows(db, table)
            let style = random.next(5)
            var applied = false
            for (index, row) in all.enumerated() {
                let value: SQLValue = switch style {
                case 0: .integer(7)
                case 1: .integer(Int64(all.count - index))
                case 2: random.chance(50) ? .null : .integer(Int64(random.next(3)))
                case 3: random.pick([.integer(Int64.min), .integer(Int64.max), .integer(-1), .real(.nan), .real(1.5), .text("x")])
                default: randomValue(&random)
                }
                applied = update(table, row, column, value) || applied
            }
            return Mutation(kind: "order", description: "scramble \(table.name).\(column) (style \(style), \(all.count) rows)", applied: applied)
        default:
            // The entity column: another entity's name, or garbage.
            let shared = entityTables.filter { sharedTables.contains($0.name) }
            let table = random.chance(60) && !shared.isEmpty ? random.pick(shared) : random.pick(entityTables)
            guard let row = someRow(table) else { return Mutation(kind: "entity", description: "no row in \(table.name)", applied: false) }
            let value: SQLValue = random.chance(75) ? .text(random.pick(entityNames)) : random.pick([.text("Bogus"), .text(""), .text([0x43, 0xFF]), .integer(3), .blob([0x43, 0x61, 0x72])])
            let applied = update(table, row, "entity", value)
            return Mutation(kind: "entity", description: "set \(table.name).entity of row \(locate(table, row).1) to \(value)", applied: applied)
        }
    }
}
