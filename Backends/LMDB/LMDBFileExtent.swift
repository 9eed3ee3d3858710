import CLMDB
import Foundation
import ObjectGraph

/// Refuses a data file cut short under the pages its last transaction uses.
///
/// LMDB maps the whole file and trusts its meta page: a page past the end of the file is
/// read through the map and the process dies of `SIGBUS`, which no error code can report.
/// So, once the environment is open and before anything reads a page, the file's length is
/// compared with the pages the newest meta page says are allocated.
///
/// A shorter file is not always damaged: pages a transaction allocated and freed again
/// before committing ("loose" pages) are put in the free list without being written, so a
/// healthy file is now and then a few pages shorter than its meta page implies (seen in
/// about one commit in twenty of a write-and-delete workload). Such a file is refused only
/// when a missing page is not free; the free list is read with `pread`, every page number
/// checked against the file's length before it is read, never through the map.
enum LMDBFileExtent {
    /// Throws `StoreError(.corrupt)` naming `path` when a page in use by the newest
    /// snapshot of `env` lies past the end of the data file.
    static func verify(_ env: OpaquePointer, path: String) throws {
        var fd: mdb_filehandle_t = -1
        try check(mdb_env_get_fd(env, &fd), "reading the file descriptor of \(path)")
        var stat = MDB_stat()
        try check(mdb_env_stat(env, &stat), "reading the statistics of \(path)")
        let pageSize = Int(stat.ms_psize)
        var info = MDB_envinfo()
        try check(mdb_env_info(env, &info), "reading the state of \(path)")
        // LMDB writes a transaction's pages before its meta page, and the file only grows,
        // so a length read after the meta page covers every page that page names.
        if try fileLength(fd, path) / pageSize > info.me_last_pgno { return }
        try verifyFreeTail(env, fd: fd, pageSize: pageSize, path: path)
    }

    /// The slow path, for a file shorter than its meta page implies: every missing page must
    /// be in the free list of the snapshot a read transaction holds (held so that no writer
    /// of another process reuses the free list's pages while they are read).
    private static func verifyFreeTail(_ env: OpaquePointer, fd: mdb_filehandle_t, pageSize: Int, path: String) throws {
        for _ in 0..<8 {
            var txn: OpaquePointer?
            let rc = mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn)
            if rc == MDB_MAP_RESIZED {
                try check(mdb_env_set_mapsize(env, 0), "adopting the grown map of \(path)")
                continue
            }
            try check(rc, "starting a read transaction on \(path)")
            defer { mdb_txn_abort(txn) }
            let reader = PageReader(fd: fd, pageSize: pageSize, path: path)
            // The meta page of the snapshot: the other one may be newer, or half written.
            guard let meta = try [0, 1].map({ try reader.meta(at: $0) }).first(where: { $0.txnid == mdb_txn_id(txn) }) else {
                continue  // Both rewritten by another process meanwhile; look again.
            }
            let pagesInFile = try fileLength(fd, path) / pageSize
            if pagesInFile > meta.lastPage { return }
            let missing = pagesInFile...meta.lastPage
            let free = try reader.freePages(root: meta.freeRoot, within: missing, pagesInFile: pagesInFile)
            guard free.count < missing.count else { return }
            throw StoreError(.corrupt, """
                \(path) is cut short: it holds \(pagesInFile) whole pages of \(pageSize) bytes, \
                but its last transaction uses pages up to \(meta.lastPage), and \(missing.count - free.count) \
                of the missing pages hold data (the file was truncated or damaged)
                """)
        }
        throw StoreError(.busy, "\(path) kept changing while its length was checked against its pages; try again")
    }

    private static func fileLength(_ fd: mdb_filehandle_t, _ path: String) throws -> Int {
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw LMDBError(code: errno).storeError("reading the length of \(path)") }
        return Int(status.st_size)
    }
}

/// What the check needs of one meta page.
private struct MetaPage {
    let txnid: Int
    let lastPage: Int
    /// The root of the free list's B-tree, nil when the list is empty.
    let freeRoot: Int?
}

/// Reads LMDB pages with `pread`, bounds-checking every offset: the layout of mdb.c for
/// 64-bit little-endian builds (pages and nodes as there, `pgno_t` and `size_t` of 8 bytes).
private struct PageReader {
    let fd: mdb_filehandle_t
    let pageSize: Int
    let path: String

    static let headerSize = 16
    static let branch: UInt16 = 0x01, leaf: UInt16 = 0x02, leaf2: UInt16 = 0x20
    static let bigData: UInt16 = 0x01
    static let invalidPage = UInt64.max

