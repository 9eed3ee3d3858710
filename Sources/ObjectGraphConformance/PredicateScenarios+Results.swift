import Foundation
import ObjectGraph

/// Results of format-string fetches: sorting on several keys with ties and `nil`s, string
/// comparisons of sort keys, paging across ties, prefetching round trips, and unsaved changes
/// combined with sort and limit.
extension PredicateScenarios {
    /// Checks the order of the rows matching `format` under `sortKeys`, in both contexts of
    /// `rows` (in the dirty one, the unsaved copy of the all-`nil` row ties with it on every
    /// key and follows it: permanent IDs before temporary ones).
    static func expectOrder(_ rows: Fixture, _ format: String, _ sortKeys: [SortKey], _ expected: [Int], _ label: String, file: String = #filePath, line: Int = #line) throws {
        var pending = expected
        if let copied = rows.copiedRow, let at = expected.firstIndex(of: copied) { pending.insert(rows.ids.count, at: at + 1) }
        for (context, want, path) in [(rows.clean, expected, "store"), (rows.dirty, pending, "pending changes")] {
            let found = try context.performAndWait {
                let request = FetchRequest<ManagedObject>(entityName: rows.entityName, predicate: try FetchPredicate(format: format), sortKeys: sortKeys)
                return try context.fetchObjectIDs(request).map { rows.ids.firstIndex(of: $0) ?? rows.ids.count }
            }
            try checkEqual(found, want, "\(label) [\(path)]", file: file, line: line)
        }
    }

