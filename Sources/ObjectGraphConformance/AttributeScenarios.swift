import Foundation
import ObjectGraph

/// Every attribute type of `AllTypes` round-trips exactly through the store, optionals come
/// back `nil`, defaults apply, transient values are never stored, and misuse is a typed error.
/// Values are set and read by key (`AllTypes` has no class), so key-value access is exercised
/// on every store. Errors and defaults are in AttributeScenarios+Rules.swift.
enum AttributeScenarios {
    static let all: [ConformanceScenario] = values + rules

    /// Inserts one `AllTypes` object per entry of `rows` (key → value), saves, reopens the
    /// store, and returns a fresh context with the saved IDs in the same order.
    static func saveAndReopen(_ env: ScenarioEnvironment, _ rows: [[String: Any]]) throws -> (ManagedObjectContext, [ObjectID]) {
        let context = env.newContext()
        let ids = try context.performAndWait {
            var objects: [ManagedObject] = []
            for row in rows {
                let object = try context.insertObject(entityName: "AllTypes")
                for (key, value) in row { try object.setValue(value, forKey: key) }
                objects.append(object)
            }
            try context.save()
            return objects.map(\.objectID)
        }
        try env.reopen()
        return (env.newContext(), ids)
    }

    /// The value of `key`, or a failure naming the object when reading throws.
    static func read(_ object: ManagedObject, _ key: String) throws -> Any? {
        try object.value(forKey: key)
    }

    /// A full set of sample values, one per attribute type (used by the persistence scenarios too).
    static var sample: [String: Any] {
        [
            "int16": Int16(-12_345), "int32": Int32(2_000_000_001), "int64": Int64(-9_000_000_000_000_000_001),
            "double": 6.022_140_76e23, "float": Float(1.5), "decimal": Decimal(string: "1234567.000089")!,
            "string": "Grüße, 世界 👋", "bool": true, "date": Date(timeIntervalSinceReferenceDate: 720_000_000.125),
            "data": Data([0, 1, 2, 254, 255]), "uuid": UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
            "uri": URL(string: "https://example.com/a%20b?q=1#frag")!,
            "palette": Palette(primary: "teal", accents: ["coral", "ivory"]), "defaulted": Int32(7),
        ]
    }

    /// Checks that `object` holds ``sample``.
    static func checkSample(_ object: ManagedObject, file: String = #filePath, line: Int = #line) throws {
        try checkEqual(try object.value(forKey: "int16") as? Int64, -12_345, "int16", file: file, line: line)
        try checkEqual(try object.value(forKey: "int32") as? Int64, 2_000_000_001, "int32", file: file, line: line)
        try checkEqual(try object.value(forKey: "int64") as? Int64, -9_000_000_000_000_000_001, "int64", file: file, line: line)
        try checkEqual(try object.value(forKey: "double") as? Double, 6.022_140_76e23, "double", file: file, line: line)
        try checkEqual(try object.value(forKey: "float") as? Double, 1.5, "float", file: file, line: line)
        try checkEqual(try object.value(forKey: "decimal") as? Decimal, Decimal(string: "1234567.000089")!, "decimal", file: file, line: line)
        try checkEqual(try object.value(forKey: "string") as? String, "Grüße, 世界 👋", "string", file: file, line: line)
        try checkEqual(try object.value(forKey: "bool") as? Bool, true, "bool", file: file, line: line)
        try checkEqual(try object.value(forKey: "date") as? Date, Date(timeIntervalSinceReferenceDate: 720_000_000.125), "date", file: file, line: line)
        try checkEqual(try object.value(forKey: "data") as? Data, Data([0, 1, 2, 254, 255]), "data", file: file, line: line)
        try checkEqual(try object.value(forKey: "uuid") as? UUID, UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, "uuid", file: file, line: line)
        try checkEqual(try object.value(forKey: "uri") as? URL, URL(string: "https://example.com/a%20b?q=1#frag")!, "uri", file: file, line: line)
        try checkEqual(try object.value(forKey: "palette") as? Palette, Palette(primary: "teal", accents: ["coral", "ivory"]), "palette", file: file, line: line)
        try checkEqual(try object.value(forKey: "defaulted") as? Int64, 7, "defaulted", file: file, line: line)
    }

