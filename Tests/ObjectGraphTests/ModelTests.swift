import Foundation
import ObjectGraph
import Testing

@Suite("Model: builder and layout")
struct ModelLayoutTests {
    /// Declared sub-entity first on purpose: the model must still order parents first.
    static func schoolModel() throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Student", parent: "Person") { e in
                e.attribute("grade", .integer16, optional: true)
                e.toMany("courses", "Course", inverse: "students")
            }
            m.entity("Person", abstract: true) { e in
                e.attribute("name", .string)
                e.attribute("born", .date, optional: true)
                e.toOne("home", "Address", inverse: "residents")
            }
            m.entity("Teacher", parent: "Person") { e in
                e.attribute("salary", .decimal, optional: true)
                e.toOne("office", "Address")
            }
            m.entity("Address") { e in
                e.attribute("city", .string, default: "Paris")
                e.toMany("residents", "Person", inverse: "home")
            }
            m.entity("Course") { e in
                e.attribute("title", .string)
                e.toMany("students", "Student", inverse: "courses", ordered: true)
            }
        }
    }

    @Test func entitiesAreOrderedParentsFirst() throws {
        let model = try Self.schoolModel()
        let names = model.entities.map(\.name)
        #expect(Set(names) == ["Person", "Student", "Teacher", "Address", "Course"])
        let person = try #require(names.firstIndex(of: "Person"))
        #expect(person < names.firstIndex(of: "Student")!)
        #expect(person < names.firstIndex(of: "Teacher")!)
        for (index, entity) in model.entities.enumerated() {
            #expect(entity.index == index)
            #expect(model.entity(named: entity.name) === entity)
        }
        #expect(model.entity(named: "Nobody") == nil)
    }

    @Test func subEntityInheritsParentAttributesAtTheSameSlots() throws {
        let model = try Self.schoolModel()
        let person = try #require(model.entity(named: "Person"))
        let student = try #require(model.entity(named: "Student"))
        let teacher = try #require(model.entity(named: "Teacher"))
        #expect(person.attributes.map(\.name) == ["name", "born"])
        #expect(student.attributes.map(\.name) == ["name", "born", "grade"])
        #expect(teacher.attributes.map(\.name) == ["name", "born", "salary"])
        for inherited in person.attributes {
            let inStudent = try #require(student.attribute(named: inherited.name))
            #expect(inStudent.slot == inherited.slot)
            #expect(inStudent.entityName == "Person")
            #expect(inStudent === inherited)
        }
        for entity in model.entities {
            for (slot, attribute) in entity.attributes.enumerated() { #expect(attribute.slot == slot) }
        }
        #expect(student.attribute(named: "grade")?.slot == 2)
        #expect(student.attribute(named: "grade")?.entityName == "Student")
        #expect(teacher.attribute(named: "salary")?.slot == 2)
        #expect(person.attribute(named: "grade") == nil)
    }

    @Test func relationshipsAreSlottedAndInherited() throws {
        let model = try Self.schoolModel()
        let person = try #require(model.entity(named: "Person"))
        let student = try #require(model.entity(named: "Student"))
        let teacher = try #require(model.entity(named: "Teacher"))
        #expect(student.relationships.map(\.name) == ["home", "courses"])
        #expect(student.relationship(named: "home") === person.relationship(named: "home"))
        #expect(student.toOneRelationships.map(\.name) == ["home"])
        #expect(student.toManyRelationships.map(\.name) == ["courses"])
        #expect(teacher.toOneRelationships.map(\.name) == ["home", "office"])
        #expect(teacher.relationship(named: "office")?.slot == 1)
        #expect(teacher.relationship(named: "office")?.hasInverse == false)
        #expect(student.propertyNames == ["name", "born", "grade", "home", "courses"])
        if case .relationship(let r)? = student.property(named: "courses") {
            #expect(r.isToMany)
        } else {
            Issue.record("courses is not a relationship")
        }
        #expect(student.attribute(named: "home") == nil)
        #expect(student.relationship(named: "name") == nil)
    }

    @Test func hierarchyNamesRootNameAndKinds() throws {
        let model = try Self.schoolModel()
        let person = try #require(model.entity(named: "Person"))
        let student = try #require(model.entity(named: "Student"))
        let address = try #require(model.entity(named: "Address"))
        #expect(person.hierarchyNames == ["Person", "Student", "Teacher"])
        #expect(student.hierarchyNames == ["Student"])
        #expect(Set(person.subentityNames) == ["Student", "Teacher"])
        #expect(student.parentName == "Person")
        #expect(person.parentName == nil)
        #expect(student.rootName == "Person")
        #expect(person.rootName == "Person")
        #expect(address.rootName == "Address")
        #expect(person.isAbstract)
        #expect(!student.isAbstract)
        #expect(student.isKind(of: person))
        #expect(!person.isKind(of: student))
        #expect(!address.isKind(of: person))
    }

    @Test func inversesResolveToSlots() throws {
        let model = try Self.schoolModel()
        let address = try #require(model.entity(named: "Address"))
        let person = try #require(model.entity(named: "Person"))
        let course = try #require(model.entity(named: "Course"))
        let student = try #require(model.entity(named: "Student"))
        let residents = try #require(address.relationship(named: "residents"))
        let home = try #require(person.relationship(named: "home"))
        #expect(residents.inverseName == "home")
        #expect(residents.inverseSlot == home.slot)
        #expect(!residents.inverseIsToMany)
        #expect(home.inverseSlot == residents.slot)
        #expect(home.inverseIsToMany)
        #expect(model.inverse(of: home) === residents)
        #expect(model.destination(of: home) === address)
        // A relationship of another model is no relationship of this one: no destination
        // (it stopped the process when its destination's name was not an entity here).
        let other = try ManagedObjectModel { m in
            m.entity("Owner") { e in e.toOne("thing", "Thing") }
            m.entity("Thing") { e in e.attribute("n", .integer64, optional: true) }
        }
        let thing = try #require(other.entity(named: "Owner")?.relationship(named: "thing"))
        #expect(model.destination(of: thing) == nil)
        #expect(model.inverse(of: thing) == nil)
        let students = try #require(course.relationship(named: "students"))
        #expect(students.isOrdered)
        #expect(students.inverseSlot == student.relationship(named: "courses")?.slot)
        #expect(students.inverseIsToMany)
    }

    @Test func attributeDescriptionsKeepWhatWasDeclared() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Item") { e in
                e.attribute("count", .integer32, default: 7, rules: [.minimum(0), .maximum(10)], indexed: true)
                e.attribute("code", .string, optional: true, rules: [.pattern("[A-Z]+")])
                e.attribute("scratch", .double, optional: true, transient: true)
            }
        }
        let item = try #require(model.entity(named: "Item"))
        let count = try #require(item.attribute(named: "count"))
        #expect(count.defaultValue == .integer(7))
        #expect(!count.isOptional)
        #expect(count.isIndexed)
        #expect(count.rules == [.minimum(0), .maximum(10)])
        #expect(item.attribute(named: "code")?.isOptional == true)
        #expect(item.attribute(named: "code")?.defaultValue == .null)
        #expect(item.attribute(named: "scratch")?.isTransient == true)
        #expect(count.description == "Item.count (integer32)")
    }

    @Test func oneSidedInverseIsInferredOnTheOtherSide() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Folder") { e in e.toMany("files", "File", inverse: "folder") }
            m.entity("File") { e in e.toOne("folder", "Folder") }
        }
        let folder = try #require(model.entity(named: "Folder"))
        let file = try #require(model.entity(named: "File"))
        let parent = try #require(file.relationship(named: "folder"))
        #expect(parent.inverseName == "files")
        #expect(parent.inverseSlot == folder.relationship(named: "files")?.slot)
        #expect(parent.inverseIsToMany)
        #expect(folder.relationship(named: "files")?.inverseName == "folder")
        #expect(folder.relationship(named: "files")?.inverseIsToMany == false)
    }

    @Test func configurationsHoldEntitiesAndTheirSubEntities() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Shape", abstract: true)
            m.entity("Circle", parent: "Shape")
            m.entity("Log")
            m.configuration("Drawing", entities: ["Shape"])
            m.configuration("Logs", entities: ["Log"])
        }
        #expect(model.configurations["Drawing"] == ["Shape", "Circle"])
        #expect(model.entities(inConfiguration: "Logs").map(\.name) == ["Log"])
        #expect(model.entities(inConfiguration: nil).count == 3)
        #expect(model.entity(named: "Circle")?.configurations == ["Drawing"])
        #expect(model.versionHash(configuration: "Drawing") != model.versionHash(configuration: "Logs"))
        #expect(model.versionHash(configuration: nil) == model.versionHash)
    }

    /// Each entity's hierarchy was recomputed from its sub-entities' for every entity (and
    /// every configuration member), so a chain of n entities took n³ steps: 500 took seconds
    /// in a debug build, 3,000 did not finish.
    @Test func aDeepInheritanceChainBuilds() throws {
        let depth = 2_000
        let names = (0..<depth).map { "E\($0)" }
        let model = try ManagedObjectModel { m in
            m.entity(names[0])
            for (parent, name) in zip(names, names.dropFirst()) { m.entity(name, parent: parent) }
            m.configuration("All", entities: [names[0]])
        }
        let root = try #require(model.entity(named: names[0]))
        let middle = try #require(model.entity(named: names[depth / 2]))
        let leaf = try #require(model.entity(named: names[depth - 1]))
        #expect(root.hierarchyNames == Set(names))
        #expect(middle.hierarchyNames == Set(names[(depth / 2)...]))
        #expect(leaf.hierarchyNames == [leaf.name])
        #expect(leaf.rootName == names[0])
        #expect(leaf.configurations == ["All"])
        #expect(model.configurations["All"]?.count == depth)
    }

    /// Small entities are searched by comparing names, large ones through a table: both find
    /// every property (inherited ones, long and non-ASCII names), by kind, and nothing else.
    @Test(arguments: [3, 40])
    func propertiesAreFoundByNameInSmallAndLargeEntities(attributes count: Int) throws {
        let names = (0..<count).map { $0 == 1 ? "ünïcode\($0)" : $0 == 2 ? "aRatherLongAttributeName\($0)" : "a\($0)" }
        let model = try ManagedObjectModel { m in
            m.entity("Base", abstract: true) { e in e.attribute("inherited", .string, optional: true) }
            m.entity("Wide", parent: "Base") { e in
                for name in names { e.attribute(name, .integer64, optional: true) }
                e.toOne("owner", "Owner", inverse: "wides")
            }
            m.entity("Owner") { e in e.toMany("wides", "Wide", inverse: "owner") }
        }
        let wide = try #require(model.entity(named: "Wide"))
        for name in names + ["inherited"] {
            #expect(wide.attribute(named: name)?.name == name)
            #expect(wide.relationship(named: name) == nil)
        }
        #expect(wide.relationship(named: "owner")?.name == "owner")
        #expect(wide.attribute(named: "owner") == nil)
        if case .relationship(let owner)? = wide.property(named: "owner") { #expect(owner.isToMany == false) } else { Issue.record("owner not found") }
        #expect(wide.property(named: "a") == nil)
        #expect(wide.property(named: "A0") == nil)
        #expect(wide.property(named: "") == nil)
        // Canonically equivalent spellings are the same name, as String equality has it.
        #expect(wide.attribute(named: "u\u{308}nïcode1")?.name == names[1])
    }
}

