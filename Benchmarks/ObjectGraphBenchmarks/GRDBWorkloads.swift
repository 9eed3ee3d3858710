#if GRDB_COMPARISON
import Foundation
import GRDB

/// GRDB doing each SQLite workload the way a GRDB user would — `Codable` records, the query
/// interface, one `DatabaseQueue` — against the same raw sqlite3 side, on the same files.
/// Built only by `make bench-grdb` (issue 4 asks ObjectGraph to beat GRDB everywhere; GRDB is
/// a dependency of nothing else). Each workload reuses the SQLite workload's fixtures and raw
/// side and replaces its ObjectGraph side, so the two tables of one run share their raw sides'
/// work and files.
enum GRDBWorkloads {
    static let all: [Workload] = [
        replacing(ChatWorkloads.insert, insert),
        replacing(ChatWorkloads.fetchAll, fetchAll),
        replacing(ChatWorkloads.chatMessages, chatMessages),
        replacing(ChatWorkloads.faultByID, faultByID),
        replacing(ChatWorkloads.countPerChat, countPerChat),
        replacing(ChatWorkloads.countGrouped, countGrouped),
        replacing(ChatWorkloads.cascadeDelete, cascadeDelete),
        replacing(ChatWorkloads.update, update),
        replacing(SchoolWorkloads.traverse(prefetching: false), traverse),
        replacing(SchoolWorkloads.traverse(prefetching: true), prefetch),
    ]

    /// `base` with its ObjectGraph side replaced by GRDB's.
    static func replacing(_ base: Workload, _ side: @escaping @Sendable (Fixtures) throws -> () throws -> Run) -> Workload {
        Workload(name: base.name, summary: base.summary) { fixtures in
            var sides = try base.make(fixtures)
            sides.objectGraph = try side(fixtures)
            sides.subject = "GRDB"
            return sides
        }
    }

    /// A queue on `url`, configured like the store's and the raw side's connections.
    static func open(_ url: URL) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
        }
        return try DatabaseQueue(path: url.path, configuration: configuration)
    }

    /// A reading side: one queue on the template for every repetition.
    static func reading(_ template: @escaping @Sendable (Fixtures) throws -> URL, _ body: @escaping @Sendable (Database, Sizes) throws -> Tally) -> @Sendable (Fixtures) throws -> () throws -> Run {
        { fixtures in
            let queue = try open(try template(fixtures))
            let sizes = fixtures.sizes
            return { Run(body: { try queue.read { db in try body(db, sizes) } }) }
        }
    }

    /// A writing side: per repetition a copy of the template, the body in one write
    /// transaction, and the stored state read back.
    static func writing(_ template: @escaping @Sendable (Fixtures) throws -> URL, as name: String, _ body: @escaping @Sendable (Database, Sizes) throws -> Tally) -> @Sendable (Fixtures) throws -> () throws -> Run {
        writing(template, as: name, preparing: { $0 }, body)
    }

    /// A writing side whose body gets `prepare`'s value, made once before the runs (untimed).
    static func writing<Input: Sendable>(
        _ template: @escaping @Sendable (Fixtures) throws -> URL, as name: String,
        preparing prepare: @escaping @Sendable (Sizes) -> Input, _ body: @escaping @Sendable (Database, Input) throws -> Tally
    ) -> @Sendable (Fixtures) throws -> () throws -> Run {
        { fixtures in
            let source = try template(fixtures)
            let input = prepare(fixtures.sizes)
            return {
                let url = try fixtures.copy(source, as: name)
                var queue: DatabaseQueue? = try open(url)
                return Run(
                    body: { try queue!.write { db in try body(db, input) } },
                    after: { try queue?.close(); queue = nil; return try ChatWorkloads.storedState(url) },
                    cleanup: { try? queue?.close(); queue = nil; fixtures.remove(url) })
            }
        }
    }

    static let chatColumn = Column("fk:Message.chat")

    // MARK: Workloads

    static let insert = writing({ try $0.emptyStore() }, as: "insert-grdb", preparing: ChatInput.init) { db, input in
        var tally = Tally()
        var pk: Int64 = 0
        for c in 1...input.sizes.chats {
            try GRDBChat(pk: Int64(c), entity: "Chat", version: 1, title: input.title(c)).insert(db)
            for index in 0..<input.sizes.messagesPerChat {
                pk += 1
                let text = input.text(chat: c, index: index)
                try GRDBMessage(
                    pk: pk, entity: "Message", version: 1, text: text,
                    sentAt: input.sentAt(chat: c, index: index),
                    chat: Int64(c), chatEntity: "Chat"
                ).insert(db)
                tally.add(UInt64(text.utf8.count))
            }
        }
        return tally
    }

    static let fetchAll = reading({ try $0.chatTemplate() }) { db, _ in
        var tally = Tally()
        for message in try GRDBMessage.order(Column("pk")).fetchAll(db) {
            tally.add(UInt64(message.text.utf8.count) &+ message.sentAt.bitPattern)
        }
        return tally
    }

    static let chatMessages = reading({ try $0.chatTemplate() }) { db, sizes in
        var tally = Tally()
        for c in 1...sizes.chats {
            let messages = try GRDBMessage.filter(chatColumn == c).order(Column("a:Message.sentAt"), Column("pk")).fetchAll(db)
            for (position, message) in messages.enumerated() {
                tally.add(UInt64(position + 1) &* UInt64(message.pk) &+ UInt64(message.text.utf8.count))
            }
        }
        return tally
    }

    static let faultByID: @Sendable (Fixtures) throws -> () throws -> Run = { fixtures in
        var generator = SplitMix64(seed: 42)
        let keys = Array(1...fixtures.sizes.messages).shuffled(using: &generator)
        return try reading({ try $0.chatTemplate() }) { db, _ in
            var tally = Tally()
            for key in keys {
                guard let message = try GRDBMessage.fetchOne(db, key: key) else { throw BenchmarkFailure("GRDB: message \(key) is missing") }
                tally.add(UInt64(message.text.utf8.count) &+ UInt64(message.pk))
            }
            return tally
        }(fixtures)
    }

    static let countPerChat = reading({ try $0.chatTemplate() }) { db, sizes in
        var tally = Tally()
        for c in 1...sizes.chats {
            tally.add(UInt64(try GRDBMessage.filter(chatColumn == c).fetchCount(db)) &* UInt64(c))
        }
        return tally
    }

    static let countGrouped = reading({ try $0.chatTemplate() }) { db, _ in
        var tally = Tally()
        let sql = "SELECT c.\"a:Chat.title\" AS title, COUNT(*) AS count FROM \"Message\" m JOIN \"Chat\" c ON c.pk = m.\"fk:Message.chat\" GROUP BY m.\"fk:Message.chat\""
        let rows = try Row.fetchCursor(db, sql: sql)
        while let row = try rows.next() {
            let title: String = row["title"]
            let count: Int64 = row["count"]
            tally.add(fnv(title) &* UInt64(count))
        }
        return tally
    }

    static let cascadeDelete = writing({ try $0.chatTemplate() }, as: "cascade-grdb") { db, sizes in
        var tally = Tally()
        for c in ChatWorkloads.deletedChats(sizes) {
            try GRDBMessage.filter(chatColumn == c).deleteAll(db)
            try GRDBChat.deleteOne(db, key: c)
            tally.add(UInt64(c))
        }
        return tally
    }

    static let update = writing({ try $0.chatTemplate() }, as: "update-grdb") { db, sizes in
        var tally = Tally()
        for key in stride(from: 10, through: sizes.messages, by: 10) {
            guard var message = try GRDBMessage.fetchOne(db, key: key) else { throw BenchmarkFailure("GRDB: message \(key) is missing") }
            message.text += " (edited)"
            message.version += 1
            try message.update(db)
            tally.add(UInt64(message.text.utf8.count))
        }
        return tally
    }

    static let traverse = reading({ try $0.schoolTemplate() }) { db, _ in
        var tally = Tally()
        let subjects = try db.makeStatement(
            sql: "SELECT s.* FROM \"j:Student.subjects\" j JOIN \"Subject\" s ON s.pk = j.dst WHERE j.src = ? ORDER BY j.pos")
        for student in try GRDBStudent.order(Column("pk")).fetchAll(db) {
            for subject in try GRDBSubject.fetchAll(subjects, arguments: [student.pk]) {
                tally.add(SchoolWorkloads.pairValue(student: student.pk, subject: subject.pk, nameLength: subject.name.utf8.count))
            }
        }
        return tally
    }

    /// GRDB's own prefetching: `including(all:)` through the join table (one query for the
    /// students, one for the joined subjects per chunk of students).
    static let prefetch = reading({ try $0.schoolTemplate() }) { db, _ in
        var tally = Tally()
        let request = GRDBStudent.including(all: GRDBStudent.subjects).order(Column("pk"))
        for student in try GRDBStudentWithSubjects.fetchAll(db, request) {
            for subject in student.subjects {
                tally.add(SchoolWorkloads.pairValue(student: student.student.pk, subject: subject.pk, nameLength: subject.name.utf8.count))
            }
        }
        return tally
    }
}

