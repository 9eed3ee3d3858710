import Foundation
import ObjectGraph
import ObjectGraphLMDB

/// The LMDB files the LMDB workloads start from, created once per run (untimed) and copied
/// per repetition when a workload writes — as ``Fixtures`` does for SQLite.
///
/// The empty store is created by opening a ``PersistentContainer`` on it, so its named
/// databases and metadata are the store's own; the chat template is then filled through raw
/// LMDB with exactly the rows and member entries the store writes. Reading workloads give the
/// raw side its own copy of the template: LMDB must not be opened twice in one process.
final class LMDBFixtures {
    let base: Fixtures
    private var counter = 0
    private var emptyStoreURL: URL?
    private var chatTemplateURL: URL?
    private var schoolTemplateURL: URL?

    init(_ base: Fixtures) { self.base = base }

    var sizes: Sizes { base.sizes }

    func newURL(_ stem: String) -> URL {
        counter += 1
        return base.directory.appendingPathComponent("\(stem)-\(counter).lmdb")
    }

    func openContainer(_ url: URL) throws -> PersistentContainer {
        try PersistentContainer(model: base.model, stores: [.lmdb(at: url)])
    }

    /// Removes a store file and its lock file.
    func remove(_ url: URL) {
        for suffix in ["", "-lock"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
    }

    /// A fresh copy of `template` (which no environment of this process has open).
    func copy(_ template: URL, as stem: String) throws -> URL {
        let url = newURL(stem)
        remove(url)
        try FileManager.default.copyItem(at: template, to: url)
        return url
    }

    func emptyStore() throws -> URL {
        if let emptyStoreURL { return emptyStoreURL }
        let url = newURL("empty")
        try openContainer(url).close()
        emptyStoreURL = url
        return url
    }

    /// Chats 1…C, each with messages `(c-1)·M+1 … c·M` in insertion order.
    func chatTemplate() throws -> URL {
        if let chatTemplateURL { return chatTemplateURL }
        let url = try copy(try emptyStore(), as: "chat-template")
        do {
            let db = try RawLMDB(path: url.path)
            try db.write { txn in try LMDBWorkloads.insertChats(db, txn, input: ChatInput(sizes)) }
        }
        chatTemplateURL = url
        return url
    }

    /// Subjects 1…S and students 1…N, each student with the subjects
    /// `BenchmarkData.subjects(of:count:of:)` picks (as in the SQLite school), written by
    /// ObjectGraph's LMDB store itself in one save: the file holds exactly what the store
    /// writes for a many-to-many relationship, both directions.
    func schoolTemplate() throws -> URL {
        if let schoolTemplateURL { return schoolTemplateURL }
        let url = try copy(try emptyStore(), as: "school-template")
        let container = try openContainer(url)
        defer { container.close() }
        let context = container.newBackgroundContext()
        let sizes = self.sizes
        try context.performAndWait {
            let subjects = (1...sizes.subjects).map { index in
                let subject = Subject(context: context)
                subject.name = BenchmarkData.subjectName(index)
                return subject
            }
            for index in 1...sizes.students {
                let student = Student(context: context)
                student.name = BenchmarkData.studentName(index)
                student.subjects = Set(BenchmarkData.subjects(of: index, count: sizes.subjectsPerStudent, of: sizes.subjects).map { subjects[$0] })
            }
            try context.save()
        }
        schoolTemplateURL = url
        return url
    }
}
