import Foundation
import ObjectGraph

/// What changed in the current event (`changedValuesForCurrentEvent()`) as against since the
/// save (`changedValues()`), and `hasPersistentChangedValues`.
extension ContextScenarios {
    static let changeEvents: [ConformanceScenario] = [
        ConformanceScenario("context.changedValuesForCurrentEvent.sinceProcessPendingChanges") { env in
            let id = try env.seed { setup in
                let ann = Student(context: setup); ann.name = "Ann"; ann.age = 20
                return [ann]
            }[0]
            let context = env.newContext()
            try context.performAndWait {
                let ann = try context.existingObject(with: id) as! Student
                try checkEqual(try ann.changedValuesForCurrentEvent().count, 0, "nothing changed yet")
                ann.name = "Anna"
                try checkEqual(Set(try ann.changedValuesForCurrentEvent().keys), ["name"], "the first event's change")
                try checkEqual(try ann.changedValuesForCurrentEvent()["name"] as? String, "Anna", "with its new value")
                try context.processPendingChanges()
                try checkEqual(try ann.changedValuesForCurrentEvent().count, 0, "a new event has no changes yet")
                try checkEqual(Set(try ann.changedValues().keys), ["name"], "though the object has unsaved ones")
                ann.age = 21
                ann.name = "Annie"
                try checkEqual(Set(try ann.changedValuesForCurrentEvent().keys), ["age", "name"], "this event's changes")
                ann.age = 20
                try checkEqual(Set(try ann.changedValuesForCurrentEvent().keys), ["name"], "a value set back to what the event began with is no change of it")
                try checkEqual(try ann.changedValuesForCurrentEvent()["name"] as? String, "Annie", "the latest value")
                try context.processPendingChanges()
                ann.name = "Ann"
                try checkEqual(try ann.changedValues().count, 0, "back to the saved name: no change since the save")
                try checkEqual(Set(try ann.changedValuesForCurrentEvent().keys), ["name"], "but a change in this event")
                try context.processPendingChanges()

                let bob = Student(context: context)
                bob.name = "Bob"
                try checkEqual(Set(try bob.changedValuesForCurrentEvent().keys), ["name"], "an object inserted in this event: what it was given")
                try context.processPendingChanges()
                bob.age = 5
                try checkEqual(Set(try bob.changedValuesForCurrentEvent().keys), ["age"], "inserted earlier: only this event's change")
                try checkEqual(Set(try bob.changedValues().keys), ["age", "name"], "changedValues has both")
                try context.save()
                try checkEqual(try bob.changedValuesForCurrentEvent().count, 0, "nothing after a save")
                try checkEqual(try ann.changedValuesForCurrentEvent().count, 0, "nothing after a save")
            }
        },
        ConformanceScenario("context.changedValuesForCurrentEvent.relationshipsAndTransients") { env in
            let context = env.newContext()
            try context.performAndWait {
                let chat = Chat(context: context); chat.title = "Lunch"
                let first = Message(context: context); first.text = "hi"; first.chat = chat
                let values = try context.insertObject(entityName: "AllTypes")
                try values.setValue("kept", forKey: "string")
                try context.save()
                let second = Message(context: context); second.text = "noodles?"
                try context.processPendingChanges()
                second.chat = chat
                try checkEqual(Set(try chat.changedValuesForCurrentEvent().keys), ["messages"], "a member added through the inverse")
                try checkEqual(Set(try second.changedValuesForCurrentEvent().keys), ["chat"], "the to-one set in this event")
                try check(try first.changedValuesForCurrentEvent().isEmpty, "an untouched member")
                try context.processPendingChanges()
                try check(try chat.changedValuesForCurrentEvent().isEmpty, "the next event: nothing yet")
                chat.title = "Dinner"
                try checkEqual(Set(try chat.changedValuesForCurrentEvent().keys), ["title"], "the members' earlier change is not this event's")
                try values.setValue("draft", forKey: "scratch")
                try check(values.isUpdated, "a transient change updates the object")
                try check(try values.changedValuesForCurrentEvent().isEmpty, "but is no persistent change of the event")
            }
        },
        ConformanceScenario("context.hasPersistentChangedValues.storedPropertiesOnly") { env in
            let context = env.newContext()
            try context.performAndWait {
                let values = try context.insertObject(entityName: "AllTypes")
                try values.setValue("kept", forKey: "string")
                try check(values.hasPersistentChangedValues, "an inserted object's stored attribute")
                try context.save()
                try check(!values.hasPersistentChangedValues, "nothing after the save")
                try values.setValue("draft", forKey: "scratch")
                try check(values.isUpdated && !values.hasPersistentChangedValues, "a transient change alone is not persistent")
                try values.setValue("other", forKey: "string")
                try check(values.hasPersistentChangedValues, "a stored attribute changed")
                try values.setValue("kept", forKey: "string")
                try check(!values.hasPersistentChangedValues, "set back to the saved value")
                let chat = Chat(context: context)
                try context.save()
                context.refresh(chat, mergeChanges: false)
                let message = Message(context: context); message.text = "hi"
                message.chat = chat
                try check(chat.isFault && chat.hasPersistentChangedValues, "a fault with a member added through the inverse")
            }
        },
        ConformanceScenario("context.changedValuesForCurrentEvent.undoPuttingBackTheSavedValue") { env in
            // An undo in this event of an earlier event's change puts the saved value back: no
            // change since the save, but a change in this event (to the value and the to-one,
            // and through the inverse to the class's members).
            let ids = try env.seed { setup in
                let math = SchoolClass(context: setup); math.title = "Math"
                let ann = Student(context: setup); ann.name = "Ann"
                return [ann, math]
            }
            let context = env.newContext()
            context.undoStack = ContextUndoStack()
            try context.performAndWait {
                let ann = try context.existingObject(with: ids[0]) as! Student
                let math = try context.existingObject(with: ids[1]) as! SchoolClass
                ann.name = "Anna"
                ann.schoolClass = math
                try context.processPendingChanges()
                try context.undo()
                try checkEqual(ann.name, "Ann", "undone to the saved name")
                try check(try ann.changedValues().isEmpty && !ann.hasPersistentChangedValues, "nothing changed since the save")
                try checkEqual(Set(try ann.changedValuesForCurrentEvent().keys), ["name", "schoolClass"], "but the undo changed both in this event")
                try checkEqual(Set(try math.changedValuesForCurrentEvent().keys), ["students"], "and the inverse side's members")
                try context.processPendingChanges()
                try check(try ann.changedValuesForCurrentEvent().isEmpty, "the next event: nothing yet")
                try context.redo()
                try checkEqual(Set(try ann.changedValuesForCurrentEvent().keys), ["name", "schoolClass"], "a redo changes both again")
            }
        },
    ]
}
