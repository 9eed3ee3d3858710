import CLMDB
import Foundation
import ObjectGraph

/// The many-to-many workloads on LMDB: the very ObjectGraph bodies the SQLite table runs
/// (``SchoolWorkloads/traverseBody(_:prefetching:)``), against raw LMDB reading the store's own
/// layout of the same school — `og:rows:Student`, `og:rows:Subject`, and each student's subject
/// keys as sorted duplicates in `og:m:Student.subjects`.
///
/// As for the chat workloads, the raw side reads its own byte-for-byte copy of the template
/// (LMDB must not be opened twice in one process), and keeps the transactions the workload
/// fixes: one read per student when traversing (ObjectGraph's one to-many fault each), one
/// read for the students and one for their subjects when prefetching.
enum LMDBSchoolWorkloads {
    static let all: [Workload] = [traverse(prefetching: false), traverse(prefetching: true)]

    /// Every student (faults off), then the name of each of their subjects.
    static func traverse(prefetching: Bool) -> Workload {
        let summary = prefetching
            ? "fetch all students prefetching 'subjects', read every subject's name; raw: the students, then in one read every student's subject keys and each subject's row once"
            : "fetch all students, read every subject's name through student.subjects; raw: the students, then per student one read of its subject keys and their rows"
        return Workload(name: SchoolWorkloads.name(prefetching: prefetching), summary: summary) { fixtures in
            let template = try fixtures.lmdb.schoolTemplate()
            let reader = ChatWorkloads.SharedReader(try fixtures.lmdb.openContainer(template))
            let rawURL = try fixtures.lmdb.copy(template, as: "school-raw")
            let raw = try RawLMDB(path: rawURL.path)
            let school = try raw.openSchool()
            return Sides(
                objectGraph: {
                    let context = reader.freshContext()
                    return Run(body: { try SchoolWorkloads.traverseBody(context, prefetching: prefetching) }, context: context)
                },
                raw: {
                    Run(body: { prefetching ? try rawPrefetch(raw, school) : try rawTraverse(raw, school) })
                },
                teardown: { reader.container.close(); fixtures.lmdb.remove(rawURL) })
        }
    }

    /// Every student row, decoded, in key order (one read).
    static func students(_ db: RawLMDB, _ school: RawLMDB.SchoolDatabases) throws -> [SchoolWorkloads.RawStudent] {
        try db.read { txn in
            var students: [SchoolWorkloads.RawStudent] = []
            try db.scan(txn, school.students) { pk, value in
                students.append(SchoolWorkloads.RawStudent(pk: pk, name: try RawLMDB.decodeName(value)))
            }
            return students
        }
    }

    /// Per student, one read: its subject keys, then each subject's row and name.
    static func rawTraverse(_ db: RawLMDB, _ school: RawLMDB.SchoolDatabases) throws -> Tally {
        var tally = Tally()
        var keys: [Int64] = []
        for student in try students(db, school) {
            try db.read { txn in
                keys.removeAll(keepingCapacity: true)
                try db.memberKeys(txn, school.studentSubjects, of: student.pk, into: &keys)
                for subject in keys {
                    guard let row = try db.get(txn, school.subjects, subject) else { throw BenchmarkFailure("raw: subject \(subject) is missing") }
                    tally.add(SchoolWorkloads.pairValue(student: student.pk, subject: subject, nameLength: try RawLMDB.decodeName(row).utf8.count))
                }
            }
        }
        return tally
    }

    /// The students, then in one read (one cursor) every student's subject keys and each
    /// subject's row once; then the pairs.
    static func rawPrefetch(_ db: RawLMDB, _ school: RawLMDB.SchoolDatabases) throws -> Tally {
        let students = try students(db, school)
        var members: [[Int64]] = []
        members.reserveCapacity(students.count)
        var names: [Int64: String] = [:]
        try db.read { txn in
            var cursor: OpaquePointer?
            try RawLMDB.check(mdb_cursor_open(txn, school.studentSubjects, &cursor), "cursor")
            defer { mdb_cursor_close(cursor) }
            for student in students {
                var keys: [Int64] = []
                RawLMDB.memberKeys(cursor, of: student.pk, into: &keys)
                for subject in keys where names[subject] == nil {
                    guard let row = try db.get(txn, school.subjects, subject) else { throw BenchmarkFailure("raw: subject \(subject) is missing") }
                    names[subject] = try RawLMDB.decodeName(row)
                }
                members.append(keys)
            }
        }
        var tally = Tally()
        for (student, keys) in zip(students, members) {
            for subject in keys {
                tally.add(SchoolWorkloads.pairValue(student: student.pk, subject: subject, nameLength: names[subject]!.utf8.count))
            }
        }
        return tally
    }
}
