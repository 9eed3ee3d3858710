extension CompiledComparison {
    /// What one side of a comparison holds, for ``checkObjects(_:_:_:)``.
    private enum Side {
        /// An object: SELF, an object ID, or a key path ending in a relationship.
        case object
        /// A value (described for the error): an attribute key path, a constant, a count.
        case value(String)
    }

    /// The objects and values `operand` holds (none for nil, each item of a list).
    private static func sides(_ operand: CompiledOperand) -> [Side] {
        switch operand {
        case .object, .evaluatedObject: return [.object]
        case .constant(let value): return value.isNull ? [] : [.value("a \(value.kindName) value")]
        case .keyPath(let path):
            if case .relationship = path.terminal { return [.object] }
            return [.value("'\(path.path)'")]
        case .subqueryCount: return [.value("a SUBQUERY count")]
        case .list(let items): return items.flatMap(sides)
        }
    }

    /// Refuses a comparison of an object (SELF, an object ID, a relationship) with a value, and
    /// of objects by anything but `==`, `!=`, IN and CONTAINS: none can hold, and they were
    /// answered as if they might (`SELF == 5`, `tags CONTAINS 'red'` and `chat IN {1, 2}`
    /// matched nothing; `name == chat` matched the rows where both were nil). Comparing with
    /// nil stays allowed on either kind.
    static func checkObjects(_ left: CompiledOperand, _ op: ComparisonOperator, _ right: CompiledOperand) throws {
        let lefts = sides(left), rights = sides(right)
        let objects = (lefts + rights).contains { if case .object = $0 { return true } else { return false } }
        guard objects else { return }
        for (mine, theirs) in [(lefts, rights), (rights, lefts)] {
            guard mine.contains(where: { if case .object = $0 { return true } else { return false } }) else { continue }
            for case .value(let what) in theirs {
                throw ObjectGraphError(.invalidFetch, "an object (SELF, an object ID or a relationship) is compared with \(what) by \(op.rawValue); objects compare only with objects or nil")
            }
        }
        switch op {
        case .equal, .notEqual, .in, .contains: return
        default: throw ObjectGraphError(.invalidFetch, "objects have no order and are not text: \(op.rawValue) cannot compare them (use ==, !=, IN or CONTAINS)")
        }
    }
}
