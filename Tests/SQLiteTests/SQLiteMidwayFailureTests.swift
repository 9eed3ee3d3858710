import Foundation
import ObjectGraph
import ObjectGraphSQLite
import Testing

/// A save is one transaction: when a statement fails after others of the same save ran, the
/// ones that ran are rolled back with it. (`SQLiteStoreTests.failedSaveLeavesFileUnchanged`
/// fails before the first write, on a version conflict.)
@Suite("SQLite save failing midway")
struct SQLiteMidwayFailureTests {
    @Test("a save whose late statement fails leaves none of its earlier writes in the file, and the next save works")
    func failureAfterWritesRollsThemBack() throws {
        let url = try SQLiteStoreTests.temporaryFile()
        let model = try SQLiteStoreTests.model()
        let container = try PersistentContainer(model: model, stores: [.sqlite(at: url)])
        let context = container.newBackgroundContext()
        let noteID = try context.performAndWait {
            let note = try context.insertObject(entityName: "Note")
            try note.setValue("v1", forKey: "text")
            try context.save()
            return note.objectID
        }
        // The failure: a trigger refusing one comment's insert. A save runs its updates before
        // its inserts, so by then the note's update (and perhaps other comments) is written.
        try RawConnection(url).execute("""
            CREATE TRIGGER refuse_boom BEFORE INSERT ON "Comment" WHEN NEW."a:Comment.body" = 'boom'
            BEGIN SELECT RAISE(ABORT, 'boom refused'); END;
            """)
        try context.performAndWait {
            let note = try context.existingObject(with: noteID)
            try note.setValue("v2", forKey: "text")
            for body in ["c0", "c1", "boom", "c3"] {
                let comment = try context.insertObject(entityName: "Comment")
                try comment.setValue(body, forKey: "body")
                try comment.setValue(note, forKey: "note")
            }
            let error = #expect(throws: (any Error).self) { try context.save() }
            #expect("\(String(describing: error))".contains("boom refused"), "the trigger's failure, not another: \(String(describing: error))")
        }
        // The store's write transaction ended with the failure: its next save commits.
        let later = container.newBackgroundContext()
        try later.performAndWait {
            try later.insertObject(entityName: "Tag").setValue("later", forKey: "label")
            try later.save()
        }
        container.close()

        let reopened = try PersistentContainer(model: model, stores: [.sqlite(at: url)])
        defer { reopened.close() }
        let check = reopened.newBackgroundContext()
        try check.performAndWait { () throws in
            #expect(try check.count(for: FetchRequest<ManagedObject>(entityName: "Comment")) == 0, "no insert of the failed save landed")
            #expect(try check.existingObject(with: noteID).value(forKey: "text") as? String == "v1", "the update that ran before the failure was rolled back")
            let tags = try check.fetch(FetchRequest<ManagedObject>(entityName: "Tag"))
            #expect(try tags.map { try $0.value(forKey: "label") as? String } == ["later"])
        }
    }
}
