extension CompiledComparison {
    /// Refuses two key paths whose values cannot meet (`string == int16`, `date < double`), and
    /// a string operator whose right key path is not a string (`name ENDSWITH price`): the
    /// checks of constants did not look at key paths on the right, so these held for nothing.
    /// Numbers meet across integer, floating and decimal kinds (and Booleans, which compare
    /// with 0 and 1); anything else meets only its own type.
    static func checkKeyPaths(_ left: CompiledOperand, _ op: ComparisonOperator, _ right: CompiledOperand) throws {
        guard case .keyPath(let r) = right, let rightType = r.attributeType else { return }
        switch op {
        case .beginsWith, .endsWith, .contains, .like, .matches:
            if rightType != .string {
                throw ObjectGraphError(.invalidFetch, key: r.path, "\(op.rawValue) needs a string on its right, but \(r.path) is \(rightType.rawValue)")
            }
        default: break
        }
        guard case .keyPath(let l) = left, let leftType = l.attributeType else { return }
        func isNumber(_ type: AttributeType) -> Bool { type.isNumeric || type == .boolean }
        guard leftType == rightType || (isNumber(leftType) && isNumber(rightType)) else {
            throw ObjectGraphError(.invalidFetch, key: l.path, "type mismatch: \(l.path) is \(leftType.rawValue) but is compared with \(r.path), which is \(rightType.rawValue)")
        }
    }
}
