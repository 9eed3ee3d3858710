import Foundation
import ObjectGraph
import ObjectGraphConformance

/// How a ``GraphDifferentialRun`` writes a graph down: one line per object, by entity and
/// label, with every stored attribute and every relationship (members by label; an ordered
/// relationship's in its order) — text that two backends holding the same graph write alike.
extension GraphDifferentialRun {
    /// The graph `context` sees, and every relationship that disagrees with its inverse.
    func dump(_ context: ManagedObjectContext) throws -> (lines: [String], problems: [String]) {
        var lines: [String] = []
        var problems: [String] = []
        for kind in Self.kinds {
            for object in try objects(kind.entity, in: context) {
                let name = "\(kind.entity) \(label(of: object))"
                var parts = [name]
                for attribute in object.entity.attributes where !attribute.isTransient && attribute.name != kind.label {
                    parts.append("\(attribute.name)=\(Self.render(try object.value(forKey: attribute.name)))")
                }
                for relationship in object.entity.relationships where !relationship.isTransient {
                    let destinations: [ManagedObject]
                    if relationship.isToMany {
                        destinations = try members(object, relationship.name).filter { !isDangling($0) }
                        parts.append("\(relationship.name)=[\(destinations.map { label(of: $0) }.joined(separator: ","))]")
                    } else {
                        let destination = (try object.value(forKey: relationship.name) as? ManagedObject).flatMap { isDangling($0) ? nil : $0 }
                        destinations = destination.map { [$0] } ?? []
                        parts.append("\(relationship.name)=\(destination.map { label(of: $0) } ?? "-")")
                    }
                    guard let inverse = relationship.inverseName else { continue }
                    for destination in destinations {
                        let back: [ManagedObject] = relationship.inverseIsToMany
                            ? try members(destination, inverse)
                            : [try destination.value(forKey: inverse) as? ManagedObject].compactMap { $0 }
                        if !back.contains(where: { $0 === object }) {
                            problems.append("\(name).\(relationship.name) holds \(label(of: destination)), whose \(inverse) does not hold it back")
                        }
                    }
                }
                lines.append(parts.joined(separator: " "))
            }
        }
        return (lines, problems)
    }

    /// Whether `destination` is a deleted object still referenced: a no-action rule leaves
    /// such references in the store (as in Core Data), while a context that merges the
    /// deletion clears its own (documented at `mergeChanges(fromContextDidSave:)`), so the
    /// dump counts them as no reference at all.
    func isDangling(_ destination: ManagedObject) -> Bool {
        // Read first: reading fires the fault that finds a missing record deleted.
        _ = label(of: destination)
        return destination.managedObjectContext == nil || destination.isDeleted
    }

    /// A value as the dump writes it: exact (bytes in hex, dates by interval, strings escaped),
    /// and never through `Date.description`, which traps on a NaN date on Linux.
    static func render(_ value: Any?) -> String {
        guard let value else { return "nil" }
        switch value {
        case let double as Double: return double.isNaN ? "nan" : "\(double)"
        case let float as Float: return float.isNaN ? "nanf" : "\(float)f"
        case let date as Date: return "date(\(date.timeIntervalSinceReferenceDate))"
        case let data as Data: return "data(\(data.map { String($0, radix: 16) }.joined(separator: ".")))"
        case let url as URL: return "url(\(url.absoluteString))"
        case let uuid as UUID: return "uuid(\(uuid.uuidString))"
        case let decimal as Decimal: return "decimal(\(decimal))"
        case let string as String: return "\"" + string.unicodeScalars.map { $0.escaped(asASCII: true) }.joined() + "\""
        case let object as ManagedObject: return "object(\(object.entity.name))"
        default: return "\(type(of: value))(\(value))"
        }
    }
}
