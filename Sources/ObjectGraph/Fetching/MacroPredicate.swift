import Foundation

// Foundation's `#Predicate` on typed ManagedObject subclasses, translated to FetchPredicate.
// The public entry points are here; the node-by-node translation is in
// MacroPredicate+Expressions.swift and the translator's helpers in MacroPredicateTranslator.swift.

extension FetchPredicate {
    /// Translates a Foundation `#Predicate` over a typed ``ManagedObject`` subclass into the
    /// equivalent fetch predicate, for SwiftData habits next to format strings:
    ///
    /// ```swift
    /// let p = try FetchPredicate(#Predicate<Student> { $0.age! > 30 && $0.name.starts(with: "A") }, model: model)
    /// // p == try FetchPredicate(format: "age > 30 AND name BEGINSWITH 'A'")
    /// let q = try FetchPredicate(#Predicate<Message> { $0.chat?.title.contains("x") ?? false }, model: model)
    /// // q == try FetchPredicate(format: "chat != nil AND chat.title CONTAINS 'x'")
    /// ```
    ///
    /// Supported: `==` `!=` `<` `<=` `>` `>=` between key paths and captured values; `&&` `||`
    /// `!`; `? :` on conditions; optional chaining (`$0.chat?.title`), `!` and `??` on stored
    /// values and conditions (`$0.nickname?.contains("x") ?? false`, `== true`), `?? true` or
    /// `?? false` on an optional Boolean used as a condition, `($0.nickname ?? "").isEmpty`;
    /// a Boolean attribute compared with a condition (`$0.active == ($0.rating > 4)`);
    /// `starts(with:)` (BEGINSWITH), `contains(_:)` on a string (CONTAINS);
    /// `[values].contains($0.key)` (IN); `(low...high).contains($0.key)` (BETWEEN) and
    /// `low..<high`; `contains(where:)` (ANY, or a SUBQUERY for a compound test),
    /// `allSatisfy` (ALL, or a SUBQUERY); `.count` and `.isEmpty` of to-many relationships
    /// (`@count`), also after `filter` (`SUBQUERY(…).@count`); `objectID` against a captured
    /// ``ObjectID`` (`$0.chat?.objectID == chatID`, the `persistentModelID` idiom); and any
    /// sub-expression that does not read the object (`limit + 1`, `range.lowerBound`), which
    /// is evaluated once here. Captured values become constants: numbers, strings, dates,
    /// data, UUIDs, URLs, decimals, transformable values, ``ObjectID``s, and arrays of them.
    ///
    /// Not expressible in Foundation's `#Predicate` on Linux: case- or diacritic-insensitive
    /// comparison (`localizedStandardContains`, `caseInsensitiveCompare` exist only in
    /// Darwin's Foundation), so there is no way to reach `[c]`/`[d]`; and `hasSuffix`. Not
    /// translatable (throws): arithmetic, casts, subscripts, regular expressions, `min()`/`max()`
    /// on key paths, and computed properties that are not `@Attribute`/`@Relationship`.
    ///
    /// Key paths are resolved by reading them, twice, from a context-less prototype object of
    /// the entity and recording which `@Attribute`/`@Relationship` accessor answered; a
    /// class's own computed properties (even one returning a stored value transformed) are
    /// refused rather than guessed. The prototype is created with the class's
    /// `init(entity:insertInto:)` and no context, so that initializer must not touch
    /// properties. `nil` handling follows Swift: `($0.age ?? 0) > 30` is false for a missing
    /// age, `($0.age ?? 99) > 30` true.
    /// Every failure is an ``ObjectGraphError`` with code ``ObjectGraphError/Code/invalidFetch``
    /// naming the construct (or ``ObjectGraphError/Code/unknownEntity`` for an unbound class);
    /// the result is also checked against the model as a fetch would check it.
    ///
    /// - Parameters:
    ///   - predicate: the `#Predicate`.
    ///   - model: the model whose entity the predicate filters.
    ///   - entityName: the entity; `nil` for the entity bound to `Object`.
    public init<Object: ManagedObject>(_ predicate: Predicate<Object>, model: ManagedObjectModel, entityName: String? = nil) throws {
        let entity: EntityDescription
        if let entityName {
            entity = try model.requireEntity(entityName)
        } else if let bound = model.entity(for: Object.self) {
            entity = bound
        } else {
            throw ObjectGraphError(.unknownEntity, "#Predicate<\(Object.self)>: \(Object.self) is not bound to an entity of the model; bind it with entity(_:as:) or pass entityName")
        }
        try self.init(predicate, entity: entity, model: model)
    }

    /// Translates `predicate` for objects of `entity`; see ``init(_:model:entityName:)``.
    init<Object: ManagedObject>(_ predicate: Predicate<Object>, entity: EntityDescription, model: ManagedObjectModel) throws {
        let probe = KeyPathProbe(model: model)
        defer { probe.finish() }
        var translator = MacroPredicateTranslator(model: model, probe: probe)
        translator.bind(predicate.variable.key, to: .path(MacroPath(components: [], kind: .object(entity), scope: 0)))
        let result = try translator.predicate(predicate.expression)
        // Refuse what a fetch would refuse (to-many key paths without ANY, type mismatches), now.
        _ = try CompiledPredicate.compile(result, for: entity, in: model)
        self = result
    }
}

extension FetchRequest {
    /// Creates a request filtered by a Foundation `#Predicate`, as SwiftData's `FetchDescriptor`:
    ///
    /// ```swift
    /// let request = FetchRequest<Student>(predicate: #Predicate { $0.name.starts(with: "A") })
    /// ```
    ///
    /// The predicate is kept in ``typedPredicate`` and translated when the request runs (see
    /// ``FetchPredicate/init(_:model:entityName:)``); an untranslatable one makes the fetch
    /// throw ``ObjectGraphError/Code/invalidFetch``.
    public init(entityName: String? = nil, predicate: Predicate<Result>, sortKeys: [SortKey] = []) {
        self.init(entityName: entityName, predicate: nil as FetchPredicate?, sortKeys: sortKeys)
        self.typedPredicate = predicate
    }

    /// The filter a fetch applies: ``predicate`` (with its variables substituted) and the
    /// translated ``typedPredicate``; both must hold when both are set.
    func effectivePredicate(for entity: EntityDescription, in model: ManagedObjectModel) throws -> FetchPredicate? {
        // Without variables, substituting would rebuild the tree to change nothing (a twelfth of
        // a count, perf): a `$VARIABLE` left in it fails compilation with the same error.
        let variables = substitutionVariables
        // (Substituting walks the tree recursively too: its depth is checked first.)
        try predicate?.checkNesting()
        let format = variables.isEmpty ? predicate : try predicate.map { try $0.substituting(variables) }
        guard hasTypedPredicate, let typedPredicate else { return format }
        let translated = try FetchPredicate(typedPredicate, entity: entity, model: model)
        return format.map { $0 && translated } ?? translated
    }
}
