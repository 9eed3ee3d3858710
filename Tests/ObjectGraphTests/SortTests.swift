import Foundation
import ObjectGraph
import ObjectGraphInMemory
import Testing

/// Sorting, on stored rows and on live (unsaved) objects alike.
///
/// Words in insertion (primary-key) order:
///
/// | id | text     | n   | group |
/// |----|----------|-----|-------|
/// | w1 | "file10" | 3   | g     |
/// | w2 | "file2"  | nil | g     |
/// | w3 | "File1"  | 1   | g     |
/// | w4 | "apple"  | 3   | g     |
/// | w5 | "Banana" | nil | g     |
/// | w6 | nil      | 2   | g     |
@Suite("Sorting")
struct SortTests {
    let contexts: [ManagedObjectContext]
    let containers: [PersistentContainer]

    init() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Word") { e in
                e.attribute("id", .string)
                e.attribute("text", .string, optional: true)
                e.attribute("n", .integer32, optional: true)
                e.attribute("group", .string)
                e.toOne("shelf", "Shelf", inverse: "words")
            }
            m.entity("Shelf") { e in
                e.attribute("label", .string)
                e.toMany("words", "Word", inverse: "shelf")
            }
        }
        let rows: [(String, String?, Int?)] = [
            ("w1", "file10", 3), ("w2", "file2", nil), ("w3", "File1", 1),
            ("w4", "apple", 3), ("w5", "Banana", nil), ("w6", nil, 2),
        ]
        var contexts: [ManagedObjectContext] = []
        var containers: [PersistentContainer] = []
        for save in [true, false] {
            let container = try PersistentContainer(model: model, stores: [.inMemory()])
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let top = try context.insertObject(entityName: "Shelf")
                try top.setValue("top", forKey: "label")
                let bottom = try context.insertObject(entityName: "Shelf")
                try bottom.setValue("bottom", forKey: "label")
                for (id, text, n) in rows {
                    let word = try context.insertObject(entityName: "Word")
                    try word.setValue(id, forKey: "id")
                    try word.setValue(text, forKey: "text")
                    try word.setValue(n, forKey: "n")
                    try word.setValue("g", forKey: "group")
                    try word.setValue(["w1", "w3", "w5"].contains(id) ? bottom : top, forKey: "shelf")
                }
                if save { try context.save() }
            }
            contexts.append(context)
            containers.append(container)
        }
        self.contexts = contexts
        self.containers = containers
    }

    func expectOrder(
        _ keys: [SortKey], _ expected: [String], offset: Int = 0, limit: Int = 0,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        for (context, label) in zip(contexts, ["saved", "pending"]) {
            let ids: [String] = try context.performAndWait {
                var request = FetchRequest<ManagedObject>(entityName: "Word", sortKeys: keys)
                request.fetchOffset = offset
                request.fetchLimit = limit
                return try context.fetch(request).map { try string($0, "id") ?? "?" }
            }
            #expect(ids == expected, "\(label) objects", sourceLocation: sourceLocation)
        }
    }

    @Test func nilSortsFirstAscendingAndLastDescending() throws {
        try expectOrder([SortKey("n")], ["w2", "w5", "w3", "w6", "w1", "w4"])
        try expectOrder([SortKey("n", ascending: false)], ["w1", "w4", "w6", "w3", "w2", "w5"])
        try expectOrder([SortKey("text")], ["w6", "w5", "w3", "w4", "w1", "w2"])
        try expectOrder([SortKey("text", ascending: false)], ["w2", "w1", "w4", "w3", "w5", "w6"])
    }

    @Test func caseInsensitiveSort() throws {
        try expectOrder([SortKey("text", comparison: .caseInsensitive)], ["w6", "w4", "w5", "w3", "w1", "w2"])
        try expectOrder([SortKey("text", ascending: false, comparison: .caseInsensitive)], ["w2", "w1", "w3", "w5", "w4", "w6"])
    }

    @Test func localizedStandardComparesDigitRunsAsNumbers() throws {
        try expectOrder([SortKey("text", comparison: .localizedStandard)], ["w6", "w4", "w5", "w3", "w2", "w1"])
        #expect(CompiledSort.compare(.string("file2"), .string("file10"), .localizedStandard) == .orderedAscending)
        #expect(CompiledSort.compare(.string("file2"), .string("file10"), .natural) == .orderedDescending)
    }

    @Test func tiesAreBrokenByPrimaryKey() throws {
        let insertionOrder = ["w1", "w2", "w3", "w4", "w5", "w6"]
        try expectOrder([], insertionOrder)
        try expectOrder([SortKey("group")], insertionOrder)
        try expectOrder([SortKey("group", ascending: false)], insertionOrder)
    }

    @Test func laterKeysBreakTiesOfEarlierOnes() throws {
        try expectOrder([SortKey("n", ascending: false), SortKey("text")], ["w4", "w1", "w6", "w3", "w5", "w2"])
    }

    @Test func sortThroughAToOneRelationship() throws {
        // bottom: w1, w3, w5; top: w2, w4, w6.
        try expectOrder([SortKey("shelf.label"), SortKey("id", ascending: false)], ["w5", "w3", "w1", "w6", "w4", "w2"])
    }

    @Test func offsetAndLimitApplyAfterSorting() throws {
        try expectOrder([SortKey("n")], ["w5", "w3"], offset: 1, limit: 2)
        try expectOrder([SortKey("n")], ["w4"], offset: 5, limit: 10)
        try expectOrder([SortKey("n")], [], offset: 6)
    }

    @Test func sortKeysMustReachAnAttribute() {
        for (key, words) in [("nope", ["nope"]), ("shelf", ["shelf"]), ("shelf.words", ["shelf.words"])] {
            for context in contexts {
                context.performAndWait {
                    _ = expectGraphError(.invalidFetch, mentioning: words) {
                        _ = try context.fetch(FetchRequest<ManagedObject>(entityName: "Word", sortKeys: [SortKey(key)]))
                    }
                }
            }
        }
    }

    @Test func compareOrdersNilFirst() {
        #expect(CompiledSort.compare(.null, .integer(1), .natural) == .orderedAscending)
        #expect(CompiledSort.compare(.string("a"), .null, .caseInsensitive) == .orderedDescending)
        #expect(CompiledSort.compare(.null, .null, .localizedStandard) == .orderedSame)
    }
}
