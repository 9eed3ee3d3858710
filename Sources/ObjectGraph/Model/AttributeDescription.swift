import Foundation

/// One attribute of an entity: its name, type, optionality, default, rules and flags.
///
/// Descriptions are immutable and `Sendable`; they are created by the model builder.
/// `slot` is the attribute's position in its entity's ``EntityDescription/attributes`` and in
/// every ``RowSnapshot`` of that entity; sub-entities keep inherited attributes at the same slot.
public final class AttributeDescription: Sendable, CustomStringConvertible {
    /// The attribute's name.
    public let name: String
    /// The storage type.
    public let type: AttributeType
    /// Whether `nil` is allowed at save (validation code 1570 when it is not).
    public let isOptional: Bool
    /// The value a newly inserted object starts with (`.null` when none was given).
    public let defaultValue: AttributeValue
    /// Rules the value must meet at save.
    public let rules: [ValidationRule]
    /// Transient attributes live in objects only; stores neither write nor read them.
    public let isTransient: Bool
    /// Whether stores should index this attribute for fetching.
    public let isIndexed: Bool
    /// For transformable attributes: how the value becomes bytes.
    public let transformer: AttributeTransformer?
    /// Position within the entity's attributes and row snapshots.
    public let slot: Int
    /// The entity that declares the attribute (a super-entity for inherited ones).
    public let entityName: String
    let patterns: [CompiledPattern]

    init(spec: AttributeSpec, slot: Int, entityName: String) throws {
        self.name = spec.name
        self.type = spec.type
        self.isOptional = spec.isOptional
        self.rules = spec.rules
        self.isTransient = spec.isTransient
        self.isIndexed = spec.isIndexed
        self.transformer = spec.transformer
        self.slot = slot
        self.entityName = entityName
        var patterns: [CompiledPattern] = []
        for rule in spec.rules {
            guard rule.applies(to: spec.type) else {
                throw ModelError(
                    .invalidRule, entity: entityName, property: spec.name,
                    "rule '\(rule)' does not apply to a \(spec.type.rawValue) attribute")
            }
            if case .pattern(let p) = rule {
                do { patterns.append(try CompiledPattern(p)) } catch {
                    throw ModelError(
                        .invalidRule, entity: entityName, property: spec.name,
                        "'\(p)' is not a valid regular expression")
                }
            }
        }
        self.patterns = patterns
        if let contradiction = ValidationRule.contradiction(in: spec.rules) {
            throw ModelError(.invalidRule, entity: entityName, property: spec.name, contradiction)
        }
        // Stores index only what they hold (a transient's index was silently dropped).
        if spec.isIndexed && spec.isTransient {
            throw ModelError(
                .invalidConstraint, entity: entityName, property: spec.name,
                "a transient attribute cannot be indexed: no store holds its values")
        }
        if spec.type == .transformable && spec.transformer == nil {
            throw ModelError(
                .invalidRule, entity: entityName, property: spec.name,
                "a transformable attribute needs a transformer (use .transformable(name, Type.self))")
        }
        // The default goes through the same conversion as any value set by a user, so a
        // default of the wrong type is a model error rather than a surprise at save.
        if let raw = spec.defaultValue {
            do {
                let converted = try Self.convert(raw, type: spec.type, transformer: spec.transformer, name: spec.name, entity: entityName)
                self.defaultValue = converted
            } catch let error as ObjectGraphError {
                throw ModelError(.invalidDefault, entity: entityName, property: spec.name, error.message)
            }
            // Such a default fails every new object's save until it is replaced.
            var patternIndex = 0
            for rule in spec.rules {
                var pattern: CompiledPattern?
                if case .pattern = rule { pattern = patterns[patternIndex]; patternIndex += 1 }
                guard rule.admits(defaultValue, pattern: pattern) else {
                    throw ModelError(
                        .invalidDefault, entity: entityName, property: spec.name,
                        "the default \(defaultValue) breaks the attribute's rule '\(rule)'")
                }
            }
        } else {
            self.defaultValue = .null
        }
    }

