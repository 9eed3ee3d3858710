import Foundation
import ObjectGraph
import ObjectGraphSQLite

/// How much data the workloads use.
struct Sizes {
    var chats: Int
    var messagesPerChat: Int
    var students: Int
    var subjects: Int
    var subjectsPerStudent: Int
    var memoryObjects: Int
    /// Objects in the binary-store load and save workloads.
    var binaryObjects: Int = 100_000

    static let full = Sizes(chats: 1_000, messagesPerChat: 100, students: 10_000, subjects: 100, subjectsPerStudent: 10, memoryObjects: 1_000_000)
    static let quick = Sizes(chats: 100, messagesPerChat: 100, students: 1_000, subjects: 100, subjectsPerStudent: 10, memoryObjects: 100_000)

    var messages: Int { chats * messagesPerChat }
}

/// The files the workloads start from, created once per run (untimed) and copied per
/// repetition when a workload writes.
///
/// Every file is an ObjectGraph SQLite store: an empty one is created by opening a
/// ``PersistentContainer`` on it, so its tables, columns and indexes are exactly the store's.
/// The chat and school templates are then filled through raw sqlite3 with the values
/// ObjectGraph itself would write (entity names, version 1, dates as reference-date seconds,
/// both join tables of the many-to-many), which is much faster than going through contexts
/// and gives both sides byte-for-byte the same starting data.
final class Fixtures {
    let directory: URL
    let sizes: Sizes
    let model: ManagedObjectModel
    private var counter = 0
    private var emptyStoreURL: URL?
    private var chatTemplateURL: URL?
    private var schoolTemplateURL: URL?
    /// The LMDB workloads' files, in the same directory.
    lazy var lmdb = LMDBFixtures(self)

    init(directory: URL, sizes: Sizes) throws {
        self.directory = directory
        self.sizes = sizes
        self.model = try BenchmarkModel.make()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// A new file name in the run's directory.
    func newURL(_ stem: String) -> URL {
        counter += 1
        return directory.appendingPathComponent("\(stem)-\(counter).sqlite")
    }

    func openContainer(_ url: URL) throws -> PersistentContainer {
        try PersistentContainer(model: model, stores: [.sqlite(at: url)])
    }

    /// Removes a store file and its WAL companions.
    func remove(_ url: URL) {
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: url.path + suffix)
        }
    }

    /// A fresh copy of `template` (whose connections are all closed).
    func copy(_ template: URL, as stem: String) throws -> URL {
        let url = newURL(stem)
        remove(url)
        try FileManager.default.copyItem(at: template, to: url)
        if FileManager.default.fileExists(atPath: template.path + "-wal") {
            try FileManager.default.copyItem(atPath: template.path + "-wal", toPath: url.path + "-wal")
        }
        return url
    }

    /// An empty ObjectGraph store, with every table and index.
    func emptyStore() throws -> URL {
        if let emptyStoreURL { return emptyStoreURL }
        let url = newURL("empty")
        let container = try openContainer(url)
        container.close()
        emptyStoreURL = url
        return url
    }

    /// Chats 1…C, each with messages `(c-1)·M+1 … c·M` in insertion order.
    func chatTemplate() throws -> URL {
        if let chatTemplateURL { return chatTemplateURL }
        let url = try copy(try emptyStore(), as: "chat-template")
        do {
            let db = try RawDB(path: url.path)
            try db.exec("BEGIN IMMEDIATE;")
            try RawWriter.insertChats(db, input: ChatInput(sizes))
            try db.exec("COMMIT;")
            try db.exec("PRAGMA wal_checkpoint(TRUNCATE);")
        }
        chatTemplateURL = url
        return url
    }

    /// Subjects 1…S and students 1…N, each taking `subjectsPerStudent` subjects; both join
    /// tables filled as ObjectGraph fills them (positions in insertion order per source).
    func schoolTemplate() throws -> URL {
        if let schoolTemplateURL { return schoolTemplateURL }
        let url = try copy(try emptyStore(), as: "school-template")
        do {
            let db = try RawDB(path: url.path)
            try db.exec("BEGIN IMMEDIATE;")
            let subject = try db.prepare("INSERT INTO \(BenchmarkModel.subjectTable) (pk, entity, version, \(BenchmarkModel.subjectName)) VALUES (?, 'Subject', 1, ?)")
            for s in 1...sizes.subjects {
                subject.bind(Int64(s), at: 1)
                subject.bind(BenchmarkData.subjectName(s), at: 2)
                try subject.run()
            }
            let student = try db.prepare("INSERT INTO \(BenchmarkModel.studentTable) (pk, entity, version, \(BenchmarkModel.studentName)) VALUES (?, 'Student', 1, ?)")
            let forward = try db.prepare("INSERT INTO \(BenchmarkModel.studentSubjects) (src, dst, dste, pos) VALUES (?, ?, 'Subject', ?)")
            let backward = try db.prepare("INSERT INTO \(BenchmarkModel.subjectStudents) (src, dst, dste, pos) VALUES (?, ?, 'Student', ?)")
            var nextPosition = [Int64](repeating: 0, count: sizes.subjects + 1)
            for n in 1...sizes.students {
                student.bind(Int64(n), at: 1)
                student.bind(BenchmarkData.studentName(n), at: 2)
                try student.run()
                for (position, chosen) in BenchmarkData.subjects(of: n, count: sizes.subjectsPerStudent, of: sizes.subjects).enumerated() {
                    let s = chosen + 1
                    forward.bind(Int64(n), at: 1)
                    forward.bind(Int64(s), at: 2)
                    forward.bind(Int64(position), at: 3)
                    try forward.run()
                    backward.bind(Int64(s), at: 1)
                    backward.bind(Int64(n), at: 2)
                    backward.bind(nextPosition[s], at: 3)
                    try backward.run()
                    nextPosition[s] += 1
                }
            }
            try db.exec("COMMIT;")
            try db.exec("PRAGMA wal_checkpoint(TRUNCATE);")
        }
        schoolTemplateURL = url
        return url
    }
}

/// Raw inserts shared by the template and the raw side of the insert workload.
enum RawWriter {
    /// Inserts every chat and message with prepared statements (no transaction handling), and
    /// tallies the text lengths written (the raw side's answer in the insert workload).
    @discardableResult
    static func insertChats(_ db: RawDB, input: ChatInput) throws -> Tally {
        let sizes = input.sizes
        let chat = try db.prepare("INSERT INTO \(BenchmarkModel.chatTable) (pk, entity, version, \(BenchmarkModel.chatTitle)) VALUES (?, 'Chat', 1, ?)")
        let message = try db.prepare(
            "INSERT INTO \(BenchmarkModel.messageTable) (pk, entity, version, \(BenchmarkModel.messageText), \(BenchmarkModel.messageSentAt), \(BenchmarkModel.messageChat), \(BenchmarkModel.messageChatEntity)) VALUES (?, 'Message', 1, ?, ?, ?, 'Chat')")
        var tally = Tally()
        var pk: Int64 = 0
        for c in 1...sizes.chats {
            chat.bind(Int64(c), at: 1)
            chat.bind(input.title(c), at: 2)
            try chat.run()
            for index in 0..<sizes.messagesPerChat {
                pk += 1
                let text = input.text(chat: c, index: index)
                message.bind(pk, at: 1)
                message.bind(text, at: 2)
                message.bind(input.sentAt(chat: c, index: index), at: 3)
                message.bind(Int64(c), at: 4)
                try message.run()
                tally.add(UInt64(text.utf8.count))
            }
        }
        return tally
    }
}