    static let results: [ConformanceScenario] = [
        ConformanceScenario("predicates.sort.tiesAndNilsOnSeveralKeys") { env in
            // (int16, string, double); row 5 is all nil; rows 2 and 7 tie on every key.
            let table: [(Int16?, String?, Double?)] = [
                (1, "b", nil), (nil, "a", 2.0), (1, "a", 1.0), (2, nil, 1.0), (1, "b", 0.5), (nil, nil, nil), (2, "a", 1.0), (1, "a", 1.0),
            ]
            let rows = try Fixture.allTypes(env, table.map { int16, string, double in
                var row: [String: Any] = [:]
                if let int16 { row["int16"] = int16 }
                if let string { row["string"] = string }
                if let double { row["double"] = double }
                return row
            })
            try expectOrder(rows, "TRUEPREDICATE", [SortKey("int16"), SortKey("string"), SortKey("double", ascending: false)],
                            [5, 1, 2, 7, 4, 0, 3, 6], "nil first when ascending, last when descending; full ties by primary key")
            try expectOrder(rows, "TRUEPREDICATE", [SortKey("int16", ascending: false), SortKey("double")],
                            [3, 6, 0, 4, 2, 7, 5, 1], "descending first key, ascending second")
            try expectOrder(rows, "TRUEPREDICATE", [SortKey("string", ascending: false), SortKey("int16", ascending: false)],
                            [0, 4, 6, 2, 7, 1, 3, 5], "descending on both keys: ties still in primary-key order")
            try expectOrder(rows, "int16 != nil", [SortKey("double"), SortKey("string")],
                            [0, 4, 3, 2, 6, 7], "with a predicate")
            try expectOrder(rows, "string == nil OR double == nil", [SortKey("double", ascending: false)],
                            [3, 0, 5], "descending alone: nils last, in primary-key order")
        },
        ConformanceScenario("predicates.sort.caseInsensitiveAndLocalizedStandard") { env in
            let strings = ["banana", "Banana", "apple", "Éclair", "eclair", "straße", "STRASSE", "file10", "file2", "File1", "fïle3", "Zed"]
            let rows = try Fixture.allTypes(env, strings.map { ["string": $0] } + [[:]])
            try expectOrder(rows, "TRUEPREDICATE", [SortKey("string")],
                            [12, 1, 9, 6, 11, 2, 0, 4, 7, 8, 10, 5, 3], "natural: Unicode scalars (upper case, lower case, then accented)")
            try expectOrder(rows, "TRUEPREDICATE", [SortKey("string", comparison: .caseInsensitive)],
                            [12, 2, 0, 1, 4, 9, 7, 8, 10, 5, 6, 11, 3], "case-insensitive: banana/Banana and straße/STRASSE tie (full case folding)")
            try expectOrder(rows, "TRUEPREDICATE", [SortKey("string", ascending: false, comparison: .caseInsensitive)],
                            [3, 11, 5, 6, 10, 8, 7, 9, 4, 0, 1, 2, 12], "case-insensitive descending: ties keep primary-key order")
            try expectOrder(rows, "TRUEPREDICATE", [SortKey("string", comparison: .caseInsensitive), SortKey("string")],
                            [12, 2, 1, 0, 4, 9, 7, 8, 10, 6, 5, 11, 3], "a natural second key breaks the case-insensitive ties")
            try expectOrder(rows, "TRUEPREDICATE", [SortKey("string", comparison: .localizedStandard)],
                            [12, 2, 0, 1, 3, 4, 9, 8, 10, 7, 5, 6, 11], "localized standard: case and diacritics folded, digit runs as numbers")
            try expectOrder(rows, "string BEGINSWITH[cd] 'f'", [SortKey("string", comparison: .localizedStandard)],
                            [9, 8, 10, 7], "file1 < file2 < fïle3 < file10")
            try expectOrder(rows, "string BEGINSWITH[cd] 'f'", [SortKey("string", ascending: false, comparison: .localizedStandard)],
                            [7, 10, 8, 9], "and descending")
        },
        ConformanceScenario("predicates.paging.everyRowOnceAcrossTies") { env in
            // 23 rows with heavy ties: int16 in {nil, 1, 2}, string in {"x", "X", nil}, double in {nil, 0.5}.
            let table: [[String: Any]] = (0..<23).map { i in
                var row: [String: Any] = ["int32": Int32(i)]
                if i % 3 != 0 { row["int16"] = Int16(i % 3) }
                if i % 4 != 3 { row["string"] = i % 2 == 0 ? "x" : "X" }
                if i % 5 > 1 { row["double"] = 0.5 }
                return row
            }
            let rows = try Fixture.allTypes(env, table)
            let orders: [[SortKey]] = [
                [SortKey("int16")], [SortKey("string", comparison: .caseInsensitive), SortKey("int16", ascending: false)],
                [SortKey("double", ascending: false), SortKey("string")], [],
            ]
            for context in [rows.clean, rows.dirty] {
                try context.performAndWait {
                    let predicate = try FetchPredicate(format: "int32 != %d AND (int16 != nil OR string ==[c] 'x')", 4)
                    for order in orders {
                        let full = try context.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: "AllTypes", predicate: predicate, sortKeys: order))
                        try checkEqual(Set(full).count, full.count, "no row twice in the full result")
                        try checkEqual(full, try context.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: "AllTypes", predicate: predicate, sortKeys: order)), "the same fetch gives the same order")
                        for size in [1, 2, 5, 7] {
                            var paged: [ObjectID] = []
                            for offset in stride(from: 0, through: full.count, by: size) {
                                var request = FetchRequest<ManagedObject>(entityName: "AllTypes", predicate: predicate, sortKeys: order)
                                request.fetchOffset = offset
                                request.fetchLimit = size
                                paged += try context.fetchObjectIDs(request)
                            }
                            try checkEqual(paged, full, "pages of \(size) by \(order.map(\.keyPath)) cover every row exactly once, in order")
                        }
                        let values = try full.map { id -> [AttributeValue] in
                            let object = try context.existingObject(with: id)
                            return try order.map { key in
                                let value = try object.value(forKey: key.keyPath)
                                guard let value else { return .null }
                                if let s = value as? String { return .string(key.comparison == .natural ? s : s.lowercased()) }
                                if let n = value as? Int64 { return .integer(n) }
                                if let d = value as? Double { return .double(d) }
                                return .null
                            }
                        }
                        for i in values.indices.dropLast() where values[i] == values[i + 1] {
                            try check(ObjectID.storageOrder(full[i], full[i + 1]), "rows that tie on every key come in primary-key order (\(full[i]), \(full[i + 1]))")
                        }
                    }
                }
            }
        },
    ]
}
