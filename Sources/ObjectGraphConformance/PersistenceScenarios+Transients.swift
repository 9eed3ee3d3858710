import Foundation
import ObjectGraph

/// Transient properties are not part of a model's version hash, so a store opens with a model
/// that only adds, removes or moves them; its stored values must read back unchanged. (LMDB
/// and the binary store wrote every slot by position, transient ones included: a moved
/// transient read a stored name as nil, an added one made every row unreadable; an audit.)
extension PersistenceScenarios {
    static let transients: [ConformanceScenario] = [
        ConformanceScenario("persistence.transientChangesKeepStoredValues", requires: [.persistent]) { env in
            let folder = env.directory.appendingPathComponent("transients-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            /// Item(name, code) and Tag, with transients placed by `layout`.
            func model(_ layout: Int) throws -> ManagedObjectModel {
                try ManagedObjectModel { m in
                    m.entity("Tag") { e in e.attribute("label", .string, optional: true) }
                    m.entity("Item") { e in
                        if layout == 1 { e.attribute("scratch", .string, optional: true, transient: true) }
                        e.attribute("name", .string, optional: true)
                        if layout == 2 { e.toOne("hint", "Tag", transient: true) }
                        e.toOne("tag", "Tag")
                        e.attribute("code", .integer64, optional: true)
                        if layout == 2 { e.attribute("later", .string, optional: true, transient: true) }
                    }
                }
            }
            func open(_ layout: Int) throws -> PersistentContainer {
                try PersistentContainer(model: try model(layout), stores: [env.backend.makeStore(folder)])
            }
            func stored(_ container: PersistentContainer) throws -> [String] {
                let context = container.newBackgroundContext()
                return try context.performAndWait {
                    try context.fetch(FetchRequest<ManagedObject>(entityName: "Item", sortKeys: [SortKey("code")])).map { item in
                        let tag = try (item.value(forKey: "tag") as? ManagedObject)?.value(forKey: "label") as? String
                        return "\(try item.value(forKey: "name") as? String ?? "nil")/\(try item.value(forKey: "code") as? Int64 ?? -1)/\(tag ?? "nil")"
                    }
                }
            }
            do {
                let first = try open(0)
                defer { first.close() }
                let context = first.newBackgroundContext()
                try context.performAndWait {
                    let tag = try context.insertObject(entityName: "Tag"); try tag.setValue("red", forKey: "label")
                    let item = try context.insertObject(entityName: "Item")
                    try item.setValue("alpha", forKey: "name"); try item.setValue(Int64(1), forKey: "code"); try item.setValue(tag, forKey: "tag")
                    try context.save()
                }
            }
            for layout in [1, 2, 0] {
                let container = try open(layout)
                defer { container.close() }
                try checkEqual(try stored(container), ["alpha/1/red", "beta/2/red"].prefix(layout == 1 ? 1 : 2).map { $0 }, "items read with transient layout \(layout)")
                if layout == 1 {
                    // A row written with this layout, read by the others next.
                    let context = container.newBackgroundContext()
                    try context.performAndWait {
                        let tag = try context.fetch(FetchRequest<ManagedObject>(entityName: "Tag"))[0]
                        let item = try context.insertObject(entityName: "Item")
                        try item.setValue("beta", forKey: "name"); try item.setValue(Int64(2), forKey: "code"); try item.setValue(tag, forKey: "tag")
                        try item.setValue("not stored", forKey: "scratch")
                        try context.save()
                    }
                }
            }
        },
    ]
}
