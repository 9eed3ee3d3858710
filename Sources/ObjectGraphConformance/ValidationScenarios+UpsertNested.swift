import Foundation
import ObjectGraph

/// Uniqueness constraints across nested contexts: as in Core Data, a child's save into its
/// parent checks none (the parent is not the store); the root context's save finds the
/// conflicts and resolves them under the root's merge policy, or throws code 1551.
extension ValidationScenarios {
    static let upsertNested: [ConformanceScenario] = [
        ConformanceScenario("validation.uniqueness.nested.childSaveLeavesTheConflictToTheRootsPolicy") { env in
            // An upsert made in a child with the default (error) policy under an objectTrumps
            // root. Before: the child's save failed with 1551 under the child's policy, so the
            // root's policy never had the chance to merge.
            try checkRootMergesAnn(env, named: "Child") { root in
                let child = root.newChildContext()
                try checkEqual(child.mergePolicy, .error, "a child's default policy")
                try child.performAndWait {
                    try UpsertStore.insert(child, "Author", ["handle": "ann", "name": "Child"])
                    try child.save()
                }
            }
        },
        ConformanceScenario("validation.uniqueness.nested.rootWithTheErrorPolicyReportsTheChildsDuplicate") { env in
            // The child's save lands; the root's save, under the error policy, throws the typed
            // error and stores nothing. The root keeps the insert, to fix or roll back.
            try UpsertStore.open(env) { container in
                try UpsertStore.storeAnn(container)
                let root = UpsertStore.context(container, .error)
                try root.performAndWait {
                    let child = root.newChildContext()
                    child.mergePolicy = .objectTrumps  // the child's policy plays no part
                    try child.performAndWait {
                        try UpsertStore.insert(child, "Author", ["handle": "ann", "name": "Child"])
                        try child.save()
                    }
                    try checkEqual(root.insertedObjects.count, 1, "the child's insert landed in the root")
                    let error = try checkThrows(ValidationError.self, "the root's save of a second 'ann'") { try root.save() }
                    try check(error.contains(.uniquenessConstraint, key: "handle"), "code 1551 on handle: \(error)")
                    try checkEqual(root.insertedObjects.count, 1, "the failed save keeps the insert")
                }
                try UpsertStore.readAnn(container) { ann in
                    try checkEqual(try UpsertStore.text(ann, "name"), "Ann", "one stored 'ann', untouched")
                }
            }
        },
        ConformanceScenario("validation.uniqueness.nested.siblingChildrenInsertTheSameValues") { env in
            // Two children of one root each insert "bob" and save. Before: the second child's
            // save found the first's object in the parent and failed under its own policy.
            for policy in [MergePolicy.error, .objectTrumps] {
                try UpsertStore.open(env) { container in
                    let root = UpsertStore.context(container, policy)
                    try root.performAndWait {
                        for name in ["First", "Second"] {
                            let child = root.newChildContext()
                            try child.performAndWait {
                                try UpsertStore.insert(child, "Author", ["handle": "bob", "name": name])
                                try child.save()
                            }
                        }
                        try checkEqual(root.insertedObjects.count, 2, "\(policy): both children's inserts landed in the root")
                        if policy == .error {
                            let error = try checkThrows(ValidationError.self, "the root's save of two 'bob's") { try root.save() }
                            try check(error.contains(.uniquenessConstraint, key: "handle"), "code 1551 on handle: \(error)")
                        } else {
                            let saved = try UpsertStore.save(root)
                            try checkEqual(saved?.mergedIDs.count, 1, "\(policy): one insert merged into the other")
                        }
                    }
                    let reader = container.newBackgroundContext()
                    try reader.performAndWait {
                        let found = try UpsertStore.fetch(reader, "Author", "handle == 'bob'")
                        try checkEqual(found.count, policy == .error ? 0 : 1, "\(policy): stored 'bob's")
                    }
                }
            }
        },
        ConformanceScenario("validation.uniqueness.nested.grandchildThroughAMiddleContext") { env in
            // Neither the grandchild's save nor the middle context's checks: the root's does.
            try checkRootMergesAnn(env, named: "Grandchild") { root in
                let middle = root.newChildContext()
                try middle.performAndWait {
                    let grandchild = middle.newChildContext()
                    try grandchild.performAndWait {
                        try UpsertStore.insert(grandchild, "Author", ["handle": "ann", "name": "Grandchild"])
                        try grandchild.save()
                    }
                    try middle.save()
                }
            }
        },
    ]

    /// Stores "ann", runs `saveBelow` on the queue of an objectTrumps root (it inserts a second
    /// "ann" named `name` in contexts below the root and saves them), saves the root, and
    /// checks that the root's save merged the new author into the stored row.
    private static func checkRootMergesAnn(_ env: ScenarioEnvironment, named name: String, _ saveBelow: (ManagedObjectContext) throws -> Void) throws {
        try UpsertStore.open(env) { container in
            let annID = try UpsertStore.storeAnn(container)
            let root = UpsertStore.context(container, .objectTrumps)
            try root.performAndWait {
                try saveBelow(root)
                let saved = try UpsertStore.save(root)
                try checkEqual(saved?.mergedIDs.values.map { $0 }, [annID], "the root's save merged the new author into the stored row")
            }
            try UpsertStore.readAnn(container) { ann in
                try checkEqual(ann.objectID, annID, "the stored row survives")
                try checkEqual(try UpsertStore.text(ann, "name"), name, "objectTrumps at the root: the name given below it")
            }
        }
    }
}
