import Foundation
import ObjectGraph
import Testing

/// The model checks itself and refuses with a typed error naming the entity and property.
@Suite("Model: errors")
struct ModelErrorTests {
    @Test func duplicateEntityName() {
        expectModelError(.duplicateName, entity: "Person", property: nil) { m in
            m.entity("Person") { e in e.attribute("name", .string) }
            m.entity("Person") { e in e.attribute("age", .integer16) }
        }
    }

    @Test func duplicatePropertyName() {
        expectModelError(.duplicateName, entity: "Person", property: "name") { m in
            m.entity("Person") { e in
                e.attribute("name", .string)
                e.attribute("name", .integer32)
            }
        }
        expectModelError(.duplicateName, entity: "Person", property: "friend") { m in
            m.entity("Person") { e in
                e.attribute("friend", .string)
                e.toOne("friend", "Person")
            }
        }
    }

    @Test func propertyClashingWithAnInheritedOne() {
        expectModelError(.duplicateName, entity: "Student", property: "name") { m in
            m.entity("Person") { e in e.attribute("name", .string) }
            m.entity("Student", parent: "Person") { e in e.attribute("name", .string) }
        }
        // Two levels down, and a relationship clashing with an inherited attribute.
        expectModelError(.duplicateName, entity: "Graduate", property: "name") { m in
            m.entity("Person") { e in e.attribute("name", .string) }
            m.entity("Student", parent: "Person")
            m.entity("Graduate", parent: "Student") { e in e.toOne("name", "Person") }
        }
    }

    @Test func unusableNames() {
        expectModelError(.invalidName, entity: "", property: nil) { m in m.entity("") }
        expectModelError(.invalidName, entity: "Person", property: "@count") { m in
            m.entity("Person") { e in e.attribute("@count", .integer64) }
        }
        expectModelError(.invalidName, entity: "Person", property: "first name") { m in
            m.entity("Person") { e in e.attribute("first name", .string) }
        }
    }

    @Test func unknownDestination() {
        expectModelError(.unknownDestination, entity: "Person", property: "pets") { m in
            m.entity("Person") { e in e.toMany("pets", "Pet") }
        }
    }

    @Test func unknownInverse() {
        expectModelError(.unknownInverse, entity: "Person", property: "pets") { m in
            m.entity("Person") { e in e.toMany("pets", "Pet", inverse: "master") }
            m.entity("Pet") { e in e.toOne("owner", "Person") }
        }
    }

    @Test func inverseSidesNamingDifferentPartners() {
        let error = expectModelError(.inverseMismatch, entity: "Person", property: "pets") { m in
            m.entity("Person") { e in
                e.toMany("pets", "Pet", inverse: "owner")
                e.toMany("fostered", "Pet")
            }
            m.entity("Pet") { e in e.toOne("owner", "Person", inverse: "fostered") }
        }
        #expect(error?.message.contains("fostered") == true)
    }

    @Test func twoRelationshipsClaimingTheSameInverse() {
        expectModelError(.inverseMismatch, entity: "Pet", property: "owner") { m in
            m.entity("Person") { e in
                e.toMany("pets", "Pet", inverse: "owner")
                e.toMany("fostered", "Pet", inverse: "owner")
            }
            m.entity("Pet") { e in e.toOne("owner", "Person") }
        }
    }

    @Test func inversePointingAtAnotherEntity() {
        let error = expectModelError(.inverseMismatch, entity: "Person", property: "pets") { m in
            m.entity("Person") { e in e.toMany("pets", "Pet", inverse: "vet") }
            m.entity("Pet") { e in e.toOne("vet", "Vet") }
            m.entity("Vet")
        }
        #expect(error?.message.contains("Vet") == true)
    }

    @Test func inversePointingAtAnAncestorOfTheDeclaringEntity() {
        // Pet.owner may hold any Person, but only Owners have `pets`: maintaining the inverse
        // on a plain Person would have nowhere to go.
        expectModelError(.inverseMismatch, entity: "Owner", property: "pets") { m in
            m.entity("Person") { e in e.attribute("name", .string) }
            m.entity("Owner", parent: "Person") { e in e.toMany("pets", "Pet", inverse: "owner") }
            m.entity("Pet") { e in e.toOne("owner", "Person") }
        }
    }

