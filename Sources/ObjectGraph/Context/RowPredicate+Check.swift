import Foundation

extension RowPredicate {
    /// Refuses a HAVING predicate that cannot mean anything for rows of `columns`, before any
    /// row is filtered: evaluation finds an unknown column only on the rows it reaches (none
    /// for an empty result, none after a false `AND` operand), and it took an invalid MATCHES
    /// pattern or an ANY/ALL/NONE modifier as a plain false or a plain comparison.
    static func check(_ predicate: FetchPredicate, columns: Set<String>) throws {
        switch predicate {
        case .constant: return
        case .and(let parts), .or(let parts): for part in parts { try check(part, columns: columns) }
        case .not(let inner): try check(inner, columns: columns)
        case .comparison(let c):
            guard c.modifier == .direct else {
                throw ObjectGraphError(.invalidFetch, "\(c.modifier.rawValue) has no meaning in a HAVING predicate: each column holds one value per row")
            }
            try checkOperand(c.left, columns: columns)
            try checkOperand(c.right, columns: columns)
            if c.op == .matches, case .constant(.string(let source)) = c.right {
                do { _ = try StringOperators.pattern(c.op, source, c.options) } catch {
                    throw ObjectGraphError(.invalidFetch, "'\(source)' is not a valid MATCHES pattern (in the HAVING predicate)")
                }
            }
        }
    }

    private static func checkOperand(_ operand: PredicateOperand, columns: Set<String>) throws {
        switch operand {
        case .constant: return
        case .list(let items): for item in items { try checkOperand(item, columns: columns) }
        case .keyPath(let name):
            guard columns.contains(name) else {
                throw ObjectGraphError(.invalidFetch, key: name, "the HAVING predicate names '\(name)', which is not a fetched column (\(columns.sorted().joined(separator: ", ")))")
            }
        default:
            throw ObjectGraphError(.invalidFetch, "a HAVING predicate compares fetched columns with constants")
        }
    }
}
