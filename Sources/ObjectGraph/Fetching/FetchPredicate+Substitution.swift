extension FetchPredicate {
    /// The predicate with every `$VARIABLE` replaced by its value; throws
    /// ``ObjectGraphError/Code/invalidFetch`` naming a variable that has none.
    public func substituting(_ variables: [String: AttributeValue]) throws -> FetchPredicate {
        switch self {
        case .constant: return self
        case .and(let parts): return .and(try parts.map { try $0.substituting(variables) })
        case .or(let parts): return .or(try parts.map { try $0.substituting(variables) })
        case .not(let inner): return .not(try inner.substituting(variables))
        case .comparison(var comparison):
            comparison.left = try comparison.left.substituting(variables)
            comparison.right = try comparison.right.substituting(variables)
            return .comparison(comparison)
        }
    }
}

extension PredicateOperand {
    func substituting(_ variables: [String: AttributeValue]) throws -> PredicateOperand {
        switch self {
        case .variable(let name):
            guard let value = variables[name] else {
                throw ObjectGraphError(.invalidFetch, key: "$" + name, "no value was given for variable $\(name)")
            }
            return .constant(value)
        case .list(let items): return .list(try items.map { try $0.substituting(variables) })
        case .subqueryCount(let collection, let variable, let predicate):
            return .subqueryCount(collection: collection, variable: variable, predicate: try predicate.substituting(variables))
        default: return self
        }
    }
}
