import CLMDB
import Foundation
import ObjectGraph
import ObjectGraphLMDB
import Testing

/// Store files cut short. LMDB maps the file and trusts its meta page, so without a check a
/// page past the end of the file killed the process with SIGBUS while the store opened.
@Suite("LMDB truncated files")
struct LMDBTruncationTests {
    /// Where a file is cut: half of it, the two meta pages only (LMDB opens that without an
    /// error), or one page and a bit (LMDB refuses that itself: its second meta is missing).
    enum Cut: String, CaseIterable, Sendable {
        case half, twoPages, onePageAndABit

        func length(of size: Int, pageSize: Int) -> Int {
            switch self {
            case .half: size / 2
            case .twoPages: 2 * pageSize
            case .onePageAndABit: pageSize + 100
            }
        }
    }

    @Test("a truncated store is refused with a corrupt error naming the file, not a crash", arguments: Cut.allCases)
    func truncated(_ cut: Cut) throws {
        let url = try LMDBFixture.temporaryFile()
        let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        try Self.insertDocs(300, into: container)
        container.close()
        let pageSize = try Self.pageSize(url)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int)
        let length = cut.length(of: size, pageSize: pageSize)
        try #require(length >= pageSize + 100 && length < size - 2 * pageSize, "the store spans enough pages to cut (\(size) bytes)")
        try FileHandle(forWritingTo: url).truncate(atOffset: UInt64(length))

        let error = #expect(throws: StoreError.self) { _ = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)]) }
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains(url.path) == true, "\(error?.message ?? "")")
    }

    @Test("a healthy file shorter than its meta page implies (its last pages freed unwritten) still opens")
    func unwrittenFreePages() throws {
        let url = try LMDBFixture.temporaryFile()
        let container = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        try Self.insertDocs(20, into: container)
        container.close()
        // Writes and deletes in each transaction of another database until a commit leaves
        // pages it allocated and freed again unwritten at the end of the file.
        let short = try Self.churnUntilShort(url)
        try #require(short, "no commit of the churn left the file short")

        let reopened = try PersistentContainer(model: try LMDBFixture.model(), stores: [.lmdb(at: url)])
        let context = reopened.newBackgroundContext()
        try context.performAndWait { () throws in
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Doc")) == 20)
        }
        reopened.close()
    }

    static func insertDocs(_ count: Int, into container: PersistentContainer) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for index in 0..<count {
                let doc = try context.insertObject(entityName: "Doc")
                try doc.setValue("document \(index) " + String(repeating: "x", count: 120), forKey: "title")
                try doc.setValue(Double(index), forKey: "rank")
            }
            try context.save()
        }
    }

    static func pageSize(_ url: URL) throws -> Int {
        try LMDBFixture.withRawEnvironment(url) { env, _ in
            var stat = MDB_stat()
            mdb_env_stat(env, &stat)
            return Int(stat.ms_psize)
        }
    }

    /// Runs up to 100 transactions of random puts and deletes in a `scratch` database (a
    /// fixed seed: the same run every time); true once one leaves the file shorter than the
    /// pages its meta page counts.
    static func churnUntilShort(_ url: URL) throws -> Bool {
        var env: OpaquePointer?
        mdb_env_create(&env)
        defer { mdb_env_close(env) }
        mdb_env_set_maxdbs(env, 64)
        mdb_env_set_mapsize(env, 256 << 20)
        try #require(mdb_env_open(env, url.path, UInt32(MDB_NOSUBDIR), 0o644) == MDB_SUCCESS)
        // A seeded linear congruential sequence (Knuth's MMIX constants): the same churn on
        // every run; its high bits are the random ones.
        var state: UInt64 = 1
        func random() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        var value = [UInt8](repeating: 0x78, count: 200)
        for _ in 0..<100 {
            var txn: OpaquePointer?
            try #require(mdb_txn_begin(env, nil, 0, &txn) == MDB_SUCCESS)
            var dbi: MDB_dbi = 0
            mdb_dbi_open(txn, "scratch", UInt32(MDB_CREATE), &dbi)
            for _ in 0..<(2000 + Int(random() % 3000)) {
                var key = Array(String(format: "%08d", Int(random() % 100_000)).utf8)
                let length = 50 + Int(random() % 150)
                key.withUnsafeMutableBytes { keyBytes in
                    value.withUnsafeMutableBytes { valueBytes in
                        var k = MDB_val(mv_size: keyBytes.count, mv_data: keyBytes.baseAddress)
                        var v = MDB_val(mv_size: length, mv_data: valueBytes.baseAddress)
                        _ = mdb_put(txn, dbi, &k, &v, 0)
                    }
                }
            }
            var cursor: OpaquePointer?
            mdb_cursor_open(txn, dbi, &cursor)
            var k = MDB_val(), v = MDB_val()
            var rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST)
            while rc == MDB_SUCCESS {
                if random() % 3 != 0 {
                    mdb_cursor_del(cursor, 0)
                    rc = mdb_cursor_get(cursor, &k, &v, MDB_GET_CURRENT)
                    if rc != MDB_SUCCESS { rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT) }
                } else {
                    rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
                }
            }
            mdb_cursor_close(cursor)
            try #require(mdb_txn_commit(txn) == MDB_SUCCESS)
            var info = MDB_envinfo(), stat = MDB_stat()
            mdb_env_info(env, &info)
            mdb_env_stat(env, &stat)
            let size = try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int)
            if size < (info.me_last_pgno + 1) * Int(stat.ms_psize) { return true }
        }
        return false
    }
}