@Suite("Model: version hashes")
struct ModelVersionHashTests {
    static func build(ageType: AttributeType = .integer16, extra: Bool = false) throws -> ManagedObjectModel {
        try ManagedObjectModel { m in
            m.entity("Person") { e in
                e.attribute("name", .string)
                e.attribute("age", ageType, optional: true)
                if extra { e.attribute("nickname", .string, optional: true) }
                e.toMany("pets", "Pet", inverse: "owner")
            }
            m.entity("Pet") { e in e.toOne("owner", "Person", inverse: "pets") }
        }
    }

    @Test func twoBuildsOfTheSameModelHashAlike() throws {
        let a = try Self.build(), b = try Self.build()
        #expect(a.versionHash == b.versionHash)
        #expect(a.versionHash.count == 16)
        #expect(a.versionHash.allSatisfy { $0.isHexDigit })
        for entity in a.entities {
            #expect(entity.versionHash == b.entity(named: entity.name)?.versionHash)
        }
    }

    @Test func changingAnAttributeTypeChangesTheHash() throws {
        let a = try Self.build(), b = try Self.build(ageType: .integer32)
        #expect(a.versionHash != b.versionHash)
        #expect(a.entity(named: "Person")?.versionHash != b.entity(named: "Person")?.versionHash)
        #expect(a.entity(named: "Pet")?.versionHash == b.entity(named: "Pet")?.versionHash)
    }