// MARK: Records: the store's tables and columns, as a GRDB user would map them

struct GRDBChat: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "Chat"
    var pk: Int64
    var entity: String
    var version: Int64
    var title: String
    enum CodingKeys: String, CodingKey { case pk, entity, version, title = "a:Chat.title" }
}

struct GRDBMessage: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "Message"
    var pk: Int64
    var entity: String
    var version: Int64
    var text: String
    /// Reference-date seconds, as ObjectGraph stores dates.
    var sentAt: Double
    var chat: Int64
    var chatEntity: String
    enum CodingKeys: String, CodingKey {
        case pk, entity, version
        case text = "a:Message.text", sentAt = "a:Message.sentAt", chat = "fk:Message.chat", chatEntity = "fke:Message.chat"
    }
}

struct GRDBStudent: Codable, FetchableRecord, TableRecord {
    static let databaseTableName = "Student"
    var pk: Int64
    var name: String
    enum CodingKeys: String, CodingKey { case pk, name = "a:Student.name" }

    /// The schema declares no foreign keys (ObjectGraph keeps its own), so they are spelled out.
    static let joins = hasMany(GRDBStudentSubject.self, using: ForeignKey(["src"], to: ["pk"]))
    static let subjects = hasMany(GRDBSubject.self, through: joins, using: GRDBStudentSubject.subject).forKey("subjects")
}

/// The join table, only ever walked through by the association.
enum GRDBStudentSubject: TableRecord {
    static let databaseTableName = "j:Student.subjects"
    static let subject = belongsTo(GRDBSubject.self, using: ForeignKey(["dst"], to: ["pk"]))
}

struct GRDBSubject: Codable, FetchableRecord, TableRecord {
    static let databaseTableName = "Subject"
    var pk: Int64
    var name: String
    enum CodingKeys: String, CodingKey { case pk, name = "a:Subject.name" }
}

/// A student with the subjects `including(all:)` prefetched.
struct GRDBStudentWithSubjects: Decodable, FetchableRecord {
    var student: GRDBStudent
    var subjects: [GRDBSubject]
}
#endif
