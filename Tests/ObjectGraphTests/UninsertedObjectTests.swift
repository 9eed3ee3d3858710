import Foundation
import ObjectGraph
import ObjectGraphInMemory
import OrderedCollections
import Testing

/// A sketch filled in before it is inserted. `awakeFromInsert()` names an untitled one, so a
/// test sees whether the values set before the insert were there when it ran.
final class Sketch: ManagedObject {
    @Attribute var title: String
    @Attribute var size: Int64
    @Attribute var note: String?
    @Relationship var easel: Easel?
    @Relationship var pins: Set<Pin>
    private(set) var awakenedWithTitle: String?

    override func awakeFromInsert() {
        awakenedWithTitle = title
        if title.isEmpty { title = "untitled" }
    }
}

final class Easel: ManagedObject {
    @Attribute var label: String
    @Relationship var sketches: Set<Sketch>
}

final class Pin: ManagedObject {
    @Attribute var color: String
    @Relationship var sketch: Sketch?
}

/// A subclass whose initializer override sets a value, as Core Data subclasses sometimes do:
/// an inserted object keeps it; a fault of a saved one reads the store's value.
final class Ledger: ManagedObject {
    @Attribute var opened: Date
    @Attribute var owner: String

    required init(entity: EntityDescription, insertInto context: ManagedObjectContext?) {
        super.init(entity: entity, insertInto: context)
        opened = Ledger.firstDay
    }

    static let firstDay = Date(timeIntervalSinceReferenceDate: 86_400)
}

/// Objects created without a context (`init(entity:insertInto: nil)`): as in Core Data, they
/// hold attribute values — the defaults, then what is set — which `insert(_:)` keeps. Before,
/// reading or setting any value of one stopped the process.
@Suite("Objects not inserted yet")
struct UninsertedObjectTests {
    static func build(_ m: ModelBuilder) {
        m.entity("Sketch", as: Sketch.self) { e in
            e.attribute("title", .string, default: "")
            e.attribute("size", .integer16, default: 3)
            e.attribute("note", .string, optional: true)
            e.toOne("easel", "Easel", inverse: "sketches")
            e.toMany("pins", "Pin", inverse: "sketch")
        }
        m.entity("Easel", as: Easel.self) { e in
            e.attribute("label", .string, default: "")
            e.toMany("sketches", "Sketch", inverse: "easel")
        }
        m.entity("Pin", as: Pin.self) { e in
            e.attribute("color", .string, default: "red")
            e.toOne("sketch", "Sketch", inverse: "pins")
        }
        m.entity("Badge") { e in
            e.attribute("code", .string)
            e.attribute("holder", .string)
            e.unique("code")
        }
        m.entity("Ledger", as: Ledger.self) { e in
            e.attribute("opened", .date)
            e.attribute("owner", .string, default: "")
        }
    }

    static func sketchEntity(_ context: ManagedObjectContext) throws -> EntityDescription {
        try #require(context.model.entity(named: "Sketch"))
    }

    @Test("typed values: the defaults, then what is set; insert(_:) keeps them and the save stores them")
    func typedValuesBeforeInsert() throws {
        let (container, context) = try makeContext(Self.build)
        let id = try context.performAndWait {
            let sketch = Sketch(entity: try Self.sketchEntity(context), insertInto: nil)
            #expect(sketch.managedObjectContext == nil && !sketch.isInserted)
            #expect(sketch.description.contains("size=3") && !sketch.description.contains("fault"), "\(sketch)")
            #expect(sketch.size == 3 && sketch.title == "" && sketch.note == nil, "the entity's defaults")
            sketch.title = "Harbour"
            sketch.size = 12
            sketch.note = "ink"
            #expect(sketch.title == "Harbour" && sketch.size == 12 && sketch.note == "ink")
            try context.insert(sketch)
            #expect(sketch.isInserted && sketch.managedObjectContext === context)
            #expect(sketch.awakenedWithTitle == "Harbour", "awakeFromInsert runs after the values were set")
            #expect(sketch.title == "Harbour" && sketch.size == 12 && sketch.note == "ink", "insert(_:) kept them")
            let changed = try sketch.changedValues()
            #expect(Set(changed.keys) == ["title", "size", "note"], "the values set before the insert count as set: \(changed)")
            try context.save()
            return sketch.objectID
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let stored = try #require(try reader.existingObject(with: id) as? Sketch)
            #expect(stored.title == "Harbour" && stored.size == 12 && stored.note == "ink")
        }
    }

    @Test("an object given no value is inserted with the defaults, which awakeFromInsert can change")
    func untouchedObjectGetsTheDefaults() throws {
        let (_, context) = try makeContext(Self.build)
        try context.performAndWait {
            let sketch = Sketch(entity: try Self.sketchEntity(context), insertInto: nil)
            try context.insert(sketch)
            #expect(sketch.awakenedWithTitle == "")
            #expect(sketch.title == "untitled" && sketch.size == 3)
            try context.save()
        }
    }

