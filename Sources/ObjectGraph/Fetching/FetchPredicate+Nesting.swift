extension FetchPredicate {
    /// The most levels a predicate may nest: each AND, OR, NOT, comparison, list item and
    /// SUBQUERY is a level. Compiling, substituting and evaluating walk a predicate recursively, so one
    /// built in code thousands of levels deep overflowed the stack (10 000 NOTs stopped the
    /// process while compiling); the format parser stops at 200 of its own levels, well
    /// within this.
    public static let maximumNesting = 1_000

    /// Throws ``ObjectGraphError/Code/invalidFetch`` when the predicate nests deeper than
    /// ``maximumNesting``. The walk is iterative, so it holds for any depth itself.
    func checkNesting() throws {
        // A lone comparison of plain operands, the common predicate, needs no walk (and no
        // allocation for one).
        switch self {
        case .constant: return
        case .comparison(let c) where c.left.isLeaf && c.right.isLeaf: return
        default: break
        }
        enum Node {
            case predicate(FetchPredicate)
            case operand(PredicateOperand)
        }
        var pending: [(node: Node, depth: Int)] = [(.predicate(self), 1)]
        while let (node, depth) = pending.popLast() {
            guard depth <= Self.maximumNesting else {
                throw ObjectGraphError(
                    .invalidFetch,
                    "the predicate nests deeper than \(Self.maximumNesting) levels (AND, OR, NOT, comparisons, lists, SUBQUERY); flatten it, e.g. one AND of many parts instead of AND within AND")
            }
            switch node {
            case .predicate(.constant): break
            case .predicate(.and(let parts)), .predicate(.or(let parts)):
                for part in parts { pending.append((.predicate(part), depth + 1)) }
            case .predicate(.not(let inner)): pending.append((.predicate(inner), depth + 1))
            case .predicate(.comparison(let c)):
                // (Its operands are of its level; a list in one is a level deeper.)
                pending.append((.operand(c.left), depth))
                pending.append((.operand(c.right), depth))
            case .operand(.list(let items)):
                for item in items { pending.append((.operand(item), depth + 1)) }
            case .operand(.subqueryCount(_, _, let inner)): pending.append((.predicate(inner), depth + 1))
            case .operand: break
            }
        }
    }
}

extension PredicateOperand {
    /// Whether the operand holds no nested list or predicate.
    var isLeaf: Bool {
        switch self {
        case .list, .subqueryCount: return false
        case .keyPath, .constant, .object, .variable, .evaluatedObject: return true
        }
    }
}