    /// "Entity.name (type)".
    public var description: String { "\(entityName).\(name) (\(type.rawValue))" }

    /// Converts a Swift value given by a user into this attribute's stored form.
    ///
    /// Integers are range-checked for their width; integers are accepted for floating-point
    /// and decimal attributes; `nil` becomes `.null`. Anything else of the wrong type throws
    /// ``ObjectGraphError/Code/wrongValueType`` naming the attribute.
    public func convert(_ value: Any?) throws -> AttributeValue {
        try Self.convert(value, type: type, transformer: transformer, name: name, entity: entityName)
    }

    /// Converts a stored value into the Swift value users see (transformables decoded).
    public func userValue(_ value: AttributeValue) throws -> Any? {
        if type == .transformable, case .data(let data) = value, let transformer {
            do { return try transformer.decodeValue(data) } catch {
                throw ObjectGraphError(
                    .wrongValueType, key: name,
                    "\(entityName).\(name): stored bytes do not decode as \(transformer.valueTypeName): \(error)")
            }
        }
        return value.anyValue
    }

    /// A refused value as an error message shows it: its type, and the value itself only when
    /// it is a scalar. Foundation's `Date.description` traps on a NaN date on Linux, also
    /// inside a collection or a struct, so interpolating any value the user passed could stop
    /// the process while reporting that it was refused; a date is shown by its interval.
    static func shown(_ value: Any) -> String {
        switch value {
        case let date as Date: return "Date \(date.timeIntervalSinceReferenceDate) s after the reference date"
        case is any Numeric, is String, is Substring, is Character, is Bool, is UUID, is URL:
            return "\(Swift.type(of: value)) \(value)"
        default: return "\(Swift.type(of: value))"
        }
    }

    static func convert(
        _ value: Any?, type: AttributeType, transformer: AttributeTransformer?, name: String, entity: String
    ) throws -> AttributeValue {
        func wrong(_ what: String) -> ObjectGraphError {
            ObjectGraphError(
                .wrongValueType, key: name,
                "\(entity).\(name) is a \(type.rawValue) attribute; got \(what)")
        }
        guard let value = value else { return .null }
        if case Optional<Any>.none = value as Any? { return .null }
        if let stored = value as? AttributeValue {
            return try check(stored, type: type, name: name, entity: entity)
        }
        switch type {
        case .integer16, .integer32, .integer64:
            let wide: Int64
            switch value {
            case let v as Int: wide = Int64(v)
            case let v as Int64: wide = v
            case let v as Int32: wide = Int64(v)
            case let v as Int16: wide = Int64(v)
            case let v as Int8: wide = Int64(v)
            case let v as UInt8: wide = Int64(v)
            case let v as UInt16: wide = Int64(v)
            case let v as UInt32: wide = Int64(v)
            case let v as UInt:
                guard let w = Int64(exactly: v) else { throw wrong("\(v), which does not fit") }
                wide = w
            case let v as UInt64:
                guard let w = Int64(exactly: v) else { throw wrong("\(v), which does not fit") }
                wide = w
            default: throw wrong(Self.shown(value))
            }
            return try check(.integer(wide), type: type, name: name, entity: entity)
        case .double, .float:
            switch value {
            case let v as Double: return .double(v)
            case let v as Float: return .double(Double(v))
            case let v as Int: return .double(Double(v))
            case let v as Int64: return .double(Double(v))
            case let v as Int32: return .double(Double(v))
            case let v as Int16: return .double(Double(v))
            default: throw wrong(Self.shown(value))
            }
        case .decimal:
            switch value {
            case let v as Decimal: return .decimal(v)
            case let v as Int: return .decimal(Decimal(v))
            case let v as Int64: return .decimal(Decimal(v))
            case let v as Double:
                // Foundation's conversion traps on an infinity and gives NaN beyond Decimal's
                // range (about 1e165): such a Double has no Decimal to store.
                guard v.isFinite, case let decimal = Decimal(v), !decimal.isNaN else { throw wrong("Double \(v), which no Decimal can hold") }
                return .decimal(decimal)
            default: throw wrong(Self.shown(value))
            }
        case .string:
            if let v = value as? String { return .string(v) }
            if let v = value as? Substring { return .string(String(v)) }
            throw wrong(Self.shown(value))
        case .boolean:
            if let v = value as? Bool { return .bool(v) }
            throw wrong(Self.shown(value))
        case .date:
            if let v = value as? Date { return .date(v) }
            throw wrong(Self.shown(value))
        case .binaryData:
            if let v = value as? Data { return .data(v) }
            if let v = value as? [UInt8] { return .data(Data(v)) }
            throw wrong("\(Swift.type(of: value))")
        case .uuid:
            if let v = value as? UUID { return .uuid(v) }
            throw wrong(Self.shown(value))
        case .uri:
            if let v = value as? URL { return .uri(v) }
            throw wrong(Self.shown(value))
        case .transformable:
            guard let transformer else { throw wrong("a value, but the attribute has no transformer") }
            // The value is encoded first, so a transformable of `Data` stores its value's
            // encoding like any other type's (its bytes were kept as they were, and every read
            // then failed to decode them).
            let encoded: Data?
            do { encoded = try transformer.encodeValue(value) } catch {
                throw ObjectGraphError(
                    .wrongValueType, key: name,
                    "\(entity).\(name): \(transformer.valueTypeName) value failed to encode: \(error)",
                    underlying: error)
            }
            if let encoded { return .data(encoded) }
            // Bytes already in the transformer's encoding are kept; any other bytes are refused
            // here, not stored to fail every read (a typed read stopped the process).
            if let data = value as? Data {
                guard (try? transformer.decodeValue(data)) != nil else {
                    throw wrong("\(data.count) bytes that do not decode as \(transformer.valueTypeName)")
                }
                return .data(data)
            }
            throw wrong("\(Swift.type(of: value)), expected \(transformer.valueTypeName)")
        }
    }

