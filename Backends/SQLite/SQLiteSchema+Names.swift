import ObjectGraph

/// Names the SQLite store cannot give its tables and columns.
///
/// SQLite compares table, index and column names ignoring the case of ASCII letters, and keeps
/// names beginning with `sqlite_` for itself; the store names tables after entities and
/// columns after properties (see ``SQLiteSchema``). A model with two entities, or two
/// attributes or relationships of one entity, whose names differ only in such case would
/// collide there ("duplicate column name", "table … already exists" from deep inside the
/// creation of the file), though the model is sound and the other stores hold it.
extension SQLiteSchema {
    /// Why the store cannot lay this model out, or `nil` when it can.
    var nameClash: String? {
        let reason = "SQLite compares table and column names ignoring the case of ASCII letters"
        var entities: [String: String] = [:]
        for entity in self.entities.sorted(by: { $0.name < $1.name }) {
            let folded = Self.folded(entity.name)
            if folded.hasPrefix("sqlite_") {
                return "entity \(entity.name) would be a table named \(entity.name), and SQLite keeps names beginning with sqlite_ for itself"
            }
            if folded == "og_metadata" || folded == "og_primary_keys" {
                return "entity \(entity.name) would be a table named \(entity.name), the name of the store's own table \(folded)"
            }
            if let other = entities.updateValue(entity.name, forKey: folded) {
                return "entities \(other) and \(entity.name) would share a table name: \(reason)"
            }
            for (kind, names) in [("attributes", entity.attributes.filter { $0.entityName == entity.name }.map(\.name)),
                                  ("relationships", entity.relationships.filter { $0.entityName == entity.name }.map(\.name))] {
                var seen: [String: String] = [:]
                for name in names {
                    if let other = seen.updateValue(name, forKey: Self.folded(name)) {
                        return "\(entity.name)'s \(kind) \(other) and \(name) would share a column name: \(reason)"
                    }
                }
            }
        }
        return nil
    }

    /// `name` with its ASCII letters lowercased, as SQLite compares names.
    private static func folded(_ name: String) -> String {
        String(decoding: name.utf8.map { (65...90).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
    }
}
