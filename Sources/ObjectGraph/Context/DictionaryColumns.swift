import Foundation

/// A fetched column resolved against the entity.
struct ResolvedColumn {
    let property: FetchedProperty
    let path: ResolvedKeyPath?

    init(_ property: FetchedProperty, entity: EntityDescription, model: ManagedObjectModel) throws {
        self.property = property
        switch property.kind {
        case .count: path = nil
        case .value(let keyPath), .aggregate(_, let keyPath):
            let resolved = try ResolvedKeyPath.resolve(keyPath, from: entity, in: model)
            if case .relationship(let relationship) = resolved.terminal {
                // Core Data's propertiesToFetch takes to-one relationships (the destination's
                // ID); a to-many one has many destinations, and a dictionary holds one value.
                guard case .value = property.kind, !resolved.yieldsMany else {
                    let what = relationship.isToMany || resolved.yieldsMany ? "reaches a to-many relationship, whose many destinations do not fit one value" : "is a relationship, which has no value to aggregate"
                    throw ObjectGraphError(.invalidFetch, key: keyPath, "column '\(property.name)' of the dictionary fetch of \(entity.name): '\(keyPath)' \(what); fetch '\(keyPath).@count', an attribute through to-one relationships, or fetch \(relationship.destinationName) instead")
                }
                path = resolved
                return
            }
            guard resolved.attributeType != nil, !resolved.yieldsMany else {
                throw ObjectGraphError(.invalidFetch, key: keyPath, "column '\(property.name)': '\(keyPath)' must reach one attribute value or a to-one relationship (through to-one relationships, or an aggregate such as @count)")
            }
            // The rule of @sum and @avg in key paths: a sum or mean of strings, data or UUIDs
            // has no meaning (each came out as 0.0 or nil, as if there were no values).
            if case .aggregate(let function, _) = property.kind, function == .sum || function == .average,
               let type = resolved.attributeType, !type.isNumeric, type != .date {
                throw ObjectGraphError(.invalidFetch, key: keyPath, "column '\(property.name)': \(function.rawValue) needs a numeric attribute; \(entity.name).\(keyPath) is \(type.rawValue)")
            }
            path = resolved
        }
    }

    /// The columns of a dictionary fetch that names none: every stored attribute of the
    /// entity, in model order (inherited first), as Core Data returns them. Transient
    /// attributes are left out (stores hold no value for them), and so are relationships,
    /// which Core Data returns only when named.
    static func allAttributes(of entity: EntityDescription) -> [FetchedProperty] {
        entity.attributes.filter { !$0.isTransient }.map { .key($0.name) }
    }

    var isAggregate: Bool {
        if case .value = property.kind { return false }
        return true
    }

    /// Whether the column holds the object ID a to-one relationship names.
    var isObjectID: Bool {
        if case .relationship? = path?.terminal { return true }
        return false
    }

    func value<S>(of row: S.Row, _ evaluator: PredicateEvaluator<S>) throws -> AttributeValue {
        guard let path else { return .integer(1) }
        return try RowGrouping.value(of: path, in: row, evaluator)
    }

    func aggregate<S>(over members: [S.Row], _ evaluator: PredicateEvaluator<S>, groupKey: [AttributeValue], groupBy: [String]) throws -> AttributeValue {
        switch property.kind {
        case .count: return .integer(Int64(members.count))
        case .value(let keyPath):
            if let index = groupBy.firstIndex(of: keyPath) { return groupKey[index] }
            return try members.first.map { try value(of: $0, evaluator) } ?? .null
        case .aggregate(let function, _):
            return function.apply(try members.map { try value(of: $0, evaluator) })
        }
    }
}

/// A sort key of a dictionary fetch, resolved: a result column, or (without grouping or
/// aggregates) any attribute key path of the entity, as Core Data sorts dictionary results by
/// any attribute, fetched or not.
struct DictionarySortKey {
    enum Source {
        /// The column at this position.
        case column(Int)
        /// An attribute key path of the fetched object (not a column).
        case path(ResolvedKeyPath)
    }

    let key: SortKey
    let source: Source

    /// Resolves `sortKeys`: a key naming a column sorts by it (a column's name wins over an
    /// attribute of the same name); otherwise, when each row is one object, by the key path.
    /// Grouped rows (or one row of aggregates) have no single object to read an attribute
    /// of, so there a key must name a group-by column or an aggregate.
    static func resolve(_ sortKeys: [SortKey], columns: [ResolvedColumn], rowsAreObjects: Bool, entity: EntityDescription, model: ManagedObjectModel) throws -> [DictionarySortKey] {
        try sortKeys.map { key in
            if let position = columns.firstIndex(where: { $0.property.name == key.keyPath }) {
                guard !columns[position].isObjectID else {
                    throw ObjectGraphError(.invalidFetch, key: key.keyPath, "cannot sort the dictionary fetch of \(entity.name) by column '\(key.keyPath)': it holds object IDs, which have no order; sort by an attribute of the destination, such as '\(key.keyPath).<attribute>'")
                }
                return DictionarySortKey(key: key, source: .column(position))
            }
            guard rowsAreObjects else {
                let names = columns.map(\.property.name)
                throw ObjectGraphError(.invalidFetch, key: key.keyPath, "a grouped or aggregating dictionary fetch of \(entity.name) sorts by its group-by columns and aggregates; '\(key.keyPath)' is not one of \(names)")
            }
            // Compiled as a fetch's sort key, with its errors (unknown key, to-many step).
            let path = try CompiledSort.compile([key], for: entity, in: model).keys[0].path
            return DictionarySortKey(key: key, source: .path(path))
        }
    }

    /// `rows` in the order of `keys`; ties keep their order (the store's, or the groups').
    /// `pathValue` reads a key that is no column from the object of row `index` (only rows
    /// that are objects have such keys).
    static func sort(_ rows: [FetchedRow], by keys: [DictionarySortKey], pathValue: (ResolvedKeyPath, _ index: Int) throws -> AttributeValue) rethrows -> [FetchedRow] {
        guard !keys.isEmpty, rows.count > 1 else { return rows }
        // Each value read and folded once, not once per comparison.
        let prepared = try rows.indices.map { index in
            try keys.map { key -> AttributeValue in
                switch key.source {
                case .column(let position): return CompiledSort.prepare(rows[index].storage[position], key.key.comparison)
                case .path(let path): return CompiledSort.prepare(try pathValue(path, index), key.key.comparison)
                }
            }
        }
        let order = rows.indices.sorted { a, b in
            for (position, key) in keys.enumerated() {
                let order = CompiledSort.compare(prepared[a][position], prepared[b][position], key.key.comparison)
                if order == .orderedSame { continue }
                return key.key.ascending ? order == .orderedAscending : order == .orderedDescending
            }
            return a < b
        }
        return order.map { rows[$0] }
    }
}