    /// Checks that an already-wrapped value has the kind this attribute stores.
    public func check(_ value: AttributeValue) throws -> AttributeValue {
        try Self.check(value, type: type, name: name, entity: entityName)
    }

    /// ``check(_:)``, except that with `lenient` an integer outside the attribute's width is
    /// kept as it is, for validation to report at save (a thrown error) where a typed setter,
    /// which cannot throw, would otherwise stop the process.
    @inline(__always)
    func check(_ value: AttributeValue, lenient: Bool) throws -> AttributeValue {
        // (An integer for an integer attribute is all `check` could refuse for its width, and
        // one in range comes back unchanged.)
        if lenient, case .integer = value, type.integerRange != nil { return value }
        return try check(value)
    }

    static func check(_ value: AttributeValue, type: AttributeType, name: String, entity: String) throws -> AttributeValue {
        let ok: Bool
        var result = value
        switch (type, value) {
        case (_, .null): ok = true
        case (.integer16, .integer(let v)), (.integer32, .integer(let v)), (.integer64, .integer(let v)):
            ok = type.integerRange!.contains(v)
            if !ok {
                throw ObjectGraphError(
                    .wrongValueType, key: name,
                    "\(entity).\(name) is a \(type.rawValue) attribute; \(v) does not fit")
            }
        case (.double, .double), (.float, .double), (.decimal, .decimal), (.string, .string),
            (.boolean, .bool), (.date, .date), (.binaryData, .data), (.uuid, .uuid), (.uri, .uri),
            (.transformable, .data):
            ok = true
        case (.double, .integer(let v)), (.float, .integer(let v)):
            result = .double(Double(v)); ok = true
        case (.decimal, .integer(let v)):
            result = .decimal(Decimal(v)); ok = true
        default: ok = false
        }
        guard ok else {
            throw ObjectGraphError(
                .wrongValueType, key: name,
                "\(entity).\(name) is a \(type.rawValue) attribute; got a \(value.kindName) value \(value)")
        }
        return result
    }
}