    @Test("key-value access: attributes read and set, checked as in a context; relationships read empty")
    func keyValueAccessBeforeInsert() throws {
        let (_, context) = try makeContext(Self.build)
        try context.performAndWait {
            let sketch = try Self.sketchEntity(context).managedClass.init(entity: try Self.sketchEntity(context), insertInto: nil)
            #expect(try sketch.value(forKey: "size") as? Int64 == 3)
            try sketch.setValue("Dunes", forKey: "title")
            #expect(try sketch.value(forKey: "title") as? String == "Dunes")
            #expect(try sketch.value(forKey: "easel") == nil)
            #expect((try sketch.value(forKey: "pins") as? Set<ManagedObject>)?.isEmpty == true)

            let wrongType = try #require(throws: ObjectGraphError.self) { try sketch.setValue(Date(), forKey: "title") }
            #expect(wrongType.code == .wrongValueType)
            let tooWide = try #require(throws: ObjectGraphError.self) { try sketch.setValue(Int64(40_000), forKey: "size") }
            #expect(tooWide.code == .wrongValueType, "an integer16 attribute refuses 40,000 here as in a context")
            let unknown = try #require(throws: ObjectGraphError.self) { try sketch.value(forKey: "colour") }
            #expect(unknown.code == .unknownKey)
            #expect(try sketch.value(forKey: "title") as? String == "Dunes", "refused values changed nothing")
        }
    }

    @Test("relationships are set within a context: none is refused before the insert, setting none is allowed")
    func relationshipsWaitForTheInsert() throws {
        let (_, context) = try makeContext(Self.build)
        try context.performAndWait {
            let easel = Easel(context: context)
            let sketch = Sketch(entity: try Self.sketchEntity(context), insertInto: nil)
            #expect(sketch.easel == nil && sketch.pins.isEmpty)
            let refused = try #require(throws: ObjectGraphError.self) { try sketch.setValue(easel, forKey: "easel") }
            #expect(refused.code == .wrongContext)
            #expect(refused.description.contains("not inserted in a context"), "\(refused)")
            let refusedMany = try #require(throws: ObjectGraphError.self) { try sketch.setValue([Pin(context: context)], forKey: "pins") }
            #expect(refusedMany.code == .wrongContext)
            let notAnObject = try #require(throws: ObjectGraphError.self) { try sketch.setValue("easel", forKey: "easel") }
            #expect(notAnObject.code == .wrongValueType)
            try sketch.setValue(nil, forKey: "easel")
            try sketch.setValue([ManagedObject](), forKey: "pins")
            sketch.easel = nil
            sketch.pins = []
            #expect(easel.sketches.isEmpty, "the refused set left the other side alone")

            try context.insert(sketch)
            sketch.easel = easel
            #expect(easel.sketches == [sketch], "once inserted, relationships and inverses work")
            try context.save()
        }
    }

