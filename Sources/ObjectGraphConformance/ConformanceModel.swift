import Foundation
import ObjectGraph

/// The one test model of the kit: every attribute type, every relationship kind, every delete
/// rule on to-one and to-many, required and optional, reflexive and cyclic graphs, inheritance.
public enum ConformanceModel {
    /// Builds the model.
    public static func make() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Student", as: Student.self) { e in
                e.attribute("name", .string)
                e.attribute("age", .integer16, optional: true, rules: [.minimum(0), .maximum(150)])
                e.toOne("address", "Address", inverse: "student", deleteRule: .cascade)
                e.toOne("schoolClass", "SchoolClass", inverse: "students")
                e.toMany("subjects", "Subject", inverse: "students")
                e.toMany("tags", "Tag")
                e.toOne("locker", "Locker")
            }
            m.entity("Address", as: Address.self) { e in
                e.attribute("street", .string)
                e.toOne("student", "Student", inverse: "address")
            }
            m.entity("SchoolClass", as: SchoolClass.self) { e in
                e.attribute("title", .string)
                e.toMany("students", "Student", inverse: "schoolClass")
            }
            m.entity("Subject", as: Subject.self) { e in
                e.attribute("name", .string)
                e.toMany("students", "Student", inverse: "subjects")
            }
            m.entity("Tag", as: Tag.self) { e in e.attribute("label", .string) }
            // An entity that stores nothing but a to-many: no attribute, no to-one.
            m.entity("Shelf") { e in e.toMany("tags", "Tag") }
            m.entity("Locker", as: Locker.self) { e in e.attribute("number", .integer32) }
            m.entity("Login", as: Login.self) { e in
                e.attribute("email", .string, optional: true)
                e.attribute("owner", .string, optional: true)
                e.unique("email")
            }
            m.entity("Employee", as: Employee.self) { e in
                e.attribute("name", .string)
                e.toOne("manager", "Employee", inverse: "reports")
                e.toMany("reports", "Employee", inverse: "manager")
            }
            m.entity("Chat", as: Chat.self) { e in
                e.attribute("title", .string, default: "Untitled")
                e.toMany("messages", "Message", inverse: "chat", deleteRule: .cascade)
                e.toMany("members", "Member", inverse: "chats")
            }
            m.entity("Message", as: Message.self) { e in
                e.attribute("text", .string)
                e.attribute("sentAt", .date, optional: true)
                e.toOne("chat", "Chat", inverse: "messages")
                e.toOne("author", "Member", inverse: "messages")
            }
            m.entity("Member", as: Member.self) { e in
                e.attribute("name", .string)
                e.toMany("chats", "Chat", inverse: "members")
                e.toMany("messages", "Message", inverse: "author")
            }
            m.entity("Playlist", as: Playlist.self) { e in
                e.attribute("name", .string)
                e.toMany("tracks", "Track", inverse: "playlist", deleteRule: .cascade, ordered: true)
            }
            m.entity("Track", as: Track.self) { e in
                e.attribute("title", .string)
                e.toOne("playlist", "Playlist", inverse: "tracks")
            }
            // Delete rules × to-one/to-many, reached by key-value access.
            m.entity("Owner") { e in
                e.attribute("name", .string)
                for rule in DeleteRule.allCases {
                    e.toOne("\(rule.rawValue)One", "Item", inverse: "\(rule.rawValue)OneOwner", deleteRule: rule)
                    e.toMany("\(rule.rawValue)Many", "Item", inverse: "\(rule.rawValue)ManyOwner", deleteRule: rule)
                }
            }
            m.entity("Item") { e in
                e.attribute("name", .string)
                for rule in DeleteRule.allCases {
                    e.toOne("\(rule.rawValue)OneOwner", "Owner", inverse: "\(rule.rawValue)One")
                    e.toOne("\(rule.rawValue)ManyOwner", "Owner", inverse: "\(rule.rawValue)Many")
                }
            }
            // Relationship counts: 2...3 players, a required captain, a crew that needs one mate.
            m.entity("Roster") { e in
                e.attribute("name", .string)
                e.toMany("players", "Player", inverse: "roster", min: 2, max: 3)
                e.toOne("captain", "Player", inverse: "captainOf", optional: false)
            }
            m.entity("Crew") { e in
                e.attribute("name", .string)
                e.toMany("mates", "Player", inverse: "crew", optional: false)
            }
            m.entity("Player") { e in
                e.attribute("name", .string)
                e.toOne("roster", "Roster", inverse: "players")
                e.toOne("captainOf", "Roster", inverse: "captain")
                e.toOne("crew", "Crew", inverse: "mates")
            }
            // A required to-one whose owner nullifies it on delete.
            m.entity("Folder") { e in
                e.attribute("name", .string)
                e.toMany("documents", "Document", inverse: "folder", deleteRule: .nullify)
            }
            m.entity("Document") { e in
                e.attribute("title", .string)
                e.toOne("folder", "Folder", inverse: "documents", optional: false)
            }
            // Cycles: a ring of nodes cascading both ways, and a cascading tree.
            m.entity("Node") { e in
                e.attribute("label", .string)
                e.toOne("next", "Node", inverse: "previous", deleteRule: .cascade)
                e.toOne("previous", "Node", inverse: "next", deleteRule: .cascade)
                e.toMany("children", "Node", inverse: "parent", deleteRule: .cascade)
                e.toOne("parent", "Node", inverse: "children")
            }
            // Every attribute type.
            m.entity("AllTypes") { e in
                e.attribute("int16", .integer16, optional: true)
                e.attribute("int32", .integer32, optional: true)
                e.attribute("int64", .integer64, optional: true)
                e.attribute("double", .double, optional: true)
                e.attribute("float", .float, optional: true)
                e.attribute("decimal", .decimal, optional: true)
                e.attribute("string", .string, optional: true)
                e.attribute("bool", .boolean, optional: true)
                e.attribute("date", .date, optional: true)
                e.attribute("data", .binaryData, optional: true)
                e.attribute("uuid", .uuid, optional: true)
                e.attribute("uri", .uri, optional: true)
                e.transformable("palette", Palette.self)
                e.attribute("defaulted", .integer32, default: 42)
                e.attribute("scratch", .string, optional: true, transient: true)
            }
            // The same attributes, each indexed: a store that keeps indexes answers equality,
            // ranges and sorts from them (see FetchScenarios+RandomPredicates.swift).
            m.entity("IndexedTypes") { e in
                let types: [(String, AttributeType)] = [
                    ("int16", .integer16), ("int32", .integer32), ("int64", .integer64), ("double", .double), ("float", .float),
                    ("decimal", .decimal), ("string", .string), ("bool", .boolean), ("date", .date), ("data", .binaryData),
                    ("uuid", .uuid), ("uri", .uri),
                ]
                for (name, type) in types { e.attribute(name, type, optional: true, indexed: true) }
            }
            // Attribute validation rules.
            m.entity("Account") { e in
                e.attribute("username", .string, rules: [.minLength(3), .maxLength(12), .pattern("[a-z0-9_]+")])
                e.attribute("balance", .double, default: 0.0, rules: [.minimum(0), .maximum(1_000_000)])
                e.attribute("pin", .integer16)
                e.attribute("openedAt", .date, optional: true, rules: [
                    .earliest(Date(timeIntervalSince1970: 946_684_800)),  // 2000-01-01
                    .latest(Date(timeIntervalSince1970: 4_102_444_800)),  // 2100-01-01
                ])
            }
            // Inheritance: an abstract parent with two sub-entities, reached through a relationship.
            m.entity("Vehicle", abstract: true) { e in
                e.attribute("name", .string)
                e.toOne("garage", "Garage", inverse: "vehicles")
                e.toOne("spot", "Spot", inverse: "vehicle")
            }
            m.entity("Car", parent: "Vehicle") { e in e.attribute("doors", .integer16, default: 4) }
            m.entity("Truck", parent: "Vehicle") { e in e.attribute("payload", .double, default: 0.0) }
            m.entity("Garage") { e in
                e.attribute("name", .string)
                e.toMany("vehicles", "Vehicle", inverse: "garage", deleteRule: .cascade)
            }
            // A to-one whose destination is the abstract parent: its rows are of several entities.
            m.entity("Spot") { e in
                e.attribute("label", .string)
                e.toOne("vehicle", "Vehicle", inverse: "spot")
            }
            // Whole-object checks: the bound class overrides validateForInsert/Update/Delete.
            m.entity("Booking", as: Booking.self) { e in
                e.attribute("guest", .string)
                e.attribute("nights", .integer16, rules: [.minimum(1)])
                e.attribute("checkIn", .date, optional: true)
                e.attribute("checkOut", .date, optional: true)
                e.attribute("locked", .boolean, default: false)
            }
            // Lifecycle hooks, recorded by the bound class.
            m.entity("Probe", as: Probe.self) { e in
                e.attribute("name", .string)
                e.attribute("saves", .integer32, default: 0)
                e.attribute("greeting", .string, optional: true, transient: true)
            }
        }
    }
}
