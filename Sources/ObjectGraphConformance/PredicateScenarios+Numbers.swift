import Foundation
import ObjectGraph

/// Numbers at the edges every store must treat alike: NaN, which SQLite will not store as a
/// real, and integers beyond what a Double tells apart.
extension PredicateScenarios {
    /// A NaN with a payload: a store keeps the value exactly, bits and all.
    static let payloadNaN = Double(bitPattern: 0x7FF8_0000_DEAD_BEEF)

    /// double: NaN, 1, nil, -1, +∞, -0; date: NaN, base+1, nil, base-1, distant future, base.
    static var nanRows: [[String: Any]] {
        [
            ["double": payloadNaN, "date": Date(timeIntervalSinceReferenceDate: .nan), "int16": Int16(0)],
            ["double": 1.0, "date": base.addingTimeInterval(1), "int16": Int16(1)],
            [:],
            ["double": -1.0, "date": base.addingTimeInterval(-1), "int16": Int16(3)],
            ["double": Double.infinity, "date": Date.distantFuture, "int16": Int16(4)],
            ["double": -0.0, "date": base, "int16": Int16(5)],
        ]
    }

    static let numbers: [ConformanceScenario] = [
        ConformanceScenario("predicates.nan.keptComparedWithNothingSortedLast") { env in
            let rows = try Fixture.allTypes(env, nanRows)
            try rows.clean.performAndWait {
                let object = try rows.clean.existingObject(with: rows.ids[0])
                let double = try object.value(forKey: "double") as? Double
                try check(double?.bitPattern == payloadNaN.bitPattern, "the NaN comes back, payload and all (got \(String(describing: double)))")
                let date = try object.value(forKey: "date") as? Date
                try check(date?.timeIntervalSinceReferenceDate.isNaN == true, "a NaN date comes back (got \(String(describing: date)))")
            }
            // As in IEEE 754, NaN is neither less than, equal to nor greater than anything.
            try rows.expect("double == nil", rows: [2], "a NaN is not nil")
            try rows.expect("double != nil", rows: [0, 1, 3, 4, 5])
            try rows.expect("double > 0.5", rows: [1, 4], "NaN is not greater than 0.5")
            try rows.expect("double >= -1", rows: [1, 3, 4, 5])
            try rows.expect("double < 0.5", rows: [3, 5], "nor less")
            try rows.expect("double <= 1", rows: [1, 3, 5])
            try rows.expect("double BETWEEN {-10, 10}", rows: [1, 3, 5])
            try rows.expect("double > 0", rows: [1, 4], "an integer constant too")
            try rows.expect("double == %@", Double.nan, rows: [], "NaN equals nothing, itself included")
            try rows.expect("double != %@", Double.nan, rows: [0, 1, 2, 3, 4, 5])
            try rows.expect("double < %@", Double.nan, rows: [])
            try rows.expect("double IN %@", [Double.nan, 1.0], rows: [1])
            try rows.expect("date > %@", base, rows: [1, 4], "a NaN date is after nothing")
            try rows.expect("date <= %@", base, rows: [3, 5])
            try rows.expect("date != nil", rows: [0, 1, 3, 4, 5])
            try rows.expect("NOT (double > 0.5)", rows: [0, 2, 3, 5])
            try checkEqual(try rows.clean.performAndWait {
                try rows.clean.count(for: FetchRequest<ManagedObject>(entityName: "AllTypes", predicate: try FetchPredicate(format: "double > -5")))
            }, 4, "count(for:) agrees")
            // A sort needs an order: nil first, NaN after +∞.
            try expectOrder(rows, "TRUEPREDICATE", [SortKey("double")], [2, 3, 5, 1, 4, 0], "ascending: nil first, NaN last")
            try expectOrder(rows, "TRUEPREDICATE", [SortKey("double", ascending: false)], [0, 4, 1, 5, 3, 2], "descending: the reverse")
            try expectOrder(rows, "TRUEPREDICATE", [SortKey("date")], [2, 3, 5, 1, 4, 0], "dates alike")
            try expectOrder(rows, "double != 1", [SortKey("double")], [2, 3, 5, 4, 0], "filtered and sorted")
            // @min and @max follow the sort's order.
            try rows.clean.performAndWait {
                var request = FetchRequest<ManagedObject>(entityName: "AllTypes")
                request.propertiesToFetch = [.minimum("double", as: "low"), .maximum("double", as: "high"),
                                             .minimum("date", as: "first"), .maximum("date", as: "last")]
                let found = try rows.clean.fetchDictionaries(request)
                try checkEqual(found.count, 1, "one row of aggregates")
                try checkEqual(found.first?["low"], .double(-1), "@min skips NaN")
                guard case .double(let high)? = found.first?["high"], high.isNaN else {
                    throw ScenarioFailure(message: "@max is NaN, which sorts last (got \(String(describing: found.first?["high"])))", file: #filePath, line: #line)
                }
                try checkEqual(found.first?["first"], .date(base.addingTimeInterval(-1)), "@min of dates")
                guard case .date(let last)? = found.first?["last"], last.timeIntervalSinceReferenceDate.isNaN else {
                    throw ScenarioFailure(message: "@max of dates is the NaN date (got \(String(describing: found.first?["last"])))", file: #filePath, line: #line)
                }
            }
        },

        ConformanceScenario("predicates.nan.groupsLikeAnyValue") { env in
            // Two rows hold the same NaN: grouped by it, they form one group, as equal values
            // do (NaN is unequal to itself, but a group is of stored values).
            var rows = nanRows
            rows.append(["double": payloadNaN, "int16": Int16(6)])
            let fixture = try Fixture.allTypes(env, rows)
            try fixture.clean.performAndWait {
                var request = FetchRequest<ManagedObject>(entityName: "AllTypes")
                request.propertiesToFetch = [.key("double", as: "value"), .count(as: "rows")]
                request.propertiesToGroupBy = ["double"]
                let groups = try fixture.clean.fetchDictionaries(request)
                let counts = groups.map { row -> String in
                    let value: String
                    switch row["value"] {
                    case .double(let d)?: value = d.isNaN ? "NaN" : "\(d)"
                    default: value = "nil"
                    }
                    return "\(value):\(row["rows"].map { "\($0)" } ?? "?")"
                }.sorted()
                try checkEqual(counts, ["-0.0:1", "-1.0:1", "1.0:1", "NaN:2", "inf:1", "nil:1"], "one group per value, NaN included")
            }
        },

        ConformanceScenario("predicates.integers.againstDoublesBeyondInt64") { env in
            // int64: Int64.max, Int64.max - 100, 0, nil, Int64.min, 2^62. Through Double,
            // Int64.max - 100 rounds to 2^63 and "equals" it.
            let rows = try Fixture.allTypes(env, [
                ["int64": Int64.max], ["int64": Int64.max - 100], ["int64": Int64(0)], [:], ["int64": Int64.min], ["int64": Int64(1) << 62],
            ])
            let twoTo63 = 9_223_372_036_854_775_808.0
            try rows.expect("int64 == %@", twoTo63, rows: [], "no Int64 equals 2^63")
            try rows.expect("int64 >= %@", twoTo63, rows: [])
            try rows.expect("int64 < %@", twoTo63, rows: [0, 1, 2, 4, 5])
            try rows.expect("int64 != %@", twoTo63, rows: [0, 1, 2, 3, 4, 5])
            try rows.expect("int64 IN %@", [twoTo63], rows: [])
            try rows.expect("int64 > %@", -twoTo63, rows: [0, 1, 2, 5], "-2^63 is Int64.min exactly")
            try rows.expect("int64 >= %@", -twoTo63, rows: [0, 1, 2, 4, 5])
            try rows.expect("int64 > %@", 9_223_372_036_854_774_784.0, rows: [0, 1], "the last double below 2^63 is below both")
            try rows.expect("int64 == %@", 4_611_686_018_427_387_904.0, rows: [5], "2^62 is exact")
            try rows.expect("int64 > 0.5", rows: [0, 1, 5])
            try rows.expect("int64 < -0.5", rows: [4])
            try rows.expect("int64 < %@", -Double.infinity, rows: [])
            try rows.expect("int64 < %@", Double.infinity, rows: [0, 1, 2, 4, 5])
        },

        ConformanceScenario("predicates.integers.extremesAgainstDoubleAttributes") { env in
            // double: -2^63, 1.5, nil, -1e300, 2^63; float: 0.5 where set. The integer constants
            // Int64.min and Int64.max compare with floating attributes like any other number
            // (an indexed LMDB store planned them through abs(), which traps on Int64.min).
            let twoTo63 = 9_223_372_036_854_775_808.0
            let rows = try Fixture.allTypes(env, [
                ["double": -twoTo63, "float": Float(0.5)], ["double": 1.5], [:], ["double": -1e300, "float": Float(0.5)], ["double": twoTo63],
            ])
            try rows.expect("double == %@", Int64.min, rows: [0], "Int64.min is -2^63 exactly")
            try rows.expect("double < %@", Int64.min, rows: [3])
            try rows.expect("double <= %@", Int64.min, rows: [0, 3])
            try rows.expect("double > %@", Int64.min, rows: [1, 4])
            try rows.expect("double IN %@", [Int64.min, Int64.max], rows: [0], "2^63 is past Int64.max")
            try rows.expect("double BETWEEN %@", [Int64.min, Int64.max], rows: [0, 1])
            try rows.expect("double == -9223372036854775808", rows: [0], "the literal too")
            try rows.expect("double >= %@", Int64.max, rows: [4])
            try rows.expect("float > %@", Int64.min, rows: [0, 3])
            try rows.expect("float == %@", Int64.min, rows: [])
        },
    ]
}
