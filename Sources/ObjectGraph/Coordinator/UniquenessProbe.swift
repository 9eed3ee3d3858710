/// The store request that finds rows sharing a uniqueness constraint's values, shared by the
/// context's validation and the coordinator's check under its write lock.
///
/// **Threading contract.** A value type of pure functions; safe from any thread.
struct UniquenessProbe {
    /// The constraint's attributes, in the constraint's order.
    let attributes: [AttributeDescription]
    /// Their values in the row checked.
    let values: [AttributeValue]
    /// The request for the stored rows with those values (the widest entity that has every
    /// constrained attribute: a constraint of a parent covers its sub-entities' rows).
    let request: StoreFetchRequest
    /// "email" or "first,last".
    let key: String

    /// The probe for `constraint` of `entity` with the row values `values` (by slot); `nil` when
    /// a value is nil — as in SQL, nil never collides: only complete value sets are constrained.
    init?(_ constraint: [String], of entity: EntityDescription, values rowValues: (Int) -> AttributeValue, in model: ManagedObjectModel) {
        let attributes = constraint.compactMap { entity.attribute(named: $0) }
        let values = attributes.map { rowValues($0.slot) }
        if values.contains(where: \.isNull) { return nil }
        let widest = model.entity(named: entity.rootName).flatMap { root in
            attributes.allSatisfy { root.attribute(named: $0.name) != nil } ? root : nil
        } ?? entity
        let predicate = FetchPredicate.and(zip(attributes, values).map { attribute, value in
            .comparison(PredicateComparison(.keyPath(attribute.name), .equal, .constant(value)))
        })
        self.attributes = attributes
        self.values = values
        self.request = StoreFetchRequest(entity: widest, predicate: predicate)
        self.key = constraint.joined(separator: ",")
    }

    /// "email = a@b" for messages.
    var valuesDescription: String {
        "\(attributes.map(\.name).joined(separator: ", ")) = \(values.map(\.description).joined(separator: ", "))"
    }
}
