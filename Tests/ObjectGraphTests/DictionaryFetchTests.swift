import Foundation
@testable import ObjectGraph
import ObjectGraphInMemory
import Testing

@Suite("Dictionary results")
struct DictionaryFetchTests {
    static func sales() throws -> (PersistentContainer, ManagedObjectContext) {
        let (container, context) = try makeContext { m in
            m.entity("Region") { e in
                e.attribute("name", .string)
                e.toMany("sales", "Sale", inverse: "region")
            }
            m.entity("Sale") { e in
                e.attribute("product", .string)
                e.attribute("amount", .double)
                e.attribute("units", .integer32)
                e.toOne("region", "Region", inverse: "sales")
            }
        }
        try context.performAndWait {
            var regions: [String: ManagedObject] = [:]
            for name in ["North", "South"] {
                let region = try context.insertObject(entityName: "Region")
                try region.setValue(name, forKey: "name")
                regions[name] = region
            }
            let rows: [(String, Double, Int, String)] = [
                ("apple", 10, 1, "North"), ("apple", 20, 2, "South"), ("pear", 5, 1, "North"),
                ("pear", 7, 3, "North"), ("plum", 1, 1, "South"),
            ]
            for (product, amount, units, region) in rows {
                let sale = try context.insertObject(entityName: "Sale")
                try sale.setValue(product, forKey: "product")
                try sale.setValue(amount, forKey: "amount")
                try sale.setValue(units, forKey: "units")
                try sale.setValue(regions[region], forKey: "region")
            }
            try context.save()
        }
        return (container, context)
    }

    @Test("a request's rarely changed settings start at their defaults and are values: a copy's change stays its own")
    func requestSettingsAreValues() {
        var first = FetchRequest<ManagedObject>(entityName: "Order")
        #expect(first.propertiesToFetch.isEmpty && first.propertiesToGroupBy.isEmpty && first.havingPredicate == nil)
        #expect(first.relationshipKeyPathsForPrefetching.isEmpty && first.substitutionVariables.isEmpty && !first.returnsDistinctResults)
        #expect(first.includesPropertyValues)
        var withoutValues = first
        withoutValues.includesPropertyValues = false
        #expect(first.includesPropertyValues && !withoutValues.includesPropertyValues)
        first.propertiesToGroupBy = ["customer"]
        first.substitutionVariables["LIMIT"] = .integer(3)
        var second = first
        second.propertiesToGroupBy.append("status")
        second.returnsDistinctResults = true
        second.substitutionVariables["LIMIT"] = .integer(4)
        #expect(first.propertiesToGroupBy == ["customer"])
        #expect(second.propertiesToGroupBy == ["customer", "status"])
        #expect(!first.returnsDistinctResults && second.returnsDistinctResults)
        #expect(first.substitutionVariables["LIMIT"] == .integer(3) && second.substitutionVariables["LIMIT"] == .integer(4))
    }

