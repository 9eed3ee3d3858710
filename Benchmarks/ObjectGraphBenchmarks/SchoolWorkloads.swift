import Foundation
import ObjectGraph

/// The many-to-many workloads: Student ↔ Subject.
enum SchoolWorkloads {
    static let all: [Workload] = [traverse(prefetching: false), traverse(prefetching: true)]

    @inline(__always) static func pairValue(student: Int64, subject: Int64, nameLength: Int) -> UInt64 {
        UInt64(student) &* 1_000_003 &+ UInt64(subject) &* 131 &+ UInt64(nameLength)
    }

    /// The traversal's name in every store's table.
    static func name(prefetching: Bool) -> String { prefetching ? "m2m-prefetch" : "m2m-traverse" }

    /// Fetch every student (faults off), then read the name of each of their subjects.
    static func traverse(prefetching: Bool) -> Workload {
        Workload(
            name: name(prefetching: prefetching),
            summary: prefetching
                ? "fetch all students prefetching 'subjects', read every subject's name; raw: one IN-list query per key path"
                : "fetch all students, read every subject's name through student.subjects; raw: one join query per student"
        ) { fixtures in
            let url = try fixtures.schoolTemplate()
            let reader = try ChatWorkloads.SharedReader(fixtures, url)
            let db = try RawDB(path: url.path)
            return Sides(
                objectGraph: {
                    let context = reader.freshContext()
                    return Run(body: { try traverseBody(context, prefetching: prefetching) }, context: context)
                },
                raw: {
                    Run(body: {
                        var tally = Tally()
                        let students = try loadStudents(db)
                        if prefetching {
                            let keys = students.map(\.pk)
                            var members: [Int64: [Int64]] = [:]
                            var wanted = Set<Int64>()
                            try inChunks(db, keys, sql: { "SELECT src, dst FROM \(BenchmarkModel.studentSubjects) WHERE src IN (\($0)) ORDER BY src, pos" }) { statement in
                                let subject = statement.int64(1)
                                members[statement.int64(0), default: []].append(subject)
                                wanted.insert(subject)
                            }
                            var names: [Int64: String] = [:]
                            try inChunks(db, Array(wanted), sql: { "SELECT pk, \(BenchmarkModel.subjectName) FROM \(BenchmarkModel.subjectTable) WHERE pk IN (\($0))" }) { statement in
                                names[statement.int64(0)] = statement.text(1)
                            }
                            for student in students {
                                for subject in members[student.pk] ?? [] {
                                    tally.add(pairValue(student: student.pk, subject: subject, nameLength: names[subject]!.utf8.count))
                                }
                            }
                        } else {
                            let statement = try db.prepare(
                                "SELECT s.pk, s.\(BenchmarkModel.subjectName) FROM \(BenchmarkModel.studentSubjects) j JOIN \(BenchmarkModel.subjectTable) s ON s.pk = j.dst WHERE j.src = ? ORDER BY j.pos")
                            for student in students {
                                statement.bind(student.pk, at: 1)
                                while try statement.step() {
                                    let subject = statement.int64(0)
                                    let name = statement.text(1)
                                    tally.add(pairValue(student: student.pk, subject: subject, nameLength: name.utf8.count))
                                }
                                statement.reset()
                            }
                        }
                        return tally
                    })
                },
                teardown: { reader.container.close() })
        }
    }

    /// The ObjectGraph side of both traversals, on any store: every student (faults off), then
    /// each subject of each, its name read.
    static func traverseBody(_ context: ManagedObjectContext, prefetching: Bool) throws -> Tally {
        try context.performAndWait {
            var request = FetchRequest<Student>()
            request.returnsObjectsAsFaults = false
            if prefetching { request.relationshipKeyPathsForPrefetching = ["subjects"] }
            var tally = Tally()
            for student in try context.fetch(request) {
                let pk = student.objectID.primaryKey!
                for subject in student.subjects {
                    tally.add(pairValue(student: pk, subject: subject.objectID.primaryKey!, nameLength: subject.name.utf8.count))
                }
            }
            return tally
        }
    }

    struct RawStudent {
        var pk: Int64
        var name: String
    }

    static func loadStudents(_ db: RawDB) throws -> [RawStudent] {
        let statement = try db.prepare("SELECT pk, \(BenchmarkModel.studentName) FROM \(BenchmarkModel.studentTable) ORDER BY pk")
        var students: [RawStudent] = []
        while try statement.step() { students.append(RawStudent(pk: statement.int64(0), name: statement.text(1))) }
        return students
    }

    /// Runs `sql` (with `?, ?, …` spliced in for the list) over `keys` in chunks of 500, as
    /// ObjectGraph's store does, calling `row` for each result row.
    static func inChunks(_ db: RawDB, _ keys: [Int64], sql: (String) -> String, row: (RawStatement) throws -> Void) throws {
        var statements: [Int: RawStatement] = [:]
        var start = 0
        while start < keys.count {
            let chunk = keys[start..<min(keys.count, start + 500)]
            let statement: RawStatement
            if let cached = statements[chunk.count] {
                statement = cached
            } else {
                statement = try db.prepare(sql(Array(repeating: "?", count: chunk.count).joined(separator: ", ")))
                statements[chunk.count] = statement
            }
            for (offset, key) in chunk.enumerated() { statement.bind(key, at: Int32(offset + 1)) }
            while try statement.step() { try row(statement) }
            statement.reset()
            start += 500
        }
    }
}
