import CSQLite

/// Tables wider than SQLite allows.
///
/// A hierarchy's table has the store's three columns (`pk`, `entity`, `version`) and the
/// columns of every entity in the hierarchy (see ``SQLiteSchema``): a root with more than
/// SQLite's column limit failed half-way through creating the file ("too many columns on …",
/// a backend error) and left an empty file behind, though the other stores hold the model.
extension SQLiteSchema {
    /// The most columns a table may have in the SQLite this process links
    /// (`SQLITE_LIMIT_COLUMN`, 2000 unless the library was built otherwise).
    ///
    /// Asked of an in-memory connection, once: the check runs before the store's file is
    /// opened (so that a refused model leaves no file), and a library built with another
    /// `SQLITE_MAX_COLUMN` is then judged by its own limit rather than by the usual default.
    static let columnLimit: Int = {
        var db: OpaquePointer?
        defer { sqlite3_close_v2(db) }
        guard sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK, let db else { return 2000 }
        return Int(sqlite3_limit(db, SQLITE_LIMIT_COLUMN, -1))
    }()

    /// Why a table of this schema would be wider than `limit` columns, or `nil` when none is.
    func tooManyColumns(limit: Int = columnLimit) -> String? {
        for (root, columns) in tableColumns.sorted(by: { $0.key < $1.key }) where columns.count + 3 > limit {
            return "the table of entity \(root) (and its sub-entities) would have \(columns.count + 3) columns (3 of the store's own and \(columns.count) for attributes, to-one relationships and order columns), and SQLite allows at most \(limit)"
        }
        return nil
    }
}