    @Test("a typed relationship setter on an object not inserted stops the process with the reason")
    func typedRelationshipSetterBeforeInsertStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, context) = try makeContext(Self.build)
            try context.performAndWait {
                let easel = Easel(context: context)
                let sketch = Sketch(entity: try Self.sketchEntity(context), insertInto: nil)
                sketch.easel = easel
            }
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("not inserted in a context"), "\(text)")
        #expect(text.contains("easel"), "\(text)")
    }

    @Test("other uses that need a context throw a typed error saying to insert it first")
    func contextOnlyUsesThrow() throws {
        let (_, context) = try makeContext(Self.build)
        let sketch = Sketch(entity: try Self.sketchEntity(context), insertInto: nil)
        let error = try #require(throws: ObjectGraphError.self) { try sketch.changedValues() }
        #expect(error.code == .objectInaccessible)
        #expect(error.description.contains("not inserted in a context; insert(_:) it"), "\(error)")
    }

    @Test("an initializer override's values are kept by an insert and never replace a fault's stored ones")
    func initializerOverrideValues() throws {
        let (container, context) = try makeContext(Self.build)
        let later = Date(timeIntervalSinceReferenceDate: 9 * 86_400)
        let id = try context.performAndWait {
            let ledger = try context.insert(Ledger.self)
            #expect(ledger.opened == Ledger.firstDay, "the override's value survived the insert")
            ledger.owner = "Ada"
            ledger.opened = later
            try context.save()
            return ledger.objectID
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let fetched = try reader.fetch(FetchRequest<Ledger>())
            #expect(fetched.count == 1)
            let ledger = try #require(fetched.first)
            #expect(ledger.isFault, "made through the override, it is still a fault")
            #expect(ledger.opened == later, "the store's value, not the override's")
            let same = try #require(try reader.existingObject(with: id) as? Ledger)
            #expect(same === ledger && same.owner == "Ada")
            // A #Predicate reads the properties of a prototype made through the override.
            let matched = try reader.fetch(FetchRequest<Ledger>(predicate: #Predicate<Ledger> { $0.owner == "Ada" }))
            #expect(matched.map(\.objectID) == [id])
        }
    }

    @Test("a merge policy resolving a uniqueness conflict of the insert takes the values set before it")
    func uniquenessMergeTakesValuesSetBeforeInsert() throws {
        let (container, context) = try makeContext(Self.build)
        try context.performAndWait {
            let badge = try context.insertObject(entityName: "Badge")
            try badge.setValue("a", forKey: "code")
            try badge.setValue("Old", forKey: "holder")
            try context.save()
        }
        let other = container.newBackgroundContext()
        try other.performAndWait {
            other.mergePolicy = .objectTrumps
            let entity = try #require(other.model.entity(named: "Badge"))
            let badge = ManagedObject(entity: entity, insertInto: nil)
            try badge.setValue("a", forKey: "code")
            try badge.setValue("New", forKey: "holder")
            try other.insert(badge)
            try other.save()
        }
        let reader = container.newBackgroundContext()
        let holders = try reader.performAndWait {
            try reader.fetch(FetchRequest<ManagedObject>(entityName: "Badge")).map { try $0.value(forKey: "holder") as? String }
        }
        #expect(holders == ["New"], "one row, updated with the value set before the insert")
    }

    @Test("an insert rolled back after a reset keeps its values and is inserted again; one with a permanent ID is refused")
    func rolledBackAfterResetOrPermanentID() throws {
        let (container, context) = try makeContext(Self.build)
        try context.performAndWait {
            let reset = Sketch(context: context)
            context.reset()
            try context.insert(reset)
            reset.title = "After reset"
            context.rollback()

            let obtained = Sketch(context: context)
            try context.obtainPermanentIDs(for: [obtained])
            let permanent = obtained.objectID
            #expect(!permanent.isTemporary)
            context.rollback()
            // A permanent ID may name a row (a save that failed midway landed it in one store):
            // it is not inserted again, rather than risk a second row.
            let refused = try #require(throws: ObjectGraphError.self) { try context.insert(obtained) }
            #expect(refused.code == .objectInaccessible)
            #expect(!obtained.isInserted && obtained.objectID == permanent)

            try context.insert(reset)
            #expect(reset.title == "After reset", "the rollback did not take it for an object let go by the reset")
            try context.save()
        }
        let reader = container.newBackgroundContext()
        let titles = try reader.performAndWait { try reader.fetch(FetchRequest<Sketch>()).map(\.title).sorted() }
        #expect(titles == ["After reset"])
    }

    /// Found by review: with no temporary-ID condition, an object whose row one store had
    /// saved before another store refused its part of the save was taken for never inserted
    /// after the rollback, and inserting it again stored a second row.
    @Test("an insert rolled back after a save that failed midway, its row saved in one store, is refused, not stored twice")
    func rolledBackAfterAPartialSave() throws {
        let (container, noteID) = try SeveralStoresSaveTests.containerWithASavedNote()
        let mine = container.newBackgroundContext()
        let author = try mine.performAndWait {
            try mine.existingObject(with: noteID).setValue("mine", forKey: "text")
            let author = try mine.insertObject(entityName: "Author")
            try author.setValue("Ursula", forKey: "name")
            return author
        }
        let other = container.newBackgroundContext()
        try other.performAndWait {
            try other.existingObject(with: noteID).setValue("theirs", forKey: "text")
            try other.save()
        }
        try mine.performAndWait {
            #expect(throws: MergeConflictError.self) { try mine.save() }
            mine.rollback()
            let refused = try #require(throws: ObjectGraphError.self) { try mine.insert(author) }
            #expect(refused.code == .objectInaccessible)
        }
        let reader = container.newBackgroundContext()
        let authors = try reader.performAndWait { try reader.count(for: FetchRequest<ManagedObject>(entityName: "Author")) }
        #expect(authors == 1, "one Author row: the one store A saved")
    }

    @Test("an object inserted in a context that is gone is inserted into another with its values")
    func objectOfAContextGone() throws {
        let (container, _) = try makeContext(Self.build)
        var first: ManagedObjectContext? = container.newBackgroundContext()
        let sketch = first!.performAndWait {
            let sketch = Sketch(context: first!)
            sketch.title = "Orphan"
            return sketch
        }
        first = nil
        let second = container.newBackgroundContext()
        try second.performAndWait {
            try second.insert(sketch)
            #expect(second.insertedObjects.contains(sketch), "inserted, not left out without a word")
            #expect(sketch.title == "Orphan")
            try second.save()
        }
        let titles = try second.performAndWait { try second.fetch(FetchRequest<Sketch>()).map(\.title) }
        #expect(titles == ["Orphan"])
    }

    @Test("an insert a rollback discarded holds its values until it is inserted again")
    func rolledBackInsert() throws {
        let (container, context) = try makeContext(Self.build)
        try context.performAndWait {
            let sketch = Sketch(context: context)
            sketch.title = "Draft"
            context.rollback()
            #expect(sketch.managedObjectContext == nil)
            #expect(sketch.title == "Draft")
            sketch.title = "Second draft"
            try context.insert(sketch)
            #expect(sketch.title == "Second draft")
            try context.save()
        }
        let reader = container.newBackgroundContext()
        let titles = try reader.performAndWait { try reader.fetch(FetchRequest<Sketch>()).map(\.title) }
        #expect(titles == ["Second draft"])
    }
}