    @Test func addingAnAttributeChangesTheHash() throws {
        #expect(try Self.build().versionHash != Self.build(extra: true).versionHash)
    }

    @Test("an attribute turning required, or an entity turning abstract, changes the hash (as in Core Data)")
    func optionalityAndAbstractnessChangeTheHash() throws {
        func model(required: Bool, abstract: Bool) throws -> ManagedObjectModel {
            try ManagedObjectModel { m in
                m.entity("Shape", abstract: abstract) { e in e.attribute("label", .string, optional: !required) }
                m.entity("Circle", parent: "Shape") { e in e.attribute("radius", .double) }
            }
        }
        let base = try model(required: false, abstract: false)
        let required = try model(required: true, abstract: false)
        let abstract = try model(required: false, abstract: true)
        #expect(base.versionHash != required.versionHash)
        #expect(base.entity(named: "Shape")?.versionHash != required.entity(named: "Shape")?.versionHash)
        #expect(base.versionHash != abstract.versionHash)
        #expect(base.entity(named: "Shape")?.versionHash != abstract.entity(named: "Shape")?.versionHash)
        #expect(base.entity(named: "Circle")?.versionHash == abstract.entity(named: "Circle")?.versionHash,
                "only the entity that turned abstract hashes differently")
        #expect(try model(required: true, abstract: true).versionHash == model(required: true, abstract: true).versionHash)
    }
}
