import Foundation
import ObjectGraph

/// A chat: its messages are deleted with it (cascade).
final class Chat: ManagedObject {
    @Attribute var title: String
    @Relationship var messages: Set<Message>
}

/// A message of one chat.
final class Message: ManagedObject {
    @Attribute var text: String
    @Attribute var sentAt: Date
    @Relationship var chat: Chat?
}

/// A student taking several subjects (many-to-many with ``Subject/students``).
final class Student: ManagedObject {
    @Attribute var name: String
    @Relationship var subjects: Set<Subject>
}

/// A subject taken by many students.
final class Subject: ManagedObject {
    @Attribute var name: String
    @Relationship var students: Set<Student>
}

/// A small object for the memory workload.
final class Item: ManagedObject {
    @Attribute var number: Int64
    @Attribute var label: String
}

/// The benchmark model, and the SQL names ``ObjectGraphSQLite/SQLiteStore`` gives its tables
/// and columns (see `SQLiteSchema`): the raw side reads and writes exactly these tables, so
/// both sides work on the same schema, indexes included.
enum BenchmarkModel {
    static func make() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Chat", as: Chat.self) { e in
                e.attribute("title", .string)
                e.toMany("messages", "Message", inverse: "chat", deleteRule: .cascade)
            }
            m.entity("Message", as: Message.self) { e in
                e.attribute("text", .string)
                e.attribute("sentAt", .date)
                e.toOne("chat", "Chat", inverse: "messages", optional: false)
            }
            m.entity("Student", as: Student.self) { e in
                e.attribute("name", .string)
                e.toMany("subjects", "Subject", inverse: "students")
            }
            m.entity("Subject", as: Subject.self) { e in
                e.attribute("name", .string)
                e.toMany("students", "Student", inverse: "subjects")
            }
            m.entity("Item", as: Item.self) { e in
                e.attribute("number", .integer64)
                e.attribute("label", .string)
            }
        }
    }

    // Tables: one per entity hierarchy, `pk INTEGER PRIMARY KEY, entity, version, columns…`.
    static let chatTable = "\"Chat\""
    static let chatTitle = "\"a:Chat.title\""
    static let messageTable = "\"Message\""
    static let messageText = "\"a:Message.text\""
    static let messageSentAt = "\"a:Message.sentAt\""
    /// The foreign key of `Message.chat` (indexed) and the destination's entity name.
    static let messageChat = "\"fk:Message.chat\""
    static let messageChatEntity = "\"fke:Message.chat\""
    static let studentTable = "\"Student\""
    static let studentName = "\"a:Student.name\""
    static let subjectTable = "\"Subject\""
    static let subjectName = "\"a:Subject.name\""
    /// A many-to-many is one join table per direction: `(src, dst, dste, pos)`.
    static let studentSubjects = "\"j:Student.subjects\""
    static let subjectStudents = "\"j:Subject.students\""
    static let itemTable = "\"Item\""
    static let itemNumber = "\"a:Item.number\""
    static let itemLabel = "\"a:Item.label\""
}

/// The generated data, shared by both sides so they write and expect the same values.
enum BenchmarkData {
    /// 2023-11-14 in the reference-date seconds ObjectGraph stores dates as.
    static let baseDate = Date(timeIntervalSinceReferenceDate: 721_700_000)

    static func chatTitle(_ chat: Int) -> String { "Chat \(chat)" }

    /// Messages have different lengths (20–60 bytes).
    static func messageText(chat: Int, index: Int) -> String {
        "message \(index) of chat \(chat) " + String(repeating: "x", count: (chat &* 31 &+ index &* 7) % 40)
    }

    /// Sent times are a permutation of the insertion order, so sorting by them is real work.
    static func sentAt(chat: Int, index: Int, perChat: Int) -> Double {
        baseDate.timeIntervalSinceReferenceDate + Double((index &* 37) % max(perChat, 1)) * 60 + Double(chat)
    }

    static func studentName(_ student: Int) -> String { "Student \(student)" }
    static func subjectName(_ subject: Int) -> String { "Subject \(subject) " + String(repeating: "s", count: subject % 17) }

    /// The subjects (0-based) of a student: `count` distinct ones of `subjects`, chosen by a
    /// seeded generator so the layout is the same every run.
    static func subjects(of student: Int, count: Int, of subjects: Int) -> [Int] {
        var generator = SplitMix64(seed: UInt64(student) &* 0x9E37_79B9)
        var chosen: [Int] = []
        while chosen.count < min(count, subjects) {
            let candidate = Int(generator.next() % UInt64(subjects))
            if !chosen.contains(candidate) { chosen.append(candidate) }
        }
        return chosen
    }

    static func itemLabel(_ number: Int) -> String { "item \(number)" }
}

/// A small seeded generator (SplitMix64), so shuffles are the same on both sides and every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// FNV-1a over a string's UTF-8: an order-independent way to fold strings into checksums.
@inline(__always) func fnv(_ text: String) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    return hash
}
