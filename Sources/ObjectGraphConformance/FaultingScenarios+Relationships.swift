import Foundation
import ObjectGraph
import OrderedCollections

/// Looking at relationships without firing faults: `hasFault(forRelationshipNamed:)` and
/// `objectIDs(forRelationshipNamed:)`.
extension FaultingScenarios {
    static let relationships: [ConformanceScenario] = [
        ConformanceScenario("faulting.objectIDsForRelationshipFiresNoFault") { env in
            let setup = env.newContext()
            let (chatID, messageIDs) = try setup.performAndWait {
                let chat = Chat(context: setup); chat.title = "Lunch"
                let messages = (0..<3).map { index in
                    let message = Message(context: setup); message.text = "m\(index)"; message.chat = chat
                    return message
                }
                try setup.save()
                return (chat.objectID, Set(messages.map(\.objectID)))
            }
            let context = env.newContext()
            try context.performAndWait {
                let chat = try context.existingObject(with: chatID) as! Chat
                try check(try chat.hasFault(forRelationshipNamed: "messages"), "a fetched object's to-many is a fault")
                context.resetStatistics()
                try checkEqual(Set(try chat.objectIDs(forRelationshipNamed: "messages")), messageIDs, "the members' IDs")
                try check(try chat.hasFault(forRelationshipNamed: "messages"), "still a fault afterwards")
                try checkEqual(context.statistics.relationshipFaultsFired, 0, "no relationship fault fired")
                try check(messageIDs.allSatisfy { context.registeredObject(for: $0) == nil }, "no member was made into an object")
                let added = Message(context: context); added.text = "late"
                added.chat = chat
                try checkEqual(Set(try chat.objectIDs(forRelationshipNamed: "messages")), messageIDs.union([added.objectID]), "an unsaved member counts")
                try check(try chat.hasFault(forRelationshipNamed: "messages"), "recorded through the inverse, the relationship is still a fault")
                _ = chat.messages
                try check(!(try chat.hasFault(forRelationshipNamed: "messages")), "read, it is no longer a fault")
                try checkEqual(Set(try chat.objectIDs(forRelationshipNamed: "messages")), messageIDs.union([added.objectID]), "the same IDs once loaded")
            }
            let other = env.newContext()
            try other.performAndWait {
                let message = other.object(with: messageIDs.first!) as! Message
                try check(try message.hasFault(forRelationshipNamed: "chat"), "a fault's to-one is a fault")
                try checkEqual(try message.objectIDs(forRelationshipNamed: "chat"), [chatID], "its destination's ID")
                try check(other.registeredObject(for: chatID) == nil, "the destination was not made into an object")
                let chat = message.chat!
                try check(try message.hasFault(forRelationshipNamed: "chat"), "a to-one whose destination is a fault is a fault")
                _ = chat.title
                try check(!(try message.hasFault(forRelationshipNamed: "chat")), "once its destination is loaded it is not")
                let lone = Message(context: other); lone.text = "alone"
                try check(!(try lone.hasFault(forRelationshipNamed: "chat")), "an empty to-one is no fault")
                try checkEqual(try lone.objectIDs(forRelationshipNamed: "chat"), [], "and holds no ID")
            }
        },
        ConformanceScenario("faulting.objectIDsForRelationshipKeepsOrder") { env in
            let setup = env.newContext()
            let (playlistID, order) = try setup.performAndWait {
                let playlist = Playlist(context: setup); playlist.name = "Road"
                for title in ["c", "a", "b"] {
                    let track = Track(context: setup); track.title = title
                    playlist.$tracks.add(track)
                }
                try setup.save()
                return (playlist.objectID, playlist.tracks.map(\.objectID))
            }
            let context = env.newContext()
            try context.performAndWait {
                let playlist = try context.existingObject(with: playlistID) as! Playlist
                try checkEqual(try playlist.objectIDs(forRelationshipNamed: "tracks"), order, "an ordered relationship's IDs in order")
                try check(try playlist.hasFault(forRelationshipNamed: "tracks"), "without loading it")
            }
        },
        ConformanceScenario("faulting.relationshipFaultQueriesRefuseUnknownNames") { env in
            let context = env.newContext()
            try context.performAndWait {
                let chat = Chat(context: context)
                for name in ["nope", "title"] {
                    let error = try checkThrows(ObjectGraphError.self, "objectIDs(forRelationshipNamed: \(name))") {
                        _ = try chat.objectIDs(forRelationshipNamed: name)
                    }
                    try checkEqual(error.code, .unknownKey, "the code for '\(name)'")
                    try checkEqual(error.key, name, "the key named")
                    let faultError = try checkThrows(ObjectGraphError.self, "hasFault(forRelationshipNamed: \(name))") {
                        _ = try chat.hasFault(forRelationshipNamed: name)
                    }
                    try checkEqual(faultError.code, .unknownKey, "the code for '\(name)'")
                }
            }
        },
    ]
}
