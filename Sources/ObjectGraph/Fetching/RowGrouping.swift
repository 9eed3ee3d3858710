import Foundation

/// The one definition of grouping for dictionary fetches, over any rows the shared evaluator
/// reads (managed objects with unsaved changes, or stored snapshots): rows with equal key
/// values (``AttributeValue`` `==`, so canonically equivalent strings are equal) form a group,
/// groups come in the order of their first row, and without key paths all rows form exactly one
/// group — even when there are none, so aggregates over nothing still give a row.
///
/// A key path ending in a to-one relationship groups by destination, as Core Data groups by
/// object: its key is the destination's ID as a `.uri` (the form a to-one column holds, see
/// ``FetchedRow/objectID(_:)``), and rows without a destination form one group keyed `.null`.
enum RowGrouping {
    static func group<S: PredicateRowSource>(
        _ rows: [S.Row], by keys: [ResolvedKeyPath], _ evaluator: PredicateEvaluator<S>
    ) throws -> [(key: [AttributeValue], members: [S.Row])] {
        var groups: [(key: [AttributeValue], members: [S.Row])] = []
        var positions: [[AttributeValue]: Int] = [:]
        for row in rows {
            let key = try keys.map { try value(of: $0, in: row, evaluator) }
            let lookup = key.contains(where: \.isNaN) ? key.map(Self.groupable) : key
            if let position = positions[lookup] {
                groups[position].members.append(row)
            } else {
                positions[lookup] = groups.count
                groups.append((key, [row]))
            }
        }
        if keys.isEmpty && groups.isEmpty { groups = [([], [])] }
        return groups
    }

    /// The value of `path` in `row` as a group key or a column holds it: an attribute's value,
    /// or for a to-one relationship its destination's ID as a URI (`.null` when empty).
    static func value<S: PredicateRowSource>(of path: ResolvedKeyPath, in row: S.Row, _ evaluator: PredicateEvaluator<S>) throws -> AttributeValue {
        guard case .relationship = path.terminal else { return try evaluator.sortValue(path, of: row) }
        // See FetchedRow.objectID(_:) for why an ID travels as its URI.
        guard case .object(let id?)? = try evaluator.values(of: path, from: row).first else { return .null }
        return .uri(id.uriRepresentation)
    }

    /// `value` as a dictionary key that groups NaNs by their bits: NaN is unequal to itself,
    /// so each row holding one made a group of its own, where SQL groups a stored value with
    /// its equals (and a NaN is stored as its bits). (A key path's values are all of one kind,
    /// so the stand-in meets no real value of its kind.)
    static func groupable(_ value: AttributeValue) -> AttributeValue {
        func bits(_ v: Double) -> AttributeValue { .data(withUnsafeBytes(of: v.bitPattern) { Data($0) }) }
        switch value {
        case .double(let v) where v.isNaN: return bits(v)
        case .date(let d) where d.timeIntervalSinceReferenceDate.isNaN: return bits(d.timeIntervalSinceReferenceDate)
        case .decimal(let d) where d.isNaN: return .string("NaN")
        default: return value
        }
    }
}
