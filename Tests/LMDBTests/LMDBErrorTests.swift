import CLMDB
import Foundation
import ObjectGraph
@testable import ObjectGraphLMDB
import Testing

/// Every return code liblmdb defines, and the `errno` values `LMDBError.storeCode` singles
/// out, becomes the ObjectGraph error the backend README lists, with a message naming the
/// LMDB error and the original code kept as `underlying`.
@Suite("LMDB error codes")
struct LMDBErrorTests {
    /// A return code, the name liblmdb's text gives it (`nil` for an `errno` value), and the
    /// ObjectGraph code it must map to.
    struct Case: Sendable, CustomTestStringConvertible {
        let code: Int32
        let name: String?
        let expected: StoreError.Code
        var testDescription: String { "\(name ?? "errno \(code)") → \(expected)" }
    }

    /// Each `MDB_*` code with its name and the code it maps to, in lmdb.h's order. Written out
    /// rather than derived from `storeCode`, so a changed mapping fails here until the table
    /// and the README's list are changed with it.
    static let lmdbCodes: [Case] = [
        Case(code: MDB_KEYEXIST, name: "MDB_KEYEXIST", expected: .constraintViolation),
        Case(code: MDB_NOTFOUND, name: "MDB_NOTFOUND", expected: .backend),
        Case(code: MDB_PAGE_NOTFOUND, name: "MDB_PAGE_NOTFOUND", expected: .corrupt),
        Case(code: MDB_CORRUPTED, name: "MDB_CORRUPTED", expected: .corrupt),
        Case(code: MDB_PANIC, name: "MDB_PANIC", expected: .io),
        Case(code: MDB_VERSION_MISMATCH, name: "MDB_VERSION_MISMATCH", expected: .corrupt),
        Case(code: MDB_INVALID, name: "MDB_INVALID", expected: .corrupt),
        Case(code: MDB_MAP_FULL, name: "MDB_MAP_FULL", expected: .backend),
        Case(code: MDB_DBS_FULL, name: "MDB_DBS_FULL", expected: .backend),
        Case(code: MDB_READERS_FULL, name: "MDB_READERS_FULL", expected: .busy),
        Case(code: MDB_TLS_FULL, name: "MDB_TLS_FULL", expected: .busy),
        Case(code: MDB_TXN_FULL, name: "MDB_TXN_FULL", expected: .backend),
        Case(code: MDB_CURSOR_FULL, name: "MDB_CURSOR_FULL", expected: .backend),
        Case(code: MDB_PAGE_FULL, name: "MDB_PAGE_FULL", expected: .backend),
        Case(code: MDB_MAP_RESIZED, name: "MDB_MAP_RESIZED", expected: .backend),
        Case(code: MDB_INCOMPATIBLE, name: "MDB_INCOMPATIBLE", expected: .corrupt),
        Case(code: MDB_BAD_RSLOT, name: "MDB_BAD_RSLOT", expected: .backend),
        Case(code: MDB_BAD_TXN, name: "MDB_BAD_TXN", expected: .backend),
        Case(code: MDB_BAD_VALSIZE, name: "MDB_BAD_VALSIZE", expected: .backend),
        // A changed handle is the store's fault, not the file's (see LMDBError.storeCode).
        Case(code: MDB_BAD_DBI, name: "MDB_BAD_DBI", expected: .backend),
    ]

    /// `errno` values from the system calls under LMDB: a lock held elsewhere is `busy`, any
    /// other failed call `io`.
    static let errnoCodes: [Case] = [EACCES, EAGAIN, EBUSY].map { Case(code: $0, name: nil, expected: .busy) }
        + [ENOSPC, EIO, ENOMEM, EINVAL, EPERM, ENOENT, EROFS].map { Case(code: $0, name: nil, expected: .io) }

    @Test("the table covers every code from MDB_KEYEXIST through MDB_LAST_ERRCODE, each once")
    func tableIsComplete() {
        // lmdb.h numbers its codes consecutively; a liblmdb adding a code moves MDB_LAST_ERRCODE.
        #expect(Self.lmdbCodes.map(\.code) == Array(MDB_KEYEXIST...MDB_LAST_ERRCODE))
    }

    @Test("each MDB_* code maps to its StoreError code, named in the message, kept as underlying", arguments: LMDBErrorTests.lmdbCodes)
    func lmdbCode(_ test: Case) throws {
        let (code, name, expected) = (test.code, try #require(test.name), test.expected)
        let lmdb = LMDBError(code: code)
        #expect(lmdb.storeCode == expected)
        #expect(lmdb.message == String(cString: mdb_strerror(code)))
        // liblmdb's text for its own codes begins with the code's name.
        #expect(lmdb.message.hasPrefix("\(name): "))
        #expect(lmdb.description.contains("\(code)") && lmdb.description.contains(name))
        try expectThrown(code, expected, naming: name)
    }

    @Test("errno values LMDB passes on map to busy (a lock held elsewhere) or io, with strerror's text", arguments: LMDBErrorTests.errnoCodes)
    func errnoCode(_ test: Case) throws {
        let (code, expected) = (test.code, test.expected)
        let lmdb = LMDBError(code: code)
        #expect(lmdb.storeCode == expected)
        // mdb_strerror passes an errno value to strerror.
        let text = String(cString: strerror(code))
        #expect(lmdb.message == text)
        try expectThrown(code, expected, naming: text)
    }

    @Test("a negative code LMDB does not define is a backend failure, and success throws nothing")
    func outsideTheRange() throws {
        #expect(LMDBError(code: MDB_KEYEXIST - 1).storeCode == .backend)
        #expect(LMDBError(code: MDB_LAST_ERRCODE + 1).storeCode == .backend)
        #expect(LMDBError(code: -1).storeCode == .backend)
        try check(MDB_SUCCESS, "succeeding")
    }

    /// `check(_:_:)`, the path every failed LMDB call takes, throws a `StoreError` of
    /// `expected` whose message has the context, `naming` and the code, and whose
    /// `underlying` is the `LMDBError` of `code`.
    private func expectThrown(_ code: Int32, _ expected: StoreError.Code, naming: String) throws {
        let error = try #require(throws: StoreError.self) { try check(code, "reading row 7 of /tmp/x.lmdb") }
        #expect(error.code == expected)
        #expect(error.message.hasPrefix("reading row 7 of /tmp/x.lmdb: "))
        #expect(error.message.contains(naming))
        #expect(error.message.contains("(MDB code \(code))"))
        let underlying = try #require(error.underlying as? LMDBError)
        #expect(underlying.code == code)
    }
}
