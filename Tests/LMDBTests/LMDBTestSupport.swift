import CLMDB
import Foundation
import ObjectGraph
import ObjectGraphLMDB
import Synchronization

/// Models, files and raw-LMDB helpers shared by the LMDB store's tests.
enum LMDBFixture {
    static func model(extraAttribute: Bool = false) throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Doc") { e in
                e.attribute("title", .string)
                e.attribute("rank", .double, optional: true, indexed: true)
                if extraAttribute { e.attribute("extra", .integer32, optional: true) }
                e.toMany("labels", "Label")
                e.toMany("replies", "Reply", inverse: "doc", deleteRule: .cascade)
            }
            m.entity("Label") { e in e.attribute("name", .string) }
            m.entity("Reply") { e in
                e.attribute("content", .string)
                e.toOne("doc", "Doc", inverse: "replies")
            }
        }
    }

    /// Inserts a `Reply` with `content` into `doc`'s replies.
    @discardableResult
    static func insertReply(_ content: String, to doc: ManagedObject, in context: ManagedObjectContext) throws -> ManagedObject {
        let reply = try context.insertObject(entityName: "Reply")
        try reply.setValue(content, forKey: "content")
        try reply.setValue(doc, forKey: "doc")
        return reply
    }

    static func temporaryFile() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("og-lmdb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        folders.withLock { $0.append(directory) }
        return directory.appendingPathComponent("store.lmdb")
    }

    /// The folders ``temporaryFile()`` made, removed when the test process exits (tests keep
    /// their stores open to the end, so none can remove its own earlier).
    private static let folders: Mutex<[URL]> = {
        atexit { for folder in LMDBFixture.folders.withLock({ $0 }) { try? FileManager.default.removeItem(at: folder) } }
        return Mutex([])
    }()

    /// Runs `body` with a raw environment on `url` (no ObjectGraph store may have it open).
    static func withRawEnvironment<T>(_ url: URL, _ body: (OpaquePointer, OpaquePointer) throws -> T) throws -> T {
        var env: OpaquePointer?
        mdb_env_create(&env)
        defer { mdb_env_close(env) }
        mdb_env_set_maxdbs(env, 64)
        guard mdb_env_open(env, url.path, UInt32(MDB_NOSUBDIR), 0o644) == MDB_SUCCESS else { throw CocoaError(.fileReadCorruptFile) }
        var txn: OpaquePointer?
        mdb_txn_begin(env, nil, 0, &txn)
        do {
            let result = try body(env!, txn!)
            mdb_txn_commit(txn)
            return result
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
    }

    /// The names in the environment's main database: its named databases.
    static func databaseNames(_ url: URL) throws -> [String] {
        try withRawEnvironment(url) { _, txn in
            var dbi: MDB_dbi = 0
            mdb_dbi_open(txn, nil, 0, &dbi)
            var cursor: OpaquePointer?
            mdb_cursor_open(txn, dbi, &cursor)
            defer { mdb_cursor_close(cursor) }
            var key = MDB_val(), value = MDB_val()
            var names: [String] = []
            var op = MDB_FIRST
            while mdb_cursor_get(cursor, &key, &value, op) == MDB_SUCCESS {
                names.append(String(decoding: UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size), as: UTF8.self))
                op = MDB_NEXT
            }
            return names
        }
    }
}

func key(_ path: String) -> ObjectGraph.PredicateOperand { .keyPath(path) }