    /// Meta page `index` (0 or 1): `MDB_meta` follows the page header; the free list's
    /// `MDB_db` starts 24 bytes in, its root 40 bytes further; `mm_last_pg` is at 120 and
    /// `mm_txnid` at 128.
    func meta(at index: Int) throws -> MetaPage {
        let bytes = try read(at: index * pageSize + Self.headerSize, count: 136)
        let root = bytes.word(at: 64)
        return MetaPage(txnid: Int(truncatingIfNeeded: bytes.word(at: 128)), lastPage: Int(truncatingIfNeeded: bytes.word(at: 120)),
                        freeRoot: root == Self.invalidPage ? nil : Int(truncatingIfNeeded: root))
    }

    /// The pages of `range` that the free list rooted at `root` holds. Its leaves map a
    /// transaction ID to a list of page numbers (`count`, then the numbers), kept in the node
    /// or, when long, in overflow pages.
    func freePages(root: Int?, within range: ClosedRange<Int>, pagesInFile: Int) throws -> Set<Int> {
        var free = Set<Int>()
        var pending = root.map { [$0] } ?? []
        var visited = 0
        while let pageNumber = pending.popLast() {
            visited += 1
            // A tree has fewer pages than the file; more visits means a cycle.
            guard visited <= pagesInFile else { throw damaged("its free list loops") }
            let page = try self.page(pageNumber, pagesInFile: pagesInFile)
            let flags = page.half(at: 10)
            guard flags & (Self.branch | Self.leaf) != 0, flags & Self.leaf2 == 0 else {
                throw damaged("page \(pageNumber) of its free list is neither a branch nor a leaf")
            }
            for node in try nodes(of: page, pageNumber) {
                if flags & Self.branch != 0 {
                    // A child's number is spread over the node's size and flag fields.
                    pending.append(Int(page.half(at: node)) | Int(page.half(at: node + 2)) << 16 | Int(page.half(at: node + 4)) << 32)
                    continue
                }
                let size = Int(page.half(at: node)) | Int(page.half(at: node + 2)) << 16
                let dataStart = node + 8 + Int(page.half(at: node + 6))
                let list: [UInt8]
                if page.half(at: node + 4) & Self.bigData != 0 {
                    guard dataStart + 8 <= page.count else { throw damaged("page \(pageNumber) of its free list has a node past its end") }
                    let first = Int(truncatingIfNeeded: page.word(at: dataStart))
                    let pages = (Self.headerSize + size + pageSize - 1) / pageSize
                    guard first >= 2, first < pagesInFile, pages <= pagesInFile - first else {
                        throw damaged("its free list continues on pages \(first)+\(pages), past the end of the file")
                    }
                    list = try read(at: first * pageSize + Self.headerSize, count: size)
                } else {
                    guard dataStart + size <= page.count else { throw damaged("page \(pageNumber) of its free list has a node past its end") }
                    list = Array(page[dataStart..<dataStart + size])
                }
                guard list.count >= 8, list.count % 8 == 0, Int(exactly: list.word(at: 0)) == list.count / 8 - 1 else {
                    throw damaged("page \(pageNumber) of its free list has a malformed list")
                }
                for offset in stride(from: 8, to: list.count, by: 8) {
                    if let number = Int(exactly: list.word(at: offset)), range.contains(number) { free.insert(number) }
                }
            }
        }
        return free
    }

    /// Page `number`, refused when it is not wholly in the file.
    private func page(_ number: Int, pagesInFile: Int) throws -> [UInt8] {
        guard number >= 2, number < pagesInFile else {
            throw damaged("its free list uses page \(number), which is past the end of the file (\(pagesInFile) pages)")
        }
        return try read(at: number * pageSize, count: pageSize)
    }

    /// The offsets of the nodes of a branch or leaf page, each checked to leave room for a
    /// node header in the page.
    private func nodes(of page: [UInt8], _ number: Int) throws -> [Int] {
        let lower = Int(page.half(at: 12))
        guard lower >= Self.headerSize, lower <= page.count, (lower - Self.headerSize) % 2 == 0 else {
            throw damaged("page \(number) of its free list has a bad header")
        }
        return try stride(from: Self.headerSize, to: lower, by: 2).map { slot in
            let offset = Int(page.half(at: slot))
            guard offset >= lower, offset + 8 <= page.count else { throw damaged("page \(number) of its free list has a node past its end") }
            return offset
        }
    }

    private func read(at offset: Int, count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
        if got < 0 { throw LMDBError(code: errno).storeError("reading \(path)") }
        guard got == count else { throw damaged("a read at byte \(offset) ended early") }
        return bytes
    }

    private func damaged(_ what: String) -> StoreError {
        StoreError(.corrupt, "\(path) is cut short or damaged: \(what)")
    }
}

private extension Array where Element == UInt8 {
    /// The little-endian `UInt16` at `offset` (the caller has checked the bounds).
    func half(at offset: Int) -> UInt16 {
        UInt16(self[offset]) | UInt16(self[offset + 1]) << 8
    }

    /// The little-endian `UInt64` at `offset` (the caller has checked the bounds).
    func word(at offset: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(self[offset + $1]) << (8 * $1) }
    }
}
