extension FetchPredicate {
    /// The predicate with each temporary object ID it names replaced by `transform`'s answer;
    /// `nil` when that changes nothing (the common case builds nothing).
    func mappingTemporaryObjectIDs(_ transform: (ObjectID) -> ObjectID) -> FetchPredicate? {
        switch self {
        case .constant: return nil
        case .and(let parts): return Self.mapping(parts, transform).map(FetchPredicate.and)
        case .or(let parts): return Self.mapping(parts, transform).map(FetchPredicate.or)
        case .not(let inner): return inner.mappingTemporaryObjectIDs(transform).map(FetchPredicate.not)
        case .comparison(var comparison):
            let left = comparison.left.mappingTemporaryObjectIDs(transform)
            let right = comparison.right.mappingTemporaryObjectIDs(transform)
            guard left != nil || right != nil else { return nil }
            if let left { comparison.left = left }
            if let right { comparison.right = right }
            return .comparison(comparison)
        }
    }

    private static func mapping(_ parts: [FetchPredicate], _ transform: (ObjectID) -> ObjectID) -> [FetchPredicate]? {
        let mapped = parts.map { $0.mappingTemporaryObjectIDs(transform) }
        guard mapped.contains(where: { $0 != nil }) else { return nil }
        return zip(parts, mapped).map { $1 ?? $0 }
    }
}

extension PredicateOperand {
    /// See ``FetchPredicate/mappingTemporaryObjectIDs(_:)``.
    func mappingTemporaryObjectIDs(_ transform: (ObjectID) -> ObjectID) -> PredicateOperand? {
        switch self {
        case .object(let id):
            guard id.isTemporary else { return nil }
            let mapped = transform(id)
            return mapped == id ? nil : .object(mapped)
        case .list(let items):
            let mapped = items.map { $0.mappingTemporaryObjectIDs(transform) }
            guard mapped.contains(where: { $0 != nil }) else { return nil }
            return .list(zip(items, mapped).map { $1 ?? $0 })
        case .subqueryCount(let collection, let variable, let predicate):
            return predicate.mappingTemporaryObjectIDs(transform).map { .subqueryCount(collection: collection, variable: variable, predicate: $0) }
        default: return nil
        }
    }
}
