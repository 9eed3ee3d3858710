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
        expectModelError(.unknownEntity, entity: "Person", property: "email") { m in
            m.entity("Person") { e in
                e.attribute("name", .string)
                e.unique("email")
            }
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
