import Foundation
import ObjectGraph
import OrderedCollections

/// Round trips through the store: what a context saves comes back, whole, in a new
/// coordinator (``ScenarioEnvironment/reopen()``) — inserts, updates and deletes, over
/// several saves and contexts, for every relationship kind and for sub-entities.
enum PersistenceScenarios {
    /// How many objects of `entityName` (sub-entities included) the store holds.
    static func count(_ context: ManagedObjectContext, _ entityName: String) throws -> Int {
        try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: entityName)) }
    }

    /// The object for `id` in `context`, loaded, as `T`.
    static func load<T: ManagedObject>(_ context: ManagedObjectContext, _ id: ObjectID, as type: T.Type = T.self, file: String = #filePath, line: Int = #line) throws -> T {
        guard let object = try context.existingObject(with: id) as? T else {
            throw ScenarioFailure(message: "\(id) is not a \(T.self)", file: file, line: line)
        }
        return object
    }

    static let all: [ConformanceScenario] = roundTrips + inheritance + transients + versions

    static let roundTrips: [ConformanceScenario] = [
        ConformanceScenario("persistence.wholeGraphRoundTrip") { env in
            let context = env.newContext()
            let ids = try context.performAndWait { () throws -> [String: ObjectID] in
                let math = SchoolClass(context: context); math.title = "Math"
                let logic = Subject(context: context); logic.name = "Logic"
                let art = Subject(context: context); art.name = "Art"
                let honours = Tag(context: context); honours.label = "honours"
                let prefect = Tag(context: context); prefect.label = "prefect"
                let locker = Locker(context: context); locker.number = 12
                let ada = Student(context: context); ada.name = "Ada"; ada.age = 36
                let address = Address(context: context); address.street = "1 Loop"
                ada.address = address
                ada.schoolClass = math
                ada.subjects = [logic, art]
                ada.tags = [honours, prefect]
                ada.locker = locker
                let bob = Student(context: context); bob.name = "Bob"
                bob.schoolClass = math; bob.$subjects.add(logic); bob.$tags.add(honours)
                let playlist = Playlist(context: context); playlist.name = "mix"
                playlist.tracks = OrderedSet(["c", "a", "b"].map { title -> Track in let t = Track(context: context); t.title = title; return t })
                let boss = Employee(context: context); boss.name = "boss"
                let mid = Employee(context: context); mid.name = "mid"; mid.manager = boss
                let junior = Employee(context: context); junior.name = "junior"; junior.manager = mid
                let chat = Chat(context: context); chat.title = "Lunch"
                let member = Member(context: context); member.name = "Grace"
                let message = Message(context: context); message.text = "hi"; message.sentAt = Date(timeIntervalSinceReferenceDate: 1_000.5)
                message.chat = chat; message.author = member; chat.$members.add(member)
                let all = try context.insertObject(entityName: "AllTypes")
                for (key, value) in AttributeScenarios.sample { try all.setValue(value, forKey: key) }
                try context.save()
                return [
                    "ada": ada.objectID, "bob": bob.objectID, "playlist": playlist.objectID, "boss": boss.objectID,
                    "chat": chat.objectID, "all": all.objectID, "math": math.objectID,
                ]
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let ada = try load(fresh, ids["ada"]!, as: Student.self)
                try checkEqual(ada.name, "Ada", "name")
                try checkEqual(ada.age, 36, "age")
                try checkEqual(ada.address?.street, "1 Loop", "one-to-one")
                try check(ada.address?.student === ada, "one-to-one inverse")
                try checkEqual(ada.schoolClass?.objectID, ids["math"], "many-to-one")
                try checkEqual(Set(ada.subjects.map(\.name)), ["Logic", "Art"], "many-to-many")
                try checkEqual(Set(ada.tags.map(\.label)), ["honours", "prefect"], "many-to-nil")
                try checkEqual(ada.locker?.number, 12, "one-to-nil")
                let bob = try load(fresh, ids["bob"]!, as: Student.self)
                try check(bob.age == nil && bob.address == nil && bob.locker == nil, "bob's empty optionals")
                try checkEqual(bob.tags.map(\.label), ["honours"], "a shared many-to-nil destination")
                let math = try load(fresh, ids["math"]!, as: SchoolClass.self)
                try checkEqual(Set(math.students.map(\.name)), ["Ada", "Bob"], "one-to-many inverse")
                let logic = ada.subjects.first { $0.name == "Logic" }
                try checkEqual(Set(logic?.students.map(\.name) ?? []), ["Ada", "Bob"], "many-to-many inverse")
                let playlist = try load(fresh, ids["playlist"]!, as: Playlist.self)
                try checkEqual(playlist.tracks.map(\.title), ["c", "a", "b"], "ordered to-many keeps its order")
                let boss = try load(fresh, ids["boss"]!, as: Employee.self)
                try checkEqual(boss.reports.map(\.name), ["mid"], "reflexive to-many")
                try checkEqual(boss.reports.first?.reports.first?.name, "junior", "two levels down")
                try check(boss.reports.first?.reports.first?.manager?.manager === boss, "and back up")
                let chat = try load(fresh, ids["chat"]!, as: Chat.self)
                try checkEqual(chat.messages.map(\.text), ["hi"], "chat messages")
                try checkEqual(chat.messages.first?.sentAt, Date(timeIntervalSinceReferenceDate: 1_000.5), "message date")
                try checkEqual(chat.messages.first?.author?.name, "Grace", "message author")
                try checkEqual(chat.members.map(\.name), ["Grace"], "chat members")
                try checkEqual(chat.members.first?.chats.map(\.title), ["Lunch"], "member chats")
                try AttributeScenarios.checkSample(try fresh.existingObject(with: ids["all"]!))
            }
            let expected = [
                "Student": 2, "Address": 1, "SchoolClass": 1, "Subject": 2, "Tag": 2, "Locker": 1, "Playlist": 1, "Track": 3,
                "Employee": 3, "Chat": 1, "Member": 1, "Message": 1, "AllTypes": 1,
            ]
            for (entity, rows) in expected.sorted(by: { $0.key < $1.key }) {
                try checkEqual(try count(fresh, entity), rows, "\(entity) rows after reopen")
            }
        },
        ConformanceScenario("persistence.multipleSavesAccumulate") { env in
            let first = env.newContext()
            let adaID = try first.performAndWait {
                let ada = Student(context: first); ada.name = "Ada"
                try first.save()
                let bob = Student(context: first); bob.name = "Bob"
                let math = Subject(context: first); math.name = "Math"
                ada.$subjects.add(math)
                try first.save()
                return ada.objectID
            }
            let second = env.newContext()
            try second.performAndWait {
                let ada = try load(second, adaID, as: Student.self)
                let carl = Student(context: second); carl.name = "Carl"
                let tag = Tag(context: second); tag.label = "new"
                ada.$tags.add(tag)
                let logic = Subject(context: second); logic.name = "Logic"
                ada.$subjects.add(logic)
                try second.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let names = try fresh.fetch(FetchRequest<Student>(sortKeys: [SortKey("name")])).map(\.name)
                try checkEqual(names, ["Ada", "Bob", "Carl"], "every save's inserts")
                let ada = try load(fresh, adaID, as: Student.self)
                try checkEqual(Set(ada.subjects.map(\.name)), ["Math", "Logic"], "to-many additions from two saves in two contexts")
                try checkEqual(ada.tags.map(\.label), ["new"], "a many-to-nil added later")
            }
            try fresh.performAndWait {
                let dave = Student(context: fresh); dave.name = "Dave"
                try fresh.save()
            }
            try env.reopen()
            try checkEqual(try count(env.newContext(), "Student"), 4, "a save after a reopen adds to what was there")
        },
        ConformanceScenario("persistence.updatesPersist") { env in
            let context = env.newContext()
            let ids = try context.performAndWait { () throws -> [ObjectID] in
                let ada = Student(context: context); ada.name = "Ada"; ada.age = 20
                let math = SchoolClass(context: context); math.title = "Math"
                let art = SchoolClass(context: context); art.title = "Art"
                let logic = Subject(context: context); logic.name = "Logic"
                let music = Subject(context: context); music.name = "Music"
                ada.schoolClass = math; ada.subjects = [logic]
                let playlist = Playlist(context: context); playlist.name = "mix"
                playlist.tracks = OrderedSet(["a", "b", "c"].map { title -> Track in let t = Track(context: context); t.title = title; return t })
                try context.save()
                return [ada.objectID, math.objectID, art.objectID, music.objectID, playlist.objectID]
            }
            try env.reopen()
            let second = env.newContext()
            try second.performAndWait {
                let ada = try load(second, ids[0], as: Student.self)
                ada.name = "Ada Lovelace"; ada.age = 21
                ada.schoolClass = try load(second, ids[2], as: SchoolClass.self)
                ada.$subjects.add(try load(second, ids[3], as: Subject.self))
                ada.$subjects.remove(ada.subjects.first { $0.name == "Logic" }!)
                let playlist = try load(second, ids[4], as: Playlist.self)
                playlist.$tracks.move(from: 2, to: 0)
                playlist.name = "remix"
                try second.save()
            }
            try env.reopen()
            let third = env.newContext()
            try third.performAndWait {
                let ada = try load(third, ids[0], as: Student.self)
                try checkEqual(ada.name, "Ada Lovelace", "updated attribute")
                try checkEqual(ada.age, 21, "updated optional attribute")
                try checkEqual(ada.schoolClass?.title, "Art", "updated to-one")
                try checkEqual(try load(third, ids[1], as: SchoolClass.self).students.count, 0, "the old class lost her")
                try checkEqual(ada.subjects.map(\.name), ["Music"], "to-many add and remove")
                let playlist = try load(third, ids[4], as: Playlist.self)
                try checkEqual(playlist.name, "remix", "playlist name")
                try checkEqual(playlist.tracks.map(\.title), ["c", "a", "b"], "reordered")
                ada.age = nil
                ada.schoolClass = nil
                ada.subjects = []
                try third.save()
            }
            try env.reopen()
            let fourth = env.newContext()
            try fourth.performAndWait {
                let ada = try load(fourth, ids[0], as: Student.self)
                try check(ada.age == nil, "an attribute set back to nil")
                try check(ada.schoolClass == nil, "a to-one cleared")
                try check(ada.subjects.isEmpty, "a to-many emptied")
                try checkEqual(try fourth.count(for: FetchRequest<Subject>()), 2, "the destinations themselves remain")
            }
        },
        ConformanceScenario("persistence.deletesPersist") { env in
            let context = env.newContext()
            let (adaID, mathID, logicID, chatID) = try context.performAndWait {
                let math = SchoolClass(context: context); math.title = "Math"
                let logic = Subject(context: context); logic.name = "Logic"
                let tag = Tag(context: context); tag.label = "shared"
                var students: [Student] = []
                for name in ["Ada", "Bob"] {
                    let s = Student(context: context); s.name = name; s.schoolClass = math
                    s.$subjects.add(logic); s.$tags.add(tag)
                    let address = Address(context: context); address.street = "\(name) St"; s.address = address
                    students.append(s)
                }
                let chat = Chat(context: context); chat.title = "Doomed"
                for text in ["one", "two"] { let m = Message(context: context); m.text = text; m.chat = chat }
                try context.save()
                return (students[0].objectID, math.objectID, logic.objectID, chat.objectID)
            }
            try env.reopen()
            let second = env.newContext()
            try second.performAndWait {
                second.delete(try second.existingObject(with: adaID))
                second.delete(try second.existingObject(with: chatID))
                try second.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                try checkEqual(try fresh.fetch(FetchRequest<Student>()).map(\.name), ["Bob"], "the deleted student is gone")
                try checkEqual(try fresh.fetch(FetchRequest<Address>()).map(\.street), ["Bob St"], "its address went with it (cascade)")
                try checkEqual(try load(fresh, mathID, as: SchoolClass.self).students.map(\.name), ["Bob"], "the class no longer lists it (nullify)")
                try checkEqual(try load(fresh, logicID, as: Subject.self).students.map(\.name), ["Bob"], "nor does the subject (many-to-many join removed)")
                try checkEqual(try fresh.fetch(FetchRequest<Tag>()).map(\.label), ["shared"], "a many-to-nil destination stays")
                try checkEqual(try fresh.count(for: FetchRequest<Chat>()), 0, "the chat is gone")
                try checkEqual(try fresh.count(for: FetchRequest<Message>()), 0, "its messages went with it (cascade)")
                let error = try checkThrows(ObjectGraphError.self, "loading a deleted record") { _ = try fresh.existingObject(with: adaID) }
                try checkEqual(error.code, .objectNotFound, "code")
            }
        },
        ConformanceScenario("persistence.subentitiesComeBackAsTheirEntity") { env in
            let context = env.newContext()
            let garageID = try context.performAndWait {
                let garage = try context.insertObject(entityName: "Garage")
                try garage.setValue("Depot", forKey: "name")
                for (entity, name, key, value) in [("Car", "beetle", "doors", 2 as Any), ("Truck", "hauler", "payload", 3.5 as Any), ("Car", "mini", "doors", 4 as Any)] {
                    let vehicle = try context.insertObject(entityName: entity)
                    try vehicle.setValue(name, forKey: "name")
                    try vehicle.setValue(value, forKey: key)
                    try vehicle.setValue(garage, forKey: "garage")
                }
                try context.save()
                return garage.objectID
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let vehicles = try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Vehicle", sortKeys: [SortKey("name")]))
                try checkEqual(vehicles.map(\.entity.name), ["Car", "Truck", "Car"], "each comes back as its own entity")
                try checkEqual(vehicles.map(\.objectID.entityName), ["Car", "Truck", "Car"], "in its ID too")
                try checkEqual(try vehicles.map { try $0.value(forKey: "name") as? String }, ["beetle", "hauler", "mini"], "inherited attribute")
                try checkEqual(try vehicles[0].value(forKey: "doors") as? Int64, 2, "Car's own attribute")
                try checkEqual(try vehicles[1].value(forKey: "payload") as? Double, 3.5, "Truck's own attribute")
                try checkEqual(Set(vehicles.map(\.objectID)).count, 3, "distinct IDs across sub-entities")
                let garage = try fresh.existingObject(with: garageID)
                let members = try garage.value(forKey: "vehicles") as? Set<ManagedObject> ?? []
                try checkEqual(Set(members.map(\.entity.name)), ["Car", "Truck"], "a relationship to the abstract parent holds both kinds")
                try checkEqual(members.count, 3, "all three")
                try checkEqual(try fresh.count(for: FetchRequest<ManagedObject>(entityName: "Car")), 2, "fetching a sub-entity")
                // `garage == X` counted through the to-one the abstract parent declares.
                func count(_ entity: String, of garage: ObjectID, subentities: Bool = true) throws -> Int {
                    var request = FetchRequest<ManagedObject>(entityName: entity, predicate: .key("garage") == garage)
                    request.includesSubentities = subentities
                    return try fresh.count(for: request)
                }
                try checkEqual(try count("Vehicle", of: garageID), 3, "vehicles in the garage, both kinds")
                try checkEqual(try count("Car", of: garageID), 2, "cars in the garage")
                try checkEqual(try count("Truck", of: garageID), 1, "trucks in the garage")
                try checkEqual(try count("Vehicle", of: garageID, subentities: false), 0, "the abstract parent has no rows of its own")
                let empty = try fresh.insertObject(entityName: "Garage")
                try empty.setValue("Empty", forKey: "name")
                try fresh.save()
                try checkEqual(try count("Vehicle", of: empty.objectID), 0, "an empty garage")
            }
        },
        ConformanceScenario("persistence.keyValueReflexiveGraph") { env in
            let context = env.newContext()
            let rootID = try context.performAndWait {
                let nodes = try ["a", "b", "c"].map { label -> ManagedObject in
                    let node = try context.insertObject(entityName: "Node")
                    try node.setValue(label, forKey: "label")
                    return node
                }
                for i in 0..<3 { try nodes[i].setValue(nodes[(i + 1) % 3], forKey: "next") }
                let root = try context.insertObject(entityName: "Node")
                try root.setValue("root", forKey: "label")
                try root.setValue(nodes, forKey: "children")
                try context.save()
                return root.objectID
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let root = try fresh.existingObject(with: rootID)
                let children = try root.value(forKey: "children") as? Set<ManagedObject> ?? []
                try checkEqual(Set(try children.map { try $0.value(forKey: "label") as? String }), ["a", "b", "c"], "children")
                guard let a = try children.first(where: { try $0.value(forKey: "label") as? String == "a" }) else {
                    throw ScenarioFailure(message: "no node a", file: #filePath, line: #line)
                }
                var labels: [String] = []
                var node: ManagedObject? = a
                for _ in 0..<4 {
                    labels.append(try node?.value(forKey: "label") as? String ?? "?")
                    node = try node?.value(forKey: "next") as? ManagedObject
                }
                try checkEqual(labels, ["a", "b", "c", "a"], "the ring closes after reopen")
                let previous = try a.value(forKey: "previous") as? ManagedObject
                try checkEqual(try previous?.value(forKey: "label") as? String, "c", "the inverse of next is previous")
                try check(try a.value(forKey: "parent") as? ManagedObject === root, "parent")
            }
        },
        ConformanceScenario("persistence.emptySaveWritesNothing") { env in
            let context = env.newContext()
            try context.performAndWait {
                try context.save()
                try checkEqual(context.statistics.storeRoundTrips, 0, "saving nothing does not reach the store")
                let tag = Tag(context: context); tag.label = "x"
                try context.save()
                let trips = context.statistics.storeRoundTrips
                try context.save()
                try checkEqual(context.statistics.storeRoundTrips, trips, "nor does saving again with nothing changed")
                tag.label = "x"
                try context.save()
                try checkEqual(context.statistics.storeRoundTrips, trips, "nor does setting a value it already had")
            }
            try env.reopen()
            try checkEqual(try count(env.newContext(), "Tag"), 1, "one row")
        },
        // (The SQLite store created no table for such an entity, and its first save failed.)
        ConformanceScenario("persistence.entityOfOnlyAToManyRoundTrips") { env in
            let context = env.newContext()
            try context.performAndWait {
                let shelf = try context.insertObject(entityName: "Shelf")
                let tags = ["x", "y"].map { label in
                    let tag = Tag(context: context)
                    tag.label = label
                    return tag
                }
                try shelf.setValue(tags, forKey: "tags")
                _ = try context.insertObject(entityName: "Shelf")
                try context.save()
            }
            try env.reopen()
            let fresh = env.newContext()
            try fresh.performAndWait {
                let shelves = try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Shelf"))
                try checkEqual(shelves.count, 2, "both shelves")
                let labels = try shelves.map { shelf in
                    try ((shelf.value(forKey: "tags") as? Set<ManagedObject>) ?? []).map { try $0.value(forKey: "label") as? String ?? "?" }.sorted()
                }.sorted { $0.count < $1.count }
                try checkEqual(labels, [[], ["x", "y"]], "the tags of each")
            }
        },
    ]
}