    static let values: [ConformanceScenario] = [
        ConformanceScenario("attributes.integers.extremesRoundTrip") { env in
            let rows: [[String: Any]] = [
                ["int16": Int16.min, "int32": Int32.min, "int64": Int64.min],
                ["int16": Int16.max, "int32": Int32.max, "int64": Int64.max],
                ["int16": 0, "int32": -1, "int64": Int64(1) << 53 + 1],
                ["int16": UInt8(200), "int32": Int16(-300), "int64": Int32(-7)],
            ]
            let expected: [[Int64]] = [
                [Int64(Int16.min), Int64(Int32.min), Int64.min],
                [Int64(Int16.max), Int64(Int32.max), Int64.max],
                [0, -1, Int64(1) << 53 + 1],
                [200, -300, -7],
            ]
            let (context, ids) = try saveAndReopen(env, rows)
            try context.performAndWait {
                for (id, values) in zip(ids, expected) {
                    let object = try context.existingObject(with: id)
                    for (key, value) in zip(["int16", "int32", "int64"], values) {
                        try checkEqual(try read(object, key) as? Int64, value, "\(key) of \(id)")
                    }
                }
                let max = try context.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: "AllTypes", predicate: .key("int64") == Int64.max))
                try checkEqual(max, [ids[1]], "Int64.max is found by equality")
                let min = try context.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: "AllTypes", predicate: .key("int64") == Int64.min))
                try checkEqual(min, [ids[0]], "Int64.min is found by equality")
                let odd = try context.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: "AllTypes", predicate: .key("int64") == Int64(1) << 53 + 1))
                try checkEqual(odd, [ids[2]], "2^53 + 1 is compared exactly, not through Double")
            }
        },
        ConformanceScenario("attributes.floatingPoint.roundTripBitExact") { env in
            let doubles: [Double] = [
                .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNonzeroMagnitude, .leastNormalMagnitude,
                1e300, -1.5e-300, .pi, 0.1, 123_456_789.987_654_321, .infinity, -.infinity, 0,
            ]
            let floats: [Float] = [.greatestFiniteMagnitude, .leastNonzeroMagnitude, 0.1, -3.25, .pi, 16_777_215]
            var rows: [[String: Any]] = doubles.map { ["double": $0] }
            rows += floats.map { ["float": $0] }
            let (context, ids) = try saveAndReopen(env, rows)
            try context.performAndWait {
                for (id, value) in zip(ids, doubles) {
                    let stored = try read(context.existingObject(with: id), "double") as? Double
                    try checkEqual(stored?.bitPattern, value.bitPattern, "double \(value) (read back \(stored.map { "\($0)" } ?? "nil"))")
                }
                for (id, value) in zip(ids.dropFirst(doubles.count), floats) {
                    let stored = try read(context.existingObject(with: id), "float") as? Double
                    try checkEqual(stored.map { Float($0) }?.bitPattern, value.bitPattern, "float \(value)")
                    try checkEqual(stored?.bitPattern, Double(value).bitPattern, "float \(value) is kept as the exact Double of the Float")
                }
            }
        },
        ConformanceScenario("attributes.double.negativeZeroKeepsItsSign") { env in
            let (context, ids) = try saveAndReopen(env, [["double": -0.0]])
            try context.performAndWait {
                let stored = try read(context.existingObject(with: ids[0]), "double") as? Double
                try checkEqual(stored, 0, "-0.0 is zero")
                try checkEqual(stored?.sign, .minus, "and keeps its sign")
            }
        },
        ConformanceScenario("attributes.decimal.roundTripExact") { env in
            let decimals = [
                "0", "0.1", "-12345.6789", "3.14159265358979323846264338327950288",
                "79228162514264337593543950335", "-0.000000000000000000000000000001", "0.00000000000000000001", "123456789012345678.9",
            ].map { Decimal(string: $0)! }
            let (context, ids) = try saveAndReopen(env, decimals.map { ["decimal": $0] })
            try context.performAndWait {
                for (id, value) in zip(ids, decimals) {
                    try checkEqual(try read(context.existingObject(with: id), "decimal") as? Decimal, value, "decimal \(value)")
                }
                let found = try context.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: "AllTypes", predicate: .key("decimal") == decimals[3]))
                try checkEqual(found, [ids[3]], "a 36-digit decimal is found by equality")
            }
        },
        ConformanceScenario("attributes.decimal.nanRoundTrips") { env in
            // A decimal NaN is a value a context accepts and a save stores; the LMDB store
            // wrote it as "NaN", which `Decimal(string:)` does not read, and then refused its
            // own row as damaged at every read.
            let (context, ids) = try saveAndReopen(env, [["decimal": Decimal.nan, "string": "nan"], ["decimal": Decimal(1), "string": "one"]])
            try context.performAndWait {
                let stored = try read(context.existingObject(with: ids[0]), "decimal") as? Decimal
                try check(stored?.isNaN == true, "a decimal NaN reads back as NaN, not \(stored.map { "\($0)" } ?? "nil")")
                let all = try context.fetch(FetchRequest<ManagedObject>(entityName: "AllTypes", sortKeys: [SortKey("string")]))
                try checkEqual(try all.map { try $0.value(forKey: "string") as? String }, ["nan", "one"], "a fetch reads the row holding it")
            }
        },
        ConformanceScenario("attributes.string.roundTripExact") { env in
            let strings = [
                "", "Ada", "Grüße aus Köln", "cafe\u{301} (decomposed)", "👩‍👩‍👧‍👦 family, 🇺🇦 flag, 😀",
                "quotes ' \" ` and \\ backslash", "nul\u{0}inside", "line\nbreak\ttab\r\nend", "%_*?[] wildcards",
                "'; DROP TABLE Student; --", "مرحبا بالعالم", "漢字かなカナ", " padded ", String(repeating: "long😀", count: 2_000),
            ]
            let (context, ids) = try saveAndReopen(env, strings.map { ["string": $0] })
            try context.performAndWait {
                for (id, value) in zip(ids, strings) {
                    let stored = try read(context.existingObject(with: id), "string") as? String
                    try checkEqual(stored.map { Array($0.unicodeScalars) }, Array(value.unicodeScalars), "string \(value.debugDescription.prefix(40)) scalar for scalar")
                    let found = try context.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: "AllTypes", predicate: .key("string") == value))
                    try checkEqual(found, [id], "string \(value.debugDescription.prefix(40)) is found by equality")
                }
            }
        },
        ConformanceScenario("attributes.update.identicalNotEqualIsAChange") { env in
            // `==` calls these pairs equal; their stored bytes differ, so each is a change a
            // save must write (directly and through a child context).
            let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
            let (context, ids) = try saveAndReopen(env, [
                ["string": composed, "double": 0.0, "int16": Int16(1)] as [String: Any],
                ["string": composed, "double": 0.0] as [String: Any],
            ])
            try context.performAndWait {
                let object = try context.existingObject(with: ids[0])
                try object.setValue(decomposed, forKey: "string")
                try object.setValue(-0.0, forKey: "double")
                try check(context.hasChanges, "a canonically equivalent string and -0.0 are changes")
                try checkEqual(Set(try object.changedValues().keys), ["string", "double"], "changedValues names both")
                try context.save()
            }
            let child = context.newChildContext(name: "child")
            try child.performAndWait {
                let object = try child.existingObject(with: ids[1])
                try object.setValue(decomposed, forKey: "string")
                try child.save()
            }
            try context.performAndWait {
                try check(context.hasChanges, "the child's change reached the parent")
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let first = try fresh.existingObject(with: ids[0])
                let second = try fresh.existingObject(with: ids[1])
                try checkEqual((try read(first, "string") as? String).map { Array($0.unicodeScalars) }, Array(decomposed.unicodeScalars), "the decomposed form was stored")
                try checkEqual((try read(first, "double") as? Double)?.sign, .minus, "-0.0 was stored")
                try checkEqual(try read(first, "int16") as? Int64, 1, "an unchanged value is kept")
                try checkEqual((try read(second, "string") as? String).map { Array($0.unicodeScalars) }, Array(decomposed.unicodeScalars), "through a child context too")
            }
        },
        ConformanceScenario("attributes.boolAndDate.roundTrip") { env in
            let dates = [
                Date(timeIntervalSinceReferenceDate: 720_000_000.125), Date(timeIntervalSince1970: -1_000_000.5),
                Date(timeIntervalSince1970: 0), Date.distantPast, Date.distantFuture,
            ]
            var rows: [[String: Any]] = [["bool": true], ["bool": false]]
            rows += dates.map { ["date": $0] }
            rows.append(["date": Date(timeIntervalSinceReferenceDate: 700_000_000.123_456)])
            let (context, ids) = try saveAndReopen(env, rows)
            try context.performAndWait {
                try checkEqual(try read(context.existingObject(with: ids[0]), "bool") as? Bool, true, "true")
                try checkEqual(try read(context.existingObject(with: ids[1]), "bool") as? Bool, false, "false, not nil")
                for (id, value) in zip(ids.dropFirst(2), dates) {
                    try checkEqual(try read(context.existingObject(with: id), "date") as? Date, value, "date \(value.timeIntervalSinceReferenceDate)")
                }
                let micro = try read(context.existingObject(with: ids[ids.count - 1]), "date") as? Date
                let drift = micro.map { abs($0.timeIntervalSinceReferenceDate - 700_000_000.123_456) } ?? .infinity
                try check(drift < 1e-6, "a date keeps microseconds (off by \(drift) s)")
                let trues = try context.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: "AllTypes", predicate: .key("bool") == true))
                try checkEqual(trues, [ids[0]], "bool == true")
                let falses = try context.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: "AllTypes", predicate: .key("bool") == false))
                try checkEqual(falses, [ids[1]], "bool == false excludes nil")
            }
        },
        ConformanceScenario("attributes.dataUUIDAndURI.roundTrip") { env in
            let blobs = [Data(), Data(0...255), Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })]
            let uuids = [UUID(uuidString: "00000000-0000-0000-0000-000000000000")!, UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!]
            let uris = [
                "https://example.com/a%20b?q=1&r=%C3%A9#frag", "file:///tmp/some%20file.txt", "mailto:ada@example.com",
                "urn:isbn:0451450523", "x-objectgraph://store/Entity/p1",
            ].map { URL(string: $0)! }
            var rows: [[String: Any]] = blobs.map { ["data": $0] }
            rows += uuids.map { ["uuid": $0] }
            rows += uris.map { ["uri": $0] }
            let (context, ids) = try saveAndReopen(env, rows)
            try context.performAndWait {
                for (id, value) in zip(ids, blobs) {
                    try checkEqual(try read(context.existingObject(with: id), "data") as? Data, value, "data of \(value.count) bytes (empty data is not nil)")
                }
                for (id, value) in zip(ids.dropFirst(blobs.count), uuids) {
                    try checkEqual(try read(context.existingObject(with: id), "uuid") as? UUID, value, "uuid")
                }
                for (id, value) in zip(ids.dropFirst(blobs.count + uuids.count), uris) {
                    let stored = try read(context.existingObject(with: id), "uri") as? URL
                    try checkEqual(stored?.absoluteString, value.absoluteString, "uri")
                }
                let found = try context.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: "AllTypes", predicate: .key("uuid") == uuids[1]))
                try checkEqual(found, [ids[blobs.count + 1]], "a UUID is found by equality")
                let empty = try context.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: "AllTypes", predicate: .key("data") == Data()))
                try checkEqual(empty, [ids[0]], "empty data is found by equality, and is not nil")
            }
        },
        ConformanceScenario("attributes.transformable.roundTrip") { env in
            let palettes = [
                Palette(primary: "teal", accents: ["coral", "ivory"]), Palette(primary: "", accents: []),
                Palette(primary: "ünïcödé 🎨", accents: ["\"quoted\"", "back\\slash", "nul\u{0}"]),
            ]
            var rows: [[String: Any]] = palettes.map { ["palette": $0] }
            rows.append([:])
            let (context, ids) = try saveAndReopen(env, rows)
            try context.performAndWait {
                for (id, value) in zip(ids, palettes) {
                    let stored = try read(context.existingObject(with: id), "palette")
                    try check(stored is Palette, "a transformable comes back as its own type, got \(type(of: stored))")
                    try checkEqual(stored as? Palette, value, "palette")
                }
                try check(try read(context.existingObject(with: ids[3]), "palette") == nil, "an unset transformable is nil")
            }
        },
        ConformanceScenario("attributes.transformable.bytesAreCheckedAgainstItsType") { env in
            // Bytes set on a transformable are kept only when they decode as its type: other
            // bytes were stored, and every read of them then failed (a typed read stopped the
            // process), so they are a wrong value type at the set, as any other value is.
            let context = env.newContext()
            let palette = Palette(primary: "teal", accents: ["coral"])
            let id = try context.performAndWait { () throws -> ObjectID in
                let object = try context.insertObject(entityName: "AllTypes")
                try object.setValue(palette, forKey: "palette")
                let error = try checkThrows(ObjectGraphError.self, "bytes that are no Palette") {
                    try object.setValue(Data("not a palette".utf8), forKey: "palette")
                }
                try checkEqual(error.code, .wrongValueType, "error code")
                try check(error.message.contains("AllTypes.palette"), "the message names entity and key: \(error.message)")
                try checkEqual(try object.value(forKey: "palette") as? Palette, palette, "the value is unchanged")
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                let other = Palette(primary: "ivory", accents: [])
                try object.setValue(try encoder.encode(other), forKey: "palette")
                try checkEqual(try object.value(forKey: "palette") as? Palette, other, "a Palette's own bytes are taken")
                try context.save()
                return object.objectID
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(try fresh.existingObject(with: id).value(forKey: "palette") as? Palette, Palette(primary: "ivory", accents: []), "stored")
            }
        },
        ConformanceScenario("attributes.everyType.togetherInOneObject") { env in
            let (context, ids) = try saveAndReopen(env, [sample])
            try context.performAndWait {
                try checkSample(try context.existingObject(with: ids[0]))
            }
        },
        ConformanceScenario("attributes.optionals.nilRoundTrips") { env in
            let keys = ["int16", "int32", "int64", "double", "float", "decimal", "string", "bool", "date", "data", "uuid", "uri", "palette"]
            let context = env.newContext()
            let (emptyID, clearedID) = try context.performAndWait {
                let empty = try context.insertObject(entityName: "AllTypes")
                for key in keys { try check(try empty.value(forKey: key) == nil, "\(key) starts nil") }
                let cleared = try context.insertObject(entityName: "AllTypes")
                for (key, value) in sample { try cleared.setValue(value, forKey: key) }
                try context.save()
                for key in keys { try cleared.setValue(nil, forKey: key) }
                try context.save()
                return (empty.objectID, cleared.objectID)
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                for id in [emptyID, clearedID] {
                    let object = try fresh.existingObject(with: id)
                    for key in keys { try check(try object.value(forKey: key) == nil, "\(key) of \(id) is nil after reopen") }
                }
                let nils = try fresh.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: "AllTypes", predicate: .key("string") == nil && .key("data") == nil))
                try checkEqual(Set(nils), [emptyID, clearedID], "nil values are found by == nil")
            }
        },
    ]
}