    @Test("plain columns give one row per object, including key paths through to-one")
    func plainColumns() throws {
        let (_, context) = try Self.sales()
        try context.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Sale", predicate: key("amount") > 6.0, sortKeys: [SortKey("amount")])
            request.propertiesToFetch = [.key("product"), .key("region.name", as: "region"), .key("amount")]
            let rows = try context.fetchDictionaries(request)
            #expect(rows == [
                ["product": "pear", "region": "North", "amount": 7.0],
                ["product": "apple", "region": "North", "amount": 10.0],
                ["product": "apple", "region": "South", "amount": 20.0],
            ])
        }
    }

    @Test("group by with sum, average, min, max and count; HAVING; sort by column")
    func grouping() throws {
        let (_, context) = try Self.sales()
        try context.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Sale", sortKeys: [SortKey("total", ascending: false)])
            request.propertiesToFetch = [.key("product"), .sum("amount", as: "total"), .average("units", as: "meanUnits"),
                                         .minimum("amount", as: "low"), .maximum("amount", as: "high"), .count(as: "sales")]
            request.propertiesToGroupBy = ["product"]
            let rows = try context.fetchDictionaries(request)
            #expect(rows.map { $0["product"] } == ["apple", "pear", "plum"])
            #expect(rows[0]["total"] == .double(30))
            #expect(rows[1]["meanUnits"] == .double(2))
            #expect(rows[1]["low"] == .double(5) && rows[1]["high"] == .double(7))
            #expect(rows.map { $0["sales"] } == [.integer(2), .integer(2), .integer(1)])
            request.havingPredicate = key("sales") >= 2 && key("total") < 25.0
            #expect(try context.fetchDictionaries(request).map { $0["product"] } == ["pear"])
        }
    }

    @Test("aggregates without grouping give one row; an empty match still gives it")
    func wholeResultAggregates() throws {
        let (_, context) = try Self.sales()
        try context.performAndWait { () throws in
            var request = FetchRequest<ManagedObject>(entityName: "Sale")
            request.propertiesToFetch = [.sum("units", as: "units"), .count(as: "n")]
            #expect(try context.fetchDictionaries(request) == [["units": .integer(8), "n": .integer(5)]])
            request.predicate = key("amount") > 1000.0
            #expect(try context.fetchDictionaries(request) == [["units": .integer(0), "n": .integer(0)]])
        }
    }

    @Test("distinct rows, paging, grouping through a to-one key path, unsaved changes")
    func distinctAndPending() throws {
        let (_, context) = try Self.sales()
        try context.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Sale", sortKeys: [SortKey("product")])
            request.propertiesToFetch = [.key("product")]
            request.returnsDistinctResults = true
            #expect(try context.fetchDictionaries(request).map { $0["product"] } == ["apple", "pear", "plum"])
            request.fetchOffset = 1
            request.fetchLimit = 1
            #expect(try context.fetchDictionaries(request).map { $0["product"] } == ["pear"])

            let extra = try context.insertObject(entityName: "Sale")
            try extra.setValue("fig", forKey: "product")
            try extra.setValue(2.0, forKey: "amount")
            try extra.setValue(4, forKey: "units")
            var byRegion = FetchRequest<ManagedObject>(entityName: "Sale", sortKeys: [SortKey("region")])
            byRegion.propertiesToFetch = [.key("region.name", as: "region"), .sum("units", as: "units")]
            byRegion.propertiesToGroupBy = ["region.name"]
            let rows = try context.fetchDictionaries(byRegion)
            #expect(rows == [["region": .null, "units": .integer(4)], ["region": "North", "units": .integer(5)], ["region": "South", "units": .integer(3)]])
        }
    }

    @Test("bad dictionary requests are typed errors")
    func errors() throws {
        let (_, context) = try Self.sales()
        try context.performAndWait { () throws in
            var request = FetchRequest<ManagedObject>(entityName: "Sale")
            request.propertiesToFetch = [.key("nope")]
            #expect(throws: ObjectGraphError.self) { _ = try context.fetchDictionaries(request) }
            request.propertiesToFetch = [.key("product"), .key("amount")]
            request.propertiesToGroupBy = ["product"]
            let ungrouped = #expect(throws: ObjectGraphError.self) { _ = try context.fetchDictionaries(request) }
            #expect(ungrouped?.key == "amount")
            request.propertiesToFetch = [.key("product")]
            request.havingPredicate = key("missing") > 1
            #expect(throws: ObjectGraphError.self) { _ = try context.fetchDictionaries(request) }
            request.havingPredicate = nil
            request.sortKeys = [SortKey("amount")]
            #expect(throws: ObjectGraphError.self) { _ = try context.fetchDictionaries(request) }
            request.sortKeys = []
            request.propertiesToGroupBy = []
            request.propertiesToFetch = [.key("product"), .key("amount", as: "product")]
            let twice = #expect(throws: ObjectGraphError.self) { _ = try context.fetchDictionaries(request) }
            #expect(twice?.key == "product")
        }
    }

    @Test("grouping by or through a to-many, or summing or averaging a non-number, is refused")
    func groupKeysAndAggregatesMustHaveOneNumberOrValue() throws {
        let (_, context) = try Self.sales()
        try context.performAndWait { () throws in
            // Each used to answer silently: regions grouped by their first sale's product, a
            // sum of strings 0.0. (A to-one groups by destination: see the conformance kit.)
            let bad: [(String, [String], [FetchedProperty], String)] = [
                ("Region", ["sales.product"], [.count(as: "n")], "sales.product"),
                ("Region", ["sales"], [.count(as: "n")], "sales"),
                ("Sale", [], [.sum("product", as: "total")], "product"),
                ("Sale", ["region.name"], [.key("region.name"), .average("product", as: "mean")], "product"),
            ]
            for (entity, groupBy, columns, key) in bad {
                var request = FetchRequest<ManagedObject>(entityName: entity)
                request.propertiesToGroupBy = groupBy
                request.propertiesToFetch = columns
                let error = #expect(throws: ObjectGraphError.self, "\(entity) \(groupBy) \(columns)") { _ = try context.fetchDictionaries(request) }
                #expect(error?.code == .invalidFetch && error?.key == key, "\(String(describing: error))")
            }
            var fine = FetchRequest<ManagedObject>(entityName: "Sale", sortKeys: [SortKey("region")])
            fine.propertiesToGroupBy = ["region.name"]
            fine.propertiesToFetch = [.key("region.name", as: "region"), .maximum("product", as: "last"), .sum("units", as: "units")]
            #expect(try context.fetchDictionaries(fine) == [["region": "North", "last": "pear", "units": .integer(5)],
                                                          ["region": "South", "last": "plum", "units": .integer(3)]])
        }
    }

    @Test("a HAVING predicate that names no column, has a bad MATCHES pattern or a modifier is refused, even when no row reaches it")
    func havingIsCheckedBeforeRows() throws {
        let (_, context) = try Self.sales()
        try context.performAndWait { () throws in
            var request = FetchRequest<ManagedObject>(entityName: "Sale")
            request.propertiesToFetch = [.key("product"), .count(as: "n")]
            request.propertiesToGroupBy = ["product"]
            // Each used to answer [] or every row without a word: the unknown column was never
            // read (a false AND operand before it, or no rows at all), the pattern failed to
            // compile into "no match", ANY was ignored.
            for (format, key) in [("n > 100 AND missing == 1", "missing"), ("product MATCHES '(('", nil), ("ANY n > 0", nil)] {
                request.havingPredicate = try FetchPredicate(format: format)
                let error = #expect(throws: ObjectGraphError.self, "\(format)") { _ = try context.fetchDictionaries(request) }
                #expect(error?.code == .invalidFetch && error?.key == key, "\(format): \(String(describing: error))")
            }
            var none = request
            none.predicate = .constant(false)
            none.havingPredicate = try FetchPredicate(format: "missing == 1")
            #expect(throws: ObjectGraphError.self) { _ = try context.fetchDictionaries(none) }
            request.havingPredicate = try FetchPredicate(format: "n > 1 AND product MATCHES 'p.*'")
            #expect(try context.fetchDictionaries(request) == [["product": "pear", "n": .integer(2)]])
        }
    }

    @Test("no columns named gives every attribute; a to-one column gives the destination's ID; rows sort by attributes that are not columns")
    func defaultColumnsIDsAndSorting() throws {
        let (_, context) = try Self.sales()
        try context.performAndWait { () throws in
            let all = try context.fetchDictionaries(FetchRequest<ManagedObject>(entityName: "Sale", sortKeys: [SortKey("amount")]))
            #expect(all.first == ["product": "plum", "amount": 1.0, "units": .integer(1)])
            #expect(all.map(\.keys) == Array(repeating: ["product", "amount", "units"], count: 5))

            let regions = try context.fetch(FetchRequest<ManagedObject>(entityName: "Region", sortKeys: [SortKey("name")])).map(\.objectID)
            var request = FetchRequest<ManagedObject>(entityName: "Sale", sortKeys: [SortKey("units", ascending: false), SortKey("amount")])
            request.propertiesToFetch = [.key("product"), .key("region")]
            let rows = try context.fetchDictionaries(request)
            #expect(rows.map { $0["product"] } == ["pear", "apple", "plum", "pear", "apple"])
            #expect(rows.map { $0.objectID("region") } == [regions[0], regions[1], regions[1], regions[0], regions[0]])
            #expect(rows[0].objectID("product") == nil, "a column that holds no ID")

            request.propertiesToFetch = [.key("region.sales")]
            let toMany = #expect(throws: ObjectGraphError.self) { _ = try context.fetchDictionaries(request) }
            #expect(toMany?.code == .invalidFetch && toMany?.key == "region.sales", "\(String(describing: toMany))")
            #expect(toMany?.message.contains("to-many") == true, "\(String(describing: toMany))")
        }
    }

    @Test("rows of one result share their column names; columns that are not the store's keys and aggregates in order are picked")
    func sharedColumns() throws {
        let (_, context) = try Self.sales()
        try context.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Sale", sortKeys: [SortKey("product")])
            // Aggregate first, then the key: not the store's order (keys, then aggregates).
            request.propertiesToFetch = [.count(as: "n"), .key("product"), .maximum("units", as: "most")]
            request.propertiesToGroupBy = ["product"]
            let rows = try context.fetchDictionaries(request)
            #expect(rows == [["product": "apple", "n": .integer(2), "most": .integer(2)],
                             ["product": "pear", "n": .integer(2), "most": .integer(3)],
                             ["product": "plum", "n": .integer(1), "most": .integer(1)]])
            #expect(rows.map(\.keys) == Array(repeating: ["n", "product", "most"], count: 3))
            #expect(rows.allSatisfy { $0.columns === rows[0].columns })
            #expect(rows[1].map(\.value) == [.integer(2), .string("pear"), .integer(3)])
        }
    }
}
