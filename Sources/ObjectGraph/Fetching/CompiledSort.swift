import Foundation

/// Sort keys resolved against an entity, and the one sorting routine every store's answer
/// must agree with.
public struct CompiledSort: Sendable {
    /// The resolved keys, in priority order.
    public let keys: [(path: ResolvedKeyPath, key: SortKey)]

    /// Resolves `sortKeys` for `entity`. Keys must reach an attribute through to-one
    /// relationships only.
    public static func compile(_ sortKeys: [SortKey], for entity: EntityDescription, in model: ManagedObjectModel) throws -> CompiledSort {
        var keys: [(ResolvedKeyPath, SortKey)] = []
        for key in sortKeys {
            let path = try ResolvedKeyPath.resolve(key.keyPath, from: entity, in: model)
            guard !path.yieldsMany, path.attributeType != nil else {
                throw ObjectGraphError(
                    .invalidFetch, key: key.keyPath,
                    "cannot sort \(entity.name) by '\(key.keyPath)': sort keys must reach an attribute through to-one relationships")
            }
            keys.append((path, key))
        }
        return CompiledSort(keys: keys)
    }

    /// Sorts `rows`, reading values through `evaluator`; ties go by primary key.
    public func sort<S: PredicateRowSource>(_ rows: [S.Row], using evaluator: PredicateEvaluator<S>) throws -> [S.Row] {
        var decorated: [(values: [AttributeValue], id: ObjectID, row: S.Row)] = []
        decorated.reserveCapacity(rows.count)
        for row in rows {
            var values: [AttributeValue] = []
            values.reserveCapacity(keys.count)
            for (path, key) in keys {
                values.append(Self.prepare(try evaluator.sortValue(path, of: row), key.comparison))
            }
            decorated.append((values, evaluator.source.objectID(of: row), row))
        }
        decorated.sort { a, b in
            for (index, (_, key)) in keys.enumerated() {
                let order = Self.compare(a.values[index], b.values[index], key.comparison)
                if order == .orderedSame { continue }
                return key.ascending ? order == .orderedAscending : order == .orderedDescending
            }
            return ObjectID.storageOrder(a.id, b.id)
        }
        return decorated.map(\.row)
    }

    /// Folds a string once before sorting so comparisons stay cheap.
    public static func prepare(_ value: AttributeValue, _ comparison: SortKey.Comparison) -> AttributeValue {
        guard case .string(let s) = value else { return value }
        switch comparison {
        case .natural: return value
        case .caseInsensitive: return .string(TextFolding.fold(s, .caseInsensitive))
        case .localizedStandard: return .string(TextFolding.fold(s, [.caseInsensitive, .diacriticInsensitive]))
        }
    }

    /// Compares two prepared values: `nil` first, then by ``AttributeValue/compare(_:_:)``,
    /// NaN last (after +∞: a sort needs an order where comparisons have none, and one that
    /// leaves the other values in theirs); localized-standard strings compare digit runs as
    /// numbers.
    public static func compare(_ a: AttributeValue, _ b: AttributeValue, _ comparison: SortKey.Comparison) -> ComparisonResult {
        switch (a.isNull, b.isNull) {
        case (true, true): return .orderedSame
        case (true, false): return .orderedAscending
        case (false, true): return .orderedDescending
        default: break
        }
        switch (a.isNaN, b.isNaN) {
        case (true, true): return .orderedSame
        case (true, false): return .orderedDescending
        case (false, true): return .orderedAscending
        default: break
        }
        if comparison == .localizedStandard, case .string(let s) = a, case .string(let t) = b {
            return s.compare(t, options: [.numeric], range: nil, locale: nil)
        }
        return AttributeValue.compare(a, b) ?? .orderedSame
    }
}

extension ObjectID {
    /// The tie-break order of fetch results: permanent IDs by primary key (then entity name),
    /// before temporary IDs in creation order.
    public static func storageOrder(_ a: ObjectID, _ b: ObjectID) -> Bool {
        switch (a.isTemporary, b.isTemporary) {
        case (false, false):
            if a.value != b.value { return a.value < b.value }
            return a.entityToken != b.entityToken && a.entityName < b.entityName
        case (false, true): return true
        case (true, false): return false
        case (true, true): return UInt64(bitPattern: a.value) < UInt64(bitPattern: b.value)
        }
    }
}