    @Test func inverseInheritedFromAnAncestorOfTheDestination() {
        // Vehicle.garage is shared by trucks, so it cannot be the inverse of a cars-only relationship.
        let error = expectModelError(.inverseMismatch, entity: "Garage", property: "cars") { m in
            m.entity("Vehicle") { e in e.toOne("garage", "Garage") }
            m.entity("Car", parent: "Vehicle")
            m.entity("Truck", parent: "Vehicle")
            m.entity("Garage") { e in e.toMany("cars", "Car", inverse: "garage") }
        }
        #expect(error?.message.contains("Vehicle") == true)
    }

    @Test func inheritedRelationshipsKeepTheirInverses() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Vehicle") { e in e.toOne("garage", "Garage", inverse: "vehicles") }
            m.entity("Car", parent: "Vehicle")
            m.entity("Garage") { e in e.toMany("vehicles", "Vehicle", inverse: "garage") }
        }
        #expect(model.entity(named: "Car")?.relationship(named: "garage")?.inverseName == "vehicles")
        #expect(model.entity(named: "Garage")?.relationship(named: "vehicles")?.inverseName == "garage")
    }

    @Test func unknownParent() {
        expectModelError(.unknownParent, entity: "Student", property: nil) { m in
            m.entity("Student", parent: "Human")
        }
    }

    @Test func inheritanceCycle() {
        let error = expectModelError(.unknownParent, entity: "A", property: nil) { m in
            m.entity("A", parent: "C")
            m.entity("B", parent: "A")
            m.entity("C", parent: "B")
        }
        #expect(error?.message.contains("cycle") == true)
        expectModelError(.unknownParent, entity: "Self", property: nil) { m in
            m.entity("Self", parent: "Self")
        }
    }

    @Test func defaultOfTheWrongType() {
        expectModelError(.invalidDefault, entity: "Person", property: "age") { m in
            m.entity("Person") { e in e.attribute("age", .integer32, default: "forty") }
        }
        expectModelError(.invalidDefault, entity: "Person", property: "age") { m in
            m.entity("Person") { e in e.attribute("age", .integer16, default: 40_000) }
        }
        expectModelError(.invalidDefault, entity: "Person", property: "name") { m in
            m.entity("Person") { e in e.attribute("name", .string, default: 12) }
        }
        expectModelError(.invalidDefault, entity: "Person", property: "born") { m in
            m.entity("Person") { e in e.attribute("born", .date, default: "2020-01-01") }
        }
    }

    @Test func defaultsOfTheRightTypeAreConverted() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Item") { e in
                e.attribute("ratio", .double, default: 2)
                e.attribute("small", .integer16, default: Int16(-3))
                e.attribute("price", .decimal, default: 5)
            }
        }
        let item = try #require(model.entity(named: "Item"))
        #expect(item.attribute(named: "ratio")?.defaultValue == .double(2))
        #expect(item.attribute(named: "small")?.defaultValue == .integer(-3))
        #expect(item.attribute(named: "price")?.defaultValue == .decimal(5))
    }

    @Test func ruleThatDoesNotFitTheType() {
        expectModelError(.invalidRule, entity: "Person", property: "age") { m in
            m.entity("Person") { e in e.attribute("age", .integer16, rules: [.maxLength(3)]) }
        }
        expectModelError(.invalidRule, entity: "Person", property: "name") { m in
            m.entity("Person") { e in e.attribute("name", .string, rules: [.minimum(1)]) }
        }
        expectModelError(.invalidRule, entity: "Person", property: "name") { m in
            m.entity("Person") { e in e.attribute("name", .string, rules: [.earliest(Date())]) }
        }
        expectModelError(.invalidRule, entity: "Person", property: "born") { m in
            m.entity("Person") { e in e.attribute("born", .date, rules: [.pattern("2020.*")]) }
        }
    }

    @Test func badRegularExpression() {
        let error = expectModelError(.invalidRule, entity: "Person", property: "code") { m in
            m.entity("Person") { e in e.attribute("code", .string, rules: [.pattern("([A-Z]")]) }
        }
        #expect(error?.message.contains("([A-Z]") == true)
        // Invalid by itself, though valid once wrapped to match the whole value: before, the
        // rule was accepted and let every value through.
        let unbalanced = expectModelError(.invalidRule, entity: "Person", property: "code") { m in
            m.entity("Person") { e in e.attribute("code", .string, rules: [.pattern("[A-Z]+)|(.*")]) }
        }
        #expect(unbalanced?.message.contains("[A-Z]+)|(.*") == true)
    }

    @Test func impossibleCounts() {
        expectModelError(.invalidCount, entity: "Team", property: "members") { m in
            m.entity("Team") { e in e.toMany("members", "Player", min: 3, max: 2) }
            m.entity("Player")
        }
        expectModelError(.invalidCount, entity: "Team", property: "members") { m in
            m.entity("Team") { e in e.toMany("members", "Player", min: -1) }
            m.entity("Player")
        }
        expectModelError(.invalidCount, entity: "Team", property: "members") { m in
            m.entity("Team") { e in e.toMany("members", "Player", max: 0) }
            m.entity("Player")
        }
    }

    @Test func possibleCountsAreKept() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Team") { e in e.toMany("members", "Player", min: 2, max: 2) }
            m.entity("Player")
        }
        let members = try #require(model.entity(named: "Team")?.relationship(named: "members"))
        #expect(members.minCount == 2)
        #expect(members.maxCount == 2)
    }

    // A transformable attribute without a transformer cannot be declared through the public
    // builder (`transformable(_:_:)` always supplies one), so there is nothing to test there.

    @Test func relationshipCrossingStores() {
        let error = expectModelError(.crossStoreRelationship, entity: "Author", property: "books") { m in
            m.entity("Author") { e in e.toMany("books", "Book", inverse: "author") }
            m.entity("Book") { e in e.toOne("author", "Author", inverse: "books") }
            m.configuration("People", entities: ["Author"])
            m.configuration("Things", entities: ["Book"])
        }
        #expect(error?.message.contains("Book") == true)
    }

    @Test func transientRelationshipMayCrossStores() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Author") { e in e.toOne("favourite", "Book", transient: true) }
            m.entity("Book")
            m.configuration("People", entities: ["Author"])
            m.configuration("Things", entities: ["Book"])
        }
        #expect(model.configurations["People"] == ["Author"])
    }

    @Test func unknownEntityInConfiguration() {
        expectModelError(.unknownEntity, entity: "Ghost", property: nil) { m in
            m.entity("Person")
            m.configuration("Main", entities: ["Person", "Ghost"])
        }
    }

    @Test func uniquenessConstraintOnAMissingAttribute() {
        let missing = expectModelError(.unknownProperty, entity: "Person", property: "email") { m in
            m.entity("Person") { e in
                e.attribute("name", .string)
                e.unique("email")
            }
        }
        #expect(missing?.message.contains("it has name") == true, "\(String(describing: missing))")
        let relationship = expectModelError(.unknownProperty, entity: "Person", property: "pets") { m in
            m.entity("Person") { e in
                e.attribute("name", .string)
                e.toMany("pets", "Pet")
                e.unique("pets")
            }
            m.entity("Pet")
        }
        #expect(relationship?.message.contains("a relationship") == true, "\(String(describing: relationship))")
    }

    @Test func emptyUniquenessConstraint() {
        // It would make every two objects of the entity collide at save.
        let error = expectModelError(.invalidConstraint, entity: "Person", property: nil) { m in
            m.entity("Person") { e in
                e.attribute("email", .string)
                e.unique()
            }
        }
        #expect(error?.description.contains("at Person:") == true)
    }

    @Test func uniquenessConstraintNamingAnAttributeTwice() {
        let error = expectModelError(.invalidConstraint, entity: "Person", property: "email") { m in
            m.entity("Person") { e in
                e.attribute("email", .string)
                e.unique("email", "email")
            }
        }
        #expect(error?.description.contains("Person.email") == true)
    }

    @Test func uniquenessConstraintOnATransientAttribute() {
        // No store holds a transient value, so no store could check the constraint.
        let error = expectModelError(.invalidConstraint, entity: "Person", property: "nickname") { m in
            m.entity("Person") { e in
                e.attribute("email", .string)
                e.attribute("nickname", .string, optional: true, transient: true)
                e.unique("email", "nickname")
            }
        }
        #expect(error?.description.contains("Person.nickname") == true)
        #expect(error?.message.contains("transient") == true)
        // Inherited from a parent, and constrained by the sub-entity.
        expectModelError(.invalidConstraint, entity: "Student", property: "nickname") { m in
            m.entity("Person") { e in e.attribute("nickname", .string, optional: true, transient: true) }
            m.entity("Student", parent: "Person") { e in e.unique("nickname") }
        }
    }

    @Test func indexOnATransientAttribute() {
        let error = expectModelError(.invalidConstraint, entity: "Person", property: "scratch") { m in
            m.entity("Person") { e in e.attribute("scratch", .string, optional: true, indexed: true, transient: true) }
        }
        #expect(error?.description.contains("Person.scratch") == true)
    }

    @Test func impossibleLengthRules() {
        for rules: [ValidationRule] in [[.minLength(-1)], [.maxLength(-1)], [.minLength(5), .maxLength(3)]] {
            let error = expectModelError(.invalidRule, entity: "Person", property: "name") { m in
                m.entity("Person") { e in e.attribute("name", .string, rules: rules) }
            }
            #expect(error?.description.contains("Person.name") == true, "\(rules)")
        }
    }

    @Test func impossibleValueRules() {
        // Compared with NaN, every value passes: the rule would check nothing.
        for rules: [ValidationRule] in [[.minimum(10), .maximum(5)], [.maximum(5), .minimum(0), .minimum(10)], [.minimum(.nan)], [.maximum(.nan)]] {
            let error = expectModelError(.invalidRule, entity: "Person", property: "age") { m in
                m.entity("Person") { e in e.attribute("age", .integer32, rules: rules) }
            }
            #expect(error?.description.contains("Person.age") == true, "\(rules)")
        }
        let error = expectModelError(.invalidRule, entity: "Person", property: "born") { m in
            m.entity("Person") { e in
                e.attribute("born", .date, rules: [.earliest(Date(timeIntervalSince1970: 100)), .latest(Date(timeIntervalSince1970: 0))])
            }
        }
        #expect(error?.description.contains("Person.born") == true)
    }

    @Test func boundsThatMeetAreKept() throws {
        let model = try ManagedObjectModel { m in
            m.entity("Person") { e in
                e.attribute("code", .string, default: "", rules: [.minLength(0), .maxLength(0)])
                e.attribute("age", .integer16, default: 7, rules: [.minimum(7), .maximum(7)])
                e.attribute("born", .date, rules: [.earliest(Date(timeIntervalSince1970: 0)), .latest(Date(timeIntervalSince1970: 0))])
            }
        }
        #expect(model.entity(named: "Person")?.attribute(named: "age")?.rules.count == 2)
    }

    @Test func defaultBreakingItsOwnRules() {
        // Every new object would fail its save until the value is replaced.
        expectModelError(.invalidDefault, entity: "Person", property: "name") { m in
            m.entity("Person") { e in e.attribute("name", .string, default: "", rules: [.minLength(1)]) }
        }
        expectModelError(.invalidDefault, entity: "Person", property: "code") { m in
            m.entity("Person") { e in e.attribute("code", .string, default: "abc", rules: [.pattern("[0-9]+")]) }
        }
        let error = expectModelError(.invalidDefault, entity: "Person", property: "age") { m in
            m.entity("Person") { e in e.attribute("age", .integer16, default: 200, rules: [.minimum(0), .maximum(150)]) }
        }
        #expect(error?.description.contains("Person.age") == true)
        #expect(error?.message.contains("maximum 150") == true)
        expectModelError(.invalidDefault, entity: "Person", property: "born") { m in
            m.entity("Person") { e in e.attribute("born", .date, default: Date(timeIntervalSince1970: 0), rules: [.earliest(Date(timeIntervalSince1970: 1))]) }
        }
    }

    @Test func configurationWithAnEmptyName() {
        let error = expectModelError(.invalidName, entity: nil, property: nil) { m in
            m.entity("Person")
            m.configuration("", entities: ["Person"])
        }
        #expect(error?.message.contains("configuration") == true)
        #expect(error?.message.contains("Person") == true)
    }

    @Test func abstractEntityWithoutSubEntities() {
        let error = expectModelError(.abstractWithoutSubentities, entity: "Shape", property: nil) { m in
            m.entity("Shape", abstract: true) { e in e.attribute("name", .string) }
            m.entity("Canvas") { e in e.toMany("shapes", "Shape") }
        }
        #expect(error?.description.contains("at Shape:") == true)
        // Below an entity with sub-entities too: each abstract entity needs its own.
        expectModelError(.abstractWithoutSubentities, entity: "Polygon", property: nil) { m in
            m.entity("Shape", abstract: true)
            m.entity("Circle", parent: "Shape")
            m.entity("Polygon", parent: "Shape", abstract: true)
        }
    }

    @Test func descriptionNamesEntityAndProperty() throws {
        let error = try #require(expectModelError(.unknownDestination, entity: "Person", property: "pets") { m in
            m.entity("Person") { e in e.toMany("pets", "Pet") }
        })
        #expect(error.description.contains("Person.pets"))
        #expect(error.description.contains("unknownDestination"))
        #expect(error.description.contains("Pet"))
        let bare = ModelError(.incompatibleModel, "store and model differ")
        #expect(bare.description == "model error (incompatibleModel): store and model differ")
        let entityOnly = ModelError(.unknownParent, entity: "Student", "no parent")
        #expect(entityOnly.description == "model error (unknownParent) at Student: no parent")
    }
}
