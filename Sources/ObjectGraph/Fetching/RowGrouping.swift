/// The one definition of grouping for dictionary fetches, over any rows the shared evaluator
/// reads (managed objects with unsaved changes, or stored snapshots): rows with equal key
/// values (``AttributeValue`` `==`, so canonically equivalent strings are equal) form a group,
/// groups come in the order of their first row, and without key paths all rows form exactly one
/// group — even when there are none, so aggregates over nothing still give a row.
enum RowGrouping {
    static func group<S: PredicateRowSource>(
        _ rows: [S.Row], by keys: [ResolvedKeyPath], _ evaluator: PredicateEvaluator<S>
    ) throws -> [(key: [AttributeValue], members: [S.Row])] {
        var groups: [(key: [AttributeValue], members: [S.Row])] = []
        var positions: [[AttributeValue]: Int] = [:]
        for row in rows {
            let key = try keys.map { try evaluator.sortValue($0, of: row) }
            if let position = positions[key] {
                groups[position].members.append(row)
            } else {
                positions[key] = groups.count
                groups.append((key, [row]))
            }
        }
        if keys.isEmpty && groups.isEmpty { groups = [([], [])] }
        return groups
    }
}
